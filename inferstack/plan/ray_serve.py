"""Plan of the ``ray_serve`` kind: the Ray head (CPU, system nodes unless the config names a pool) and one GPU
worker group per role — ``worker``, or ``prefill`` and ``decode`` when disaggregated — on the workload's pool."""

from __future__ import annotations

import math
from collections.abc import Mapping

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.kubernetes import POOL_LABEL, SYSTEM_POOL
from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.config.engine import VllmEngineConfig
from inferstack.config.model import InferstackConfig
from inferstack.config.ray_serve import NixlBackend, RayAutoscaling, RayServeWorkloadConfig
from inferstack.config.workloads import WorkloadBase
from inferstack.plan import ResolvedPool, ResolvedWorkload, Role, workload_plan
from inferstack.plan.names import needs_reader, server_service_account
from inferstack.plan.placement import PodPlan, pod_plan, pool_taints


def ranks(engine: VllmEngineConfig) -> int:
    return engine.tensor_parallel_size * engine.pipeline_parallel_size


def role_engines(workload: RayServeWorkloadConfig) -> dict[str, list[tuple[VllmEngineConfig, RayAutoscaling]]]:
    """Per worker group, the engines (and their autoscaling) whose replicas it holds."""
    if workload.prefill_decode is not None:
        pd = workload.prefill_decode
        return {
            "prefill": [(pd.prefill.engine, pd.prefill.autoscaling)],
            "decode": [(pd.decode.engine, pd.decode.autoscaling)],
        }
    return {"worker": [(m.engine, m.autoscaling) for m in workload.models]}


def gpus_per_pod(workload: RayServeWorkloadConfig) -> int:
    """GPUs of one worker pod (:attr:`RayServeWorkloadConfig.pod_gpus`)."""
    return workload.pod_gpus


def spans_pods(engine: VllmEngineConfig, pod: int) -> bool:
    """Whether a replica of ``engine`` is larger than a worker pod of ``pod`` GPUs (its stages span pods)."""
    return ranks(engine) > pod


def pods_for(engine: VllmEngineConfig, replicas: int, pod: int) -> int:
    """Worker pods of ``pod`` GPUs that ``replicas`` replicas of ``engine`` occupy: TP × PP / ``pod`` pods each when
    a replica spans pods, else whole replicas packed into each pod (``STRICT_PACK``)."""
    if spans_pods(engine, pod):
        return replicas * (ranks(engine) // pod)
    return math.ceil(replicas / (pod // ranks(engine)))


def max_pods(workload: RayServeWorkloadConfig, role: str) -> int:
    """Most worker pods of ``role``: ``workers.max_pods``, else enough for every replica at ``max_replicas``."""
    if workload.workers.max_pods is not None:
        return workload.workers.max_pods
    pod = gpus_per_pod(workload)
    pods = sum(pods_for(engine, scaling.max_replicas, pod) for engine, scaling in role_engines(workload)[role])
    return max(1, pods)


def _head(config: InferstackConfig, workload: RayServeWorkloadConfig, account: str, reads: bool) -> Role:
    head = workload.head
    pool = head.pool or SYSTEM_POOL
    named = next((p for p in config.compute.pools if p.name == head.pool), None)  # RAY-HEAD-GPU names a typo
    taints = frozenset(pool_taints(named)) if named is not None else frozenset()
    memory = f"{head.memory_gib:g}Gi"
    cpu = str(int(head.cpu)) if float(head.cpu).is_integer() else f"{int(head.cpu * 1000)}m"
    pod = PodPlan(
        accelerator=AcceleratorKind.NONE,
        accelerators=0,
        neuron_cores=0,
        cpu=head.cpu,
        memory_gib=head.memory_gib,
        efa=0,
        node_selector={POOL_LABEL: pool},
        tolerations=taints,
        startup_seconds=0,
        estimated_startup_seconds=0,
        requests={"cpu": cpu, "memory": memory},
        limits={"memory": memory},
    )
    return Role(name="head", pod=pod, service_account=account, reads_bucket=reads, pool=pool)


def plan_ray_serve(
    config: InferstackConfig, pools: Mapping[str, ResolvedPool], index: int, workload: WorkloadBase
) -> ResolvedWorkload:
    assert isinstance(workload, RayServeWorkloadConfig)
    accelerator = pools[workload.pool].accelerator
    account = server_service_account(workload)
    reads = needs_reader(workload, accelerator)
    roles: dict[str, Role] = {"head": _head(config, workload, account, reads)}
    gpus = gpus_per_pod(workload)
    for name in role_engines(workload):
        roles[name] = Role(
            name=name,
            pod=pod_plan(config, workload, ranks=gpus),
            service_account=account,
            reads_bucket=reads,
            serves=False,
        )
    return workload_plan(config, pools, index, workload, roles=roles, image=ray_image(workload))


def ray_image(workload: WorkloadBase, accelerator: AcceleratorKind = AcceleratorKind.NVIDIA) -> str:
    """The image of every Ray pod: ``image``, else the catalog's default (:func:`default_ray_image`)."""
    assert isinstance(workload, RayServeWorkloadConfig)
    return workload.image or ENGINE_IMAGES[default_ray_image(workload)]


def default_ray_image(workload: RayServeWorkloadConfig) -> str:
    """The catalog key of the default image: ``ray-llm-efa`` (the AWS Ray LLM DLC: libfabric, aws-ofi-nccl) when
    prefill/decode asks NIXL for LIBFABRIC — rayproject/ray-llm has no libfabric, so the plugin cannot load there —
    else ``ray-llm``."""
    pd = workload.prefill_decode
    return "ray-llm-efa" if pd is not None and NixlBackend.LIBFABRIC in pd.kv_backends else "ray-llm"
