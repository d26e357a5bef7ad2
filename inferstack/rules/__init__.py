"""Synth-time rules: each a small named check over the validated config, run before any CDK construct exists.

``evaluate(config)`` runs every rule and applies the config's acknowledgements; ``enforce(config)`` raises
:class:`RuleViolationError` if an unacknowledged error remains.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from inferstack.config.kinds import KINDS, generation
from inferstack.config.model import InferstackConfig
from inferstack.plan.context import with_context_defaults
from inferstack.rules import (
    ami,
    autoscaling,
    bench,
    bottlerocket,
    caches,
    checklist,
    efa,
    eks_endpoint,
    eks_logging,
    gateway_clients,
    images,
    karpenter_limits,
    karpenter_nodes,
    kv_events,
    model_context,
    node_daemons,
    placement,
    placement_zone,
    pod_ports,
    prefix_overlap,
    resources,
    routing,
    secrets,
    storage,
)
from inferstack.rules.base import Finding, Rule, Severity

#: Rules of the platform and of every kind of workload.
PLATFORM_RULES: tuple[Rule, ...] = (
    eks_endpoint.RULE,
    eks_logging.RULE,
    *efa.RULES,
    placement.RULE,
    placement_zone.RULE,
    ami.RULE,
    *bottlerocket.RULES,
    node_daemons.RULE,
    karpenter_limits.RULE,
    resources.RULE,
    *karpenter_nodes.RULES,
    *storage.RULES,
    *autoscaling.RULES,
    secrets.RULE,
    *bench.RULES,
    *checklist.RULES,
    *images.RULES,
    *model_context.RULES,
    *prefix_overlap.RULES,
    *gateway_clients.RULES,
    pod_ports.RULE,
    kv_events.RULE,
    *caches.RULES,
    *routing.RULES,
)
_loaded: dict[int, tuple[Rule, ...]] = {}


def all_rules() -> tuple[Rule, ...]:
    """The platform rules, then each registered kind's rules (each rule once, in registry order)."""
    cached = _loaded.get(generation())
    if cached is not None:
        return cached
    rules: dict[int, Rule] = {id(rule): rule for rule in PLATFORM_RULES}
    for kind in KINDS.values():
        for group in kind.rules:
            for rule in group:
                rules.setdefault(id(rule), rule)
    _loaded.clear()
    _loaded[generation()] = tuple(rules.values())
    return _loaded[generation()]


def __getattr__(name: str) -> tuple[Rule, ...]:
    """``RULES``: :func:`all_rules` now — the platform's and every registered kind's (the kinds register after this
    module is imported, by :mod:`inferstack.kinds`)."""
    if name == "RULES":
        return all_rules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class RuleReport:
    """Findings of one evaluation, split by what happens to them."""

    errors: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    acknowledged: list[tuple[Finding, str]] = field(default_factory=list)


class RuleViolationError(Exception):
    """Unacknowledged rule errors; ``str()`` lists each with its config path and fix."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        lines = [f"{len(findings)} rule violation{'s' if len(findings) != 1 else ''}:"]
        lines += [f"  - {f}" for f in findings]
        super().__init__("\n".join(lines))


def evaluate(config: InferstackConfig, rules: tuple[Rule, ...] | None = None) -> RuleReport:
    """Run ``rules`` (default: :func:`all_rules`) over ``config`` — with the defaults the plan fills in
    (``max_model_len``: :func:`~inferstack.plan.context.with_context_defaults`), so every rule judges the values
    that are rendered — and apply its acknowledgements."""
    config = with_context_defaults(config)
    rules = all_rules() if rules is None else rules
    reasons = {ack.rule: ack.reason for ack in config.acknowledge}
    report = RuleReport()
    known = {rule.id: rule for rule in rules}
    for index, ack in enumerate(config.acknowledge):
        if ack.rule not in known:
            report.errors.append(
                Finding(
                    rule="CONFIG",
                    path=f"acknowledge[{index}].rule",
                    message=f"{ack.rule!r} is not an inferstack rule",
                    fix=f"use one of {', '.join(sorted(r for r, rule in known.items() if rule.acknowledgeable))}",
                )
            )
        elif not known[ack.rule].acknowledgeable:
            report.errors.append(
                Finding(
                    rule="CONFIG",
                    path=f"acknowledge[{index}].rule",
                    message=f"{ack.rule} cannot be acknowledged: the platform cannot be built while it fails",
                    fix=f"fix what {ack.rule} reports and remove this acknowledgement",
                )
            )
    for rule in rules:
        for finding in rule.run(config):
            if finding.rule in reasons and rule.acknowledgeable:
                report.acknowledged.append((finding, reasons[finding.rule]))
            elif finding.severity is Severity.ERROR:
                report.errors.append(finding)
            else:
                report.warnings.append(finding)
    return report


def enforce(config: InferstackConfig) -> RuleReport:
    report = evaluate(config)
    if report.errors:
        raise RuleViolationError(report.errors)
    return report


__all__ = [
    "PLATFORM_RULES",
    "RULES",
    "Finding",
    "Rule",
    "RuleReport",
    "RuleViolationError",
    "Severity",
    "all_rules",
    "enforce",
    "evaluate",
]
