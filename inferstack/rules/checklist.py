"""The production checklist of seed 001 — monitoring and alerting, log aggregation, network isolation — as warnings
when the config turns an item off (requests and limits, probes, PodDisruptionBudgets and priority classes are
always rendered; tests/gates/test_checklist.py holds every example to them)."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.kinds import kind_of
from inferstack.config.model import InferstackConfig
from inferstack.rules.base import Finding, Rule, Severity

MONITORING = "CHECKLIST-MONITORING"
LOGS = "CHECKLIST-LOGS"
NETWORK = "CHECKLIST-NETWORK-POLICY"


def check_monitoring(config: InferstackConfig) -> Iterator[Finding]:
    """A serving workload without monitoring has no metrics, no alerts and no dashboard row (not said of a kind whose
    server exports none: :attr:`~inferstack.config.kinds.WorkloadKind.scrapeable`)."""
    for index, workload in enumerate(config.workloads):
        kind = kind_of(workload)
        if not workload.monitoring and kind.scrapeable:
            alerts = " and alerts" if kind.metrics is not None else ""
            yield Finding(
                rule=MONITORING,
                path=f"workloads[{index}].monitoring",
                message=f"{workload.name} is not scraped: no metrics{alerts} for TTFT, queue depth or KV cache use",
                fix="set monitoring: true, or acknowledge CHECKLIST-MONITORING with the reason",
                severity=Severity.WARNING,
            )


def _switched_off(
    config: InferstackConfig, on: bool, rule: str, path: str, message: str, fix: str
) -> Iterator[Finding]:
    if config.workloads and not on:
        yield Finding(rule=rule, path=path, message=message, fix=fix, severity=Severity.WARNING)


def check_logs(config: InferstackConfig) -> Iterator[Finding]:
    """Container logs that stay on the nodes are lost with them (Karpenter replaces GPU nodes)."""
    yield from _switched_off(
        config,
        config.observability.log_shipping,
        LOGS,
        "observability.log_shipping",
        "container logs stay on the nodes: a replaced or consolidated node takes them with it",
        "set log_shipping: true (Fluent Bit to CloudWatch Logs), or acknowledge with where logs go instead",
    )


def check_network(config: InferstackConfig) -> Iterator[Finding]:
    """Without policies any pod of the cluster can call the engines (which serve without authentication)."""
    yield from _switched_off(
        config,
        config.network_policies.enabled,
        NETWORK,
        "network_policies.enabled",
        "no NetworkPolicies: every pod of the cluster can reach the engines, which take no credentials",
        "set network_policies.enabled: true, or acknowledge with the isolation you use instead",
    )


RULES = (
    Rule(id=MONITORING, title="Serving workloads are monitored", check=check_monitoring),
    Rule(id=LOGS, title="Container logs leave the nodes", check=check_logs),
    Rule(id=NETWORK, title="The engines are network-isolated", check=check_network),
)
