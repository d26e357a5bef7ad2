"""GPU-OPERATOR-TAINT: the NVIDIA GPU operator's DaemonSets tolerate every taint of every GPU pool.

Otherwise the device plugin never runs on those nodes and ``nvidia.com/gpu`` stays 0: pods stay Pending.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.model import InferstackConfig
from inferstack.rules.base import Finding, Rule, all_pools

RULE_ID = "GPU-OPERATOR-TAINT"
#: Taint keys the GPU operator's DaemonSets tolerate out of the box (inferstack's accelerator taint).
BUILT_IN_TOLERATIONS = frozenset({"nvidia.com/gpu"})


def check(config: InferstackConfig) -> Iterator[Finding]:
    tolerated = BUILT_IN_TOLERATIONS | {t.key for t in config.compute.gpu_operator.extra_tolerations}
    for path, pool in all_pools(config):
        if pool.accelerator is not AcceleratorKind.NVIDIA:
            continue
        for index, taint in enumerate(pool.taints):
            if taint.key not in tolerated:
                yield Finding(
                    rule=RULE_ID,
                    path=f"{path}.taints[{index}]",
                    message=f"the GPU operator does not tolerate taint {taint.key!r}, so its device plugin never "
                    f"runs on pool {pool.name!r} and no pod there gets a GPU",
                    fix=f"add {{key: {taint.key}}} to compute.gpu_operator.extra_tolerations, or remove the taint",
                )


RULE = Rule(id=RULE_ID, title="GPU operator tolerates every GPU pool taint", check=check)
