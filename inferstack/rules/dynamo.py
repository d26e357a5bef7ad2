"""Rules of the ``dynamo`` kind: disaggregated prefill/decode on EFA, in one zone, over LIBFABRIC, and a pool that holds
every worker pod (the shared serving rules judge each worker role's engine: fit, TP, scheduling)."""

from __future__ import annotations

import math
from collections.abc import Iterator

from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.dynamo import DynamoMode, DynamoWorkloadConfig
from inferstack.config.model import InferstackConfig
from inferstack.plan import resolve
from inferstack.plan.placement import pool_instances
from inferstack.rules.base import Finding, Rule
from inferstack.rules.disaggregation import efa_findings, nixl_findings, pool_gpus, zone_findings

PD_EFA = "DYNAMO-PD-EFA"
PD_ZONE = "DYNAMO-PD-ZONE"
NIXL = "DYNAMO-NIXL-LIBFABRIC"
CAPACITY = "DYNAMO-WORKER-CAPACITY"


def _disaggregated(config: InferstackConfig) -> Iterator[tuple[str, DynamoWorkloadConfig]]:
    for index, workload in enumerate(config.workloads):
        if isinstance(workload, DynamoWorkloadConfig) and workload.mode is DynamoMode.DISAGGREGATED:
            yield f"workloads[{index}]", workload


def check_pd_efa(config: InferstackConfig) -> Iterator[Finding]:
    """Prefill hands every request's KV cache to decode across nodes: the workers need EFA."""
    for path, workload in _disaggregated(config):
        yield from efa_findings(PD_EFA, config, path, workload, "mode: disaggregated (or use mode: aggregated)")


def check_pd_zone(config: InferstackConfig) -> Iterator[Finding]:
    """Prefill and decode in one Availability Zone: EFA does not cross zones (the pods' zone affinity would leave
    the later ones Pending where the first one landed)."""
    for path, workload in _disaggregated(config):
        yield from zone_findings(PD_ZONE, config, path, workload)


def check_nixl(config: InferstackConfig) -> Iterator[Finding]:
    """NIXL over EFA only with LIBFABRIC: UCX falls back to TCP speed without an error."""
    for path, workload in _disaggregated(config):
        yield from nixl_findings(NIXL, config, workload, workload.kv_backends, f"{path}.kv_backends")


def check_worker_capacity(config: InferstackConfig) -> Iterator[Finding]:
    """The pool holds every worker pod of the graph at once (an EFA pod takes its node alone), or some role never
    becomes ready."""
    plan = resolve(config)
    for index, workload in enumerate(config.workloads):
        if not isinstance(workload, DynamoWorkloadConfig):
            continue
        pool = config.pool(workload.pool)
        if pool.accelerator is not AcceleratorKind.NVIDIA:
            continue
        resolved = plan.workload(workload)
        node = max(t.accelerator_count for t in pool_instances(pool))
        nodes = 0
        for name, role in workload.roles.items():
            pod = resolved.roles[name].pod
            per_node = 1 if pod.efa else max(1, node // max(1, pod.accelerators))
            nodes += math.ceil(role.replicas / per_node)
        capacity = pool_gpus(pool) // node
        if nodes > capacity:
            yield Finding(
                rule=CAPACITY,
                path=f"workloads[{index}].pool",
                message=f"the workers need {nodes} node(s) of pool {pool.name!r}"
                f"{' (one EFA pod per node)' if workload.efa else ''}; it holds {capacity}",
                fix="raise the pool's max_size / max_accelerators, or lower the workers' replicas",
            )


RULES = (
    Rule(id=PD_EFA, title="Dynamo prefill/decode workers are on EFA", check=check_pd_efa),
    Rule(id=PD_ZONE, title="Dynamo prefill and decode share one zone", check=check_pd_zone),
    Rule(id=NIXL, title="Dynamo's NIXL uses LIBFABRIC on EFA", check=check_nixl),
    Rule(id=CAPACITY, title="The pool holds every Dynamo worker pod", check=check_worker_capacity),
)
