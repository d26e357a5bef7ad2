"""STARTUP-PROBE: an explicit ``startup_timeout_seconds`` must cover the estimated model load (and, for a
multi-node replica, forming the group) and the engine start, or Kubernetes kills the loading pod and restarts it in
a loop. The finding suggests the estimate; leaving the field out lets inferstack size it from the model."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.model import InferstackConfig
from inferstack.plan import resolve
from inferstack.rules.base import Finding, Rule

STARTUP = "STARTUP-PROBE"


def check_startup(config: InferstackConfig) -> Iterator[Finding]:
    """An explicit startup timeout must cover the estimated model load, or Kubernetes kills the loading pod."""
    for resolved in resolve(config).workloads:
        workload, index = resolved.config, resolved.index
        if workload.startup_timeout_seconds is None:
            continue
        needed = resolved.server.pod.estimated_startup_seconds
        if workload.startup_timeout_seconds < needed:
            nodes = workload_nodes(workload)
            group = f" on each of {nodes} nodes, form the group" if nodes > 1 else ""
            source = "its cache" if not workload.model_entries else workload.model.source.type.value
            yield Finding(
                rule=STARTUP,
                path=f"workloads[{index}].startup_timeout_seconds",
                message=f"{workload.startup_timeout_seconds}s is shorter than the ~{needed}s estimated to load "
                f"{workload.model.arch.weights_gib:.0f} GiB from {source}{group} and start "
                "the engine: the pod would be restarted in a loop",
                fix=f"set startup_timeout_seconds ≥ {needed} or remove it (inferstack sizes it from the model)",
                suggestions=({f"workloads[{index}].startup_timeout_seconds": needed},),
            )


def workload_nodes(workload: object) -> int:
    """Nodes one replica spans (1 for single-node kinds)."""
    return int(getattr(workload, "nodes", 1))


RULE = Rule(id=STARTUP, title="Startup probe covers the model load", check=check_startup)
