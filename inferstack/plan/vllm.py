"""Plans of the vLLM kinds: ``vllm`` (one server pod per replica) and ``vllm_multinode`` (a group of ``nodes`` pods
per replica: the leader (node rank 0) serves, the headless workers join it; each pod holds ``TP × PP / nodes``
ranks on its own node)."""

from __future__ import annotations

from collections.abc import Mapping

from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.model import InferstackConfig
from inferstack.config.vllm_multinode import VllmMultinodeWorkloadConfig
from inferstack.config.workloads import VllmWorkloadConfig, WorkloadBase
from inferstack.plan import ResolvedPool, ResolvedWorkload, Role, server_role, workload_plan
from inferstack.plan.autoscaler import autoscaler_operators
from inferstack.plan.names import needs_reader, server_service_account
from inferstack.plan.placement import pod_plan

#: Host memory an LMCache CPU KV cache needs besides its own size (the engine process, pinned buffers), GiB.
LMCACHE_HEADROOM_GIB = 16


def _min_memory_gib(workload: VllmWorkloadConfig) -> float:
    lmcache = workload.engine.lmcache
    return lmcache.cpu_cache_gib + LMCACHE_HEADROOM_GIB if lmcache is not None else 0


def plan_vllm(
    config: InferstackConfig, pools: Mapping[str, ResolvedPool], index: int, workload: WorkloadBase
) -> ResolvedWorkload:
    assert isinstance(workload, VllmWorkloadConfig)
    accelerator = pools[workload.pool].accelerator
    server = server_role(config, pools, workload, ranks=workload.ranks, min_memory_gib=_min_memory_gib(workload))
    return workload_plan(
        config,
        pools,
        index,
        workload,
        roles={"server": server},
        image=workload.image(accelerator),
        operators=autoscaler_operators(workload),
        compiles=accelerator is AcceleratorKind.NEURON,  # the Neuron compile Job stores its artifacts
    )


def plan_vllm_multinode(
    config: InferstackConfig, pools: Mapping[str, ResolvedPool], index: int, workload: WorkloadBase
) -> ResolvedWorkload:
    assert isinstance(workload, VllmMultinodeWorkloadConfig)
    accelerator = pools[workload.pool].accelerator
    pod = pod_plan(
        config, workload, ranks=workload.ranks_per_pod, nodes=workload.nodes, min_memory_gib=_min_memory_gib(workload)
    )
    account = server_service_account(workload)
    reads = needs_reader(workload, accelerator)
    roles = {
        "leader": Role(name="leader", pod=pod, service_account=account, reads_bucket=reads),
        "worker": Role(
            name="worker",
            pod=pod,
            service_account=account,
            reads_bucket=reads,
            serves=False,
            pods_per_replica=workload.nodes - 1,
        ),
    }
    return workload_plan(config, pools, index, workload, roles=roles, image=workload.image(accelerator))
