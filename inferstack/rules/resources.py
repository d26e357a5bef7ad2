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


#: (limit field, request field, unit, the request of a pod) of ``resources``.
_PAIRS = (
    ("cpu_limit", "cpu", "vCPU", lambda pod: pod.cpu),
    ("memory_limit_gib", "memory_gib", "GiB", lambda pod: pod.memory_gib),
)


def check(config: InferstackConfig) -> Iterator[Finding]:
    for workload in resolve(config).workloads:
        path = f"workloads[{workload.index}].resources"
        resources = workload.config.resources
        pods = [role.pod for role in workload.roles.values() if role.pool is None]  # the workload's own pods
        for limit_field, request_field, unit, request_of in _PAIRS if pods else ():
            limit, request = getattr(resources, limit_field), max(request_of(pod) for pod in pods)
            if limit is None or limit >= request:
                continue
            derived = " (derived from the pool)" if getattr(resources, request_field) is None else ""
            yield Finding(
                rule=RULE_ID,
                path=f"{path}.{limit_field}",
                message=f"{limit:g} {unit} is below the pods' request, {request:g} {unit}{derived}: the API server "
                "refuses such a pod",
                fix=f"raise {limit_field} to at least {request:g}, or set resources.{request_field} to what the pods "
                "need",
            )


RULE = Rule(
    id=RULE_ID,
    title="Serving pods' CPU and memory limits are not below their requests",
    check=check,
    acknowledgeable=False,
)
