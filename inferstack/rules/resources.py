"""RESOURCE-LIMITS: a serving pod's CPU and memory limits are not below its requests.

With ``resources.cpu`` and ``memory_gib`` given, the config refuses a lower limit at once; with a request derived
from the pool (the accelerators' share of the host), only the plan knows it: the API server would refuse the pod
("must be less than or equal to ... limit") after the deploy has started.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.model import InferstackConfig
from inferstack.plan import resolve
from inferstack.rules.base import Finding, Rule

RULE_ID = "RESOURCE-LIMITS"


def check(config: InferstackConfig) -> Iterator[Finding]:
    for workload in resolve(config).workloads:
        path = f"workloads[{workload.index}].resources"
        resources = workload.config.resources
        pods = [role.pod for role in workload.roles.values() if role.pool is None]  # the workload's own pods
        if not pods:
            continue
        cpu = max(pod.cpu for pod in pods)
        memory = max(pod.memory_gib for pod in pods)
        if resources.cpu_limit is not None and resources.cpu_limit < cpu:
            derived = " (derived from the pool)" if resources.cpu is None else ""
            yield Finding(
                rule=RULE_ID,
                path=f"{path}.cpu_limit",
                message=f"{resources.cpu_limit:g} vCPU is below the pods' CPU request, {cpu:g} vCPU{derived}: the "
                "API server refuses such a pod",
                fix=f"raise cpu_limit to at least {cpu:g}, or set resources.cpu to what the pods need",
            )
        if resources.memory_limit_gib is not None and resources.memory_limit_gib < memory:
            derived = " (derived from the pool)" if resources.memory_gib is None else ""
            yield Finding(
                rule=RULE_ID,
                path=f"{path}.memory_limit_gib",
                message=f"{resources.memory_limit_gib:g} GiB is below the pods' memory request, {memory:g} GiB"
                f"{derived}: the API server refuses such a pod",
                fix=f"raise memory_limit_gib to at least {memory:g}, or set resources.memory_gib to what the pods need",
            )


RULE = Rule(
    id=RULE_ID,
    title="Serving pods' CPU and memory limits are not below their requests",
    check=check,
    acknowledgeable=False,
)
