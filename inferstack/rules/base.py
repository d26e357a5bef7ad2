"""What a rule is and what it finds. Rules are pure functions of the validated config; they never look at CDK."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from inferstack.config.compute import AcceleratedNodeGroupConfig, KarpenterPoolConfig
from inferstack.config.model import InferstackConfig


class Severity(StrEnum):
    ERROR = "error"
    """Synth stops unless the finding is acknowledged in ``acknowledge``."""
    WARNING = "warning"
    """Printed; synth goes on."""


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One problem a rule found: which rule, where in the config, what is wrong and how to fix it."""

    rule: str
    path: str
    message: str
    fix: str
    severity: Severity = Severity.ERROR
    suggestions: tuple[Mapping[str, Any], ...] = ()
    """Machine-applicable fixes, each a set of ``config path: new value`` changes that were checked to pass the
    rules that judge the same thing (fit, parallelism, scheduling) before they were offered. Default none."""

    def __str__(self) -> str:
        return f"[{self.rule}] {self.path}: {self.message} — {self.fix}"


@dataclass(frozen=True, kw_only=True)
class Rule:
    """A named synth-time check."""

    id: str
    title: str
    check: Callable[[InferstackConfig], Iterable[Finding]]
    acknowledgeable: bool = True
    """False for rules whose finding means the platform cannot be built as configured (e.g. a model source with
    no storage behind it): their findings stay errors, and acknowledging them is a config error."""

    def run(self, config: InferstackConfig) -> Iterator[Finding]:
        yield from self.check(config)


def node_groups(config: InferstackConfig) -> Iterator[tuple[str, AcceleratedNodeGroupConfig]]:
    """Each accelerated managed node group with its config path."""
    for index, group in enumerate(config.compute.node_groups):
        yield f"compute.node_groups[{index}]", group


def karpenter_pools(config: InferstackConfig) -> Iterator[tuple[str, KarpenterPoolConfig]]:
    """Each Karpenter pool with its config path."""
    for index, pool in enumerate(config.compute.karpenter_pools):
        yield f"compute.karpenter_pools[{index}]", pool


def all_pools(config: InferstackConfig) -> Iterator[tuple[str, AcceleratedNodeGroupConfig | KarpenterPoolConfig]]:
    yield from node_groups(config)
    yield from karpenter_pools(config)
