"""POD-PORTS: a workload's extra port (``pod.ports``) is not a port its kind listens on already.

The container's declared ports are checked when the chart renders; this rule also knows the ports a kind's pods
open without declaring them — the serving and metrics ports and the fixed ports its pods use among themselves
(:class:`~inferstack.plan.runtime_paths.RuntimePaths`: e.g. the LeaderWorkerSet's torch.distributed master port).
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.model import InferstackConfig
from inferstack.plan import resolve
from inferstack.plan.network import runtime_paths
from inferstack.rules.base import Finding, Rule

RULE_ID = "POD-PORTS"


def check(config: InferstackConfig) -> Iterator[Finding]:
    if not any(w.pod.ports for w in config.workloads):
        return  # the common case: nothing to resolve
    platform = resolve(config)
    for index, workload in enumerate(platform.workloads):
        ports = workload.config.pod.ports
        if not ports:
            continue
        paths = runtime_paths(platform, workload)
        taken = {p: "serving" for p in paths.serving} | {p: "metrics" for p in paths.metrics}
        taken |= {p: "group" for p in paths.group or ()}
        for position, port in enumerate(ports):
            use = taken.get(port.port)
            if use is None:
                continue
            yield Finding(
                rule=RULE_ID,
                path=f"workloads[{index}].pod.ports[{position}].port",
                message=f"{port.port} is the {workload.kind} pods' own {use} port: the engine listens there already, "
                "so the extra port would never bind",
                fix=f"pick a port the kind does not use (its ports: {', '.join(str(p) for p in sorted(taken))})",
            )


RULE = Rule(id=RULE_ID, title="An extra pod port is not one the kind listens on", check=check)
RULES = (RULE,)
