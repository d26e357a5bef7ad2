"""NODE-DAEMON-TAINTS: every node daemon inferstack installs (GPU operator, Neuron device plugin, EFA device
plugin) tolerates every taint of every pool it serves.

Otherwise the daemon never runs on those nodes: no ``nvidia.com/gpu`` / ``aws.amazon.com/neuron`` /
``vpc.amazonaws.com/efa`` is advertised there, and every pod that asks for one stays Pending.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.compute import NodeDaemon
from inferstack.config.model import InferstackConfig
from inferstack.rules.base import Finding, Rule, all_pools

RULE_ID = "NODE-DAEMON-TAINTS"
#: What each daemon is, for messages.
DAEMON_TITLES: dict[NodeDaemon, str] = {
    NodeDaemon.GPU_OPERATOR: "the NVIDIA GPU operator (device plugin, DCGM exporter)",
    NodeDaemon.NEURON_PLUGIN: "the Neuron device plugin",
    NodeDaemon.EFA_PLUGIN: "the EFA device plugin",
}


def _tolerates(tolerations: set[tuple[str, str]], key: str, effect: str) -> bool:
    return (key, effect) in tolerations or (key, "") in tolerations


def check(config: InferstackConfig) -> Iterator[Finding]:
    compute = config.compute
    for daemon in NodeDaemon:
        served = {id(p) for p in compute.daemon_pools(daemon)}
        tolerated = {(t.key, t.effect) for t in compute.daemon_tolerations(daemon)}
        for path, pool in all_pools(config):
            if id(pool) not in served:
                continue
            for index, taint in enumerate(pool.taints):
                if taint.effect == "PreferNoSchedule" or _tolerates(tolerated, taint.key, taint.effect):
                    continue
                yield Finding(
                    rule=RULE_ID,
                    path=f"{path}.taints[{index}]",
                    message=f"{DAEMON_TITLES[daemon]} does not tolerate taint {taint.key}:{taint.effect}, so it "
                    f"never runs on pool {pool.name!r} and no pod there gets its devices",
                    fix=f"add {{key: {taint.key}, effect: {taint.effect}}} to compute.{daemon.value}."
                    "extra_tolerations, or remove the taint",
                )


RULE = Rule(id=RULE_ID, title="Node daemons tolerate every taint of the pools they serve", check=check)
