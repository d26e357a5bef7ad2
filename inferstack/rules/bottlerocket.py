"""BOTTLEROCKET-GPU-METRICS (warning): a Bottlerocket NVIDIA pool serving a monitored workload has no GPU metrics.

Bottlerocket's NVIDIA variants run their own device plugin, so inferstack keeps every GPU operator operand off their
nodes (``nvidia.com/gpu.deploy.operands=false``: :data:`~inferstack.catalog.kubernetes.GPU_OPERATOR_OPERANDS_LABEL`
says why) — the DCGM exporter included. The GPU dashboard and the GPU alerts then have no series for those nodes.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.model import InferstackConfig
from inferstack.rules.base import Finding, Rule, Severity, all_pools

RULE_ID = "BOTTLEROCKET-GPU-METRICS"


def check(config: InferstackConfig) -> Iterator[Finding]:
    for path, pool in all_pools(config):
        if pool.accelerator is not AcceleratorKind.NVIDIA or not pool.boots_bottlerocket:
            continue
        monitored = sorted(w.name for w in config.workloads if w.pool == pool.name and w.monitoring)
        if not monitored:
            continue
        yield Finding(
            rule=RULE_ID,
            path=f"{path}.ami",
            message=f"Bottlerocket runs its own NVIDIA device plugin, so no GPU operator operand runs on the pool's "
            f"nodes — no DCGM exporter: the GPU dashboard and GPU alerts have no data for {', '.join(monitored)}",
            fix="boot the pool from an AL2023 NVIDIA AMI (the default) to get GPU metrics, or acknowledge "
            "BOTTLEROCKET-GPU-METRICS",
            severity=Severity.WARNING,
        )


RULE = Rule(id=RULE_ID, title="GPU metrics need the DCGM exporter, which Bottlerocket nodes do not run", check=check)
RULES = (RULE,)
