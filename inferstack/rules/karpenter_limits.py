"""KARPENTER-LIMITS: a NodePool's limits admit at least one of its instance types.

Karpenter never launches a node that would push the pool over its limits; a limit below the smallest instance
leaves every pod Pending with only a Karpenter log line to explain why.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.model import InferstackConfig
from inferstack.rules.base import Finding, Rule, karpenter_pools

RULE_ID = "KARPENTER-LIMITS"


def check(config: InferstackConfig) -> Iterator[Finding]:
    for path, pool in karpenter_pools(config):
        instances = pool.instances
        accel_limit, cpu_limit = pool.accelerator_limit, pool.cpu_limit
        if accel_limit is not None:
            smallest = min(instances, key=lambda t: t.accelerator_count)
            if accel_limit < smallest.accelerator_count:
                yield Finding(
                    rule=RULE_ID,
                    path=f"{path}.max_accelerators",
                    message=f"limit {accel_limit} is below the {smallest.accelerator_count} accelerators of the "
                    f"smallest type in the pool ({smallest.name}), so Karpenter can never launch a node",
                    fix=f"raise max_accelerators to ≥ {smallest.accelerator_count} or add smaller instance types",
                )
        if cpu_limit is not None:
            smallest = min(instances, key=lambda t: t.vcpu)
            if cpu_limit < smallest.vcpu:
                yield Finding(
                    rule=RULE_ID,
                    path=f"{path}.max_cpu",
                    message=f"limit {cpu_limit} vCPU is below the {smallest.vcpu} vCPU of the smallest type in the "
                    f"pool ({smallest.name}), so Karpenter can never launch a node",
                    fix=f"raise max_cpu to ≥ {smallest.vcpu} or add smaller instance types",
                )
        if pool.max_memory_gib is not None:
            smallest = min(instances, key=lambda t: t.memory_gib)
            if pool.max_memory_gib < smallest.memory_gib:
                yield Finding(
                    rule=RULE_ID,
                    path=f"{path}.max_memory_gib",
                    message=f"limit {pool.max_memory_gib} GiB is below the {smallest.memory_gib:g} GiB of the smallest "
                    f"type in the pool ({smallest.name}), so Karpenter can never launch a node",
                    fix=f"raise max_memory_gib to ≥ {smallest.memory_gib:g} or add smaller instance types",
                )


RULE = Rule(id=RULE_ID, title="Karpenter pool limits admit at least one instance", check=check)
