"""Rules of the ``ray_serve`` kind: the head stays off accelerators, prefill/decode run on EFA in one zone over
LIBFABRIC, accelerator types are what the pool's GPUs advertise, and the head fits a system node."""

from __future__ import annotations

import math
from collections.abc import Iterator

from inferstack.catalog.images import image_facts
from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.ray import RAY_ACCELERATOR_TYPE, accelerator_types
from inferstack.catalog.versions import ENGINE_IMAGES, ENGINE_RAY_VERSIONS
from inferstack.config.model import InferstackConfig
from inferstack.config.ray_serve import RayServeWorkloadConfig, UpgradeStrategy
from inferstack.plan import resolve
from inferstack.plan.placement import allocatable_cpu, allocatable_memory_gib, largest_system_node, pool_instances
from inferstack.plan.ray_serve import gpus_per_pod, pods_for, ranks, role_engines
from inferstack.rules.base import Finding, Rule, Severity
from inferstack.rules.disaggregation import efa_findings, nixl_findings, pool_gpus, zone_findings

HEAD_GPU = "RAY-HEAD-GPU"
HEAD_FIT = "RAY-HEAD-FIT"
PD_EFA = "RAY-PD-EFA"
PD_ZONE = "RAY-PD-ZONE"
NIXL = "RAY-NIXL-LIBFABRIC"
ACCELERATOR = "RAY-ACCELERATOR-TYPE"
UPGRADE = "RAY-UPGRADE-CAPACITY"
CAPACITY = "RAY-WORKER-CAPACITY"
SPANNING_ZONE = "RAY-SPANNING-ZONE"
SPANNING_EFA = "RAY-SPANNING-EFA"
#: The autoscaler sidecar's requests (KubeRay v1.7.0 default autoscalerOptions.resources).
AUTOSCALER_CPU = 0.5
AUTOSCALER_MEMORY_GIB = 0.5


def _workloads(config: InferstackConfig) -> Iterator[tuple[str, RayServeWorkloadConfig]]:
    for index, workload in enumerate(config.workloads):
        if isinstance(workload, RayServeWorkloadConfig):
            yield f"workloads[{index}]", workload


def check_head_pool(config: InferstackConfig) -> Iterator[Finding]:
    """The Ray head belongs on CPU nodes: on an accelerated pool it holds a GPU node for GCS and the dashboard."""
    pools = {p.name for p in config.compute.pools}
    for path, workload in _workloads(config):
        head = workload.head
        if head.pool is None:
            continue
        if head.pool not in pools:
            yield Finding(
                rule=HEAD_GPU,
                path=f"{path}.head.pool",
                message=f"{head.pool!r} is not a pool",
                fix=f"leave head.pool unset (the system nodes) or use one of {', '.join(sorted(pools))}",
            )
        elif config.pool(head.pool).accelerator is not AcceleratorKind.NONE and not head.allow_accelerated_pool:
            yield Finding(
                rule=HEAD_GPU,
                path=f"{path}.head.pool",
                message=f"pool {head.pool!r} has accelerators: the Ray head (GCS, dashboard, no replicas) would hold "
                "an accelerated node",
                fix="leave head.pool unset (the CPU system nodes), or set head.allow_accelerated_pool: true for a "
                "development cluster",
            )


def check_head_fit(config: InferstackConfig) -> Iterator[Finding]:
    """The head pod fits a system node: its CPU and memory plus the autoscaler sidecar KubeRay adds (500m CPU,
    512 MiB; ray-operator/controllers/ray/common/pod.go BuildAutoscalerContainer, v1.7.0)."""
    best = largest_system_node(config)
    for path, workload in _workloads(config):
        head = workload.head
        if head.pool is not None:
            continue
        cpu, memory = head.cpu + AUTOSCALER_CPU, head.memory_gib + AUTOSCALER_MEMORY_GIB
        if cpu > allocatable_cpu(best) or memory > allocatable_memory_gib(best):
            yield Finding(
                rule=HEAD_FIT,
                path=f"{path}.head",
                message=f"the head asks for {cpu:g} vCPU / {memory:g} GiB with the autoscaler sidecar; a system "
                f"node ({best.name}) gives {allocatable_cpu(best):g} vCPU / {allocatable_memory_gib(best):.0f} GiB",
                fix="lower head.cpu / head.memory_gib, or use larger cluster.system_nodes.instance_types",
            )


def check_pd_efa(config: InferstackConfig) -> Iterator[Finding]:
    """Prefill/decode move the KV cache of every request between nodes: the workers must have EFA."""
    for path, workload in _workloads(config):
        if workload.prefill_decode is not None:
            yield from efa_findings(PD_EFA, config, path, workload, "prefill_decode")


def check_spanning_zone(config: InferstackConfig) -> Iterator[Finding]:
    """RAY-SPANNING-ZONE (warning, as MULTINODE-ZONE): a replica whose pipeline stages span worker pods runs on a
    pool pinned to one zone (its activations cross the pods at every step: across zones they are slow and billed,
    and EFA does not cross)."""
    if config.network.az_count < 2:
        return
    for path, workload in _workloads(config):
        pool = config.pool(workload.pool)
        if pool.availability_zone is not None:
            continue
        spanning = [e for e in workload.engines if workload.replica_pods(e) > 1]
        if spanning:
            yield Finding(
                rule=SPANNING_ZONE,
                path=f"{path}.pool",
                message=f"a replica spans {workload.replica_pods(spanning[0])} worker pods (workers.gpus_per_pod "
                f"{workload.pod_gpus}) and "
                f"pool {pool.name!r} spans every zone: its pipeline stages may land in different zones",
                fix="pin the pool to one zone (availability_zone: 0)",
                severity=Severity.WARNING,
            )


def check_spanning_efa(config: InferstackConfig) -> Iterator[Finding]:
    """RAY-SPANNING-EFA (warning, as MULTINODE-EFA and MULTINODE-EFA-IMAGE): a replica spanning worker pods on an
    EFA pool talks NCCL over EFA only with ``efa: true`` and an image carrying aws-ofi-nccl (the AWS Ray LLM DLC);
    rayproject/ray-llm has none, and its stages would exchange activations over TCP without an error."""
    for path, workload in _workloads(config):
        pool = config.pool(workload.pool)
        spanning = any(workload.replica_pods(engine) > 1 for engine in workload.engines)
        if not spanning or not (pool.efa or workload.efa):
            continue  # the common case: nothing to resolve
        image = resolve(config).workload(workload).image
        facts = image_facts(image)
        if workload.efa and (facts is None or facts.aws_ofi_nccl):
            continue  # an image inferstack has no facts of is not judged (as MULTINODE-EFA-IMAGE does)
        yield Finding(
            rule=SPANNING_EFA,
            path=f"{path}.efa" if not workload.efa else f"{path}.image",
            message="a replica spans worker pods on an EFA pool, but "
            + (
                "the pods request no EFA devices"
                if not workload.efa
                else f"image {image} has no aws-ofi-nccl (NCCL's EFA plugin)"
            )
            + ": its pipeline stages exchange activations over TCP",
            fix=f"set efa: true and image: {ENGINE_IMAGES['ray-llm-efa']} (ray_version "
            f"{ENGINE_RAY_VERSIONS['ray-llm-efa']}: the AWS Ray LLM DLC has aws-ofi-nccl), or accept TCP between the "
            "stages",
            severity=Severity.WARNING,
        )


def check_pd_zone(config: InferstackConfig) -> Iterator[Finding]:
    """Prefill and decode in one Availability Zone: EFA does not cross zones."""
    for path, workload in _workloads(config):
        if workload.prefill_decode is not None:
            yield from zone_findings(PD_ZONE, config, path, workload)


def check_nixl(config: InferstackConfig) -> Iterator[Finding]:
    """NIXL over EFA only with the LIBFABRIC backend: UCX falls back to TCP speed without an error."""
    for path, workload in _workloads(config):
        pd = workload.prefill_decode
        if pd is not None:
            yield from nixl_findings(NIXL, config, workload, pd.kv_backends, f"{path}.prefill_decode.kv_backends")


def check_accelerator_type(config: InferstackConfig) -> Iterator[Finding]:
    """An ``accelerator_type`` is one Ray accepts and one the pool's GPUs advertise (else no replica places)."""
    valid = accelerator_types(ENGINE_RAY_VERSIONS["ray-llm"])
    for path, workload in _workloads(config):
        advertised = sorted(
            {RAY_ACCELERATOR_TYPE.get(str(t.accelerator_model), "") for t in pool_instances(config.pool(workload.pool))}
            & set(valid)
        )
        for index, model in enumerate(workload.models):
            wanted = model.accelerator_type
            if wanted is None or wanted in advertised:
                continue
            known = wanted in valid
            yield Finding(
                rule=ACCELERATOR,
                path=f"{path}.models[{index}].accelerator_type",
                message=f"{wanted!r} — "
                + (
                    f"pool {workload.pool!r} advertises {', '.join(advertised) or 'no GPU type'}"
                    if known
                    else f"not an accelerator type of Ray {ENGINE_RAY_VERSIONS['ray-llm']}"
                )
                + ": no replica would ever be placed",
                fix=f"use {' or '.join(advertised)} or leave it unset" if advertised else "leave it unset",
                suggestions=tuple({f"{path}.models[{index}].accelerator_type": a} for a in advertised[:1]),
            )


def check_upgrade_capacity(config: InferstackConfig) -> Iterator[Finding]:
    """``NewCluster`` upgrades start a second RayCluster beside the first: the pool must hold the replicas twice, or a
    cluster change waits for GPUs that never come (the old cluster keeps serving)."""
    for path, workload in _workloads(config):
        if workload.upgrade_strategy is not UpgradeStrategy.NEW_CLUSTER:
            continue
        pool = config.pool(workload.pool)
        if pool.accelerator is not AcceleratorKind.NVIDIA:
            continue
        needed = sum(
            ranks(engine) * scaling.min_replicas
            for engines in role_engines(workload).values()
            for engine, scaling in engines
        )
        if 2 * needed > pool_gpus(pool):
            yield Finding(
                rule=UPGRADE,
                path=f"{path}.upgrade_strategy",
                message=f"a NewCluster upgrade runs the starting replicas twice ({2 * needed} GPUs); pool "
                f"{pool.name!r} holds {pool_gpus(pool)}, so a change of image, resources or env would wait for GPUs",
                fix=f"raise the pool's capacity to ≥ {2 * needed} GPUs, or set upgrade_strategy: None (change the "
                "serve config only; recreate for cluster changes)",
                severity=Severity.WARNING,
            )


def check_worker_capacity(config: InferstackConfig) -> Iterator[Finding]:
    """The pool holds the worker pods of every starting replica (``min_replicas``): each replica in one pod (or in
    TP × PP / ``gpus_per_pod`` pods when it spans pods), an EFA pod alone on its node — or a model never becomes
    ready."""
    plan = resolve(config)
    for path, workload in _workloads(config):
        pool = config.pool(workload.pool)
        if pool.accelerator is not AcceleratorKind.NVIDIA:
            continue
        resolved = plan.workload(workload)
        pod = gpus_per_pod(workload)
        node = max(t.accelerator_count for t in pool_instances(pool))
        efa = any(role.pod.efa for role in resolved.roles.values())
        per_node = 1 if efa else max(1, node // pod)
        nodes = 0
        for engines in role_engines(workload).values():
            pods = sum(pods_for(e, s.min_replicas, pod) for e, s in engines)
            nodes += math.ceil(max(pods, workload.workers.min_pods) / per_node)
        capacity = pool_gpus(pool) // node
        if nodes > capacity:
            yield Finding(
                rule=CAPACITY,
                path=f"{path}.pool",
                message=f"the starting replicas need {nodes} node(s) of pool {pool.name!r} ({pod} GPUs per worker pod"
                f"{', one EFA pod per node' if efa else ''}); it holds {capacity}",
                fix="raise the pool's max_size / max_accelerators, or lower min_replicas",
            )


RULES = (
    Rule(id=HEAD_GPU, title="The Ray head runs on CPU nodes", check=check_head_pool),
    Rule(id=HEAD_FIT, title="The Ray head fits a system node", check=check_head_fit),
    Rule(id=PD_EFA, title="Prefill/decode workers are on EFA", check=check_pd_efa),
    Rule(id=PD_ZONE, title="Prefill and decode share one zone", check=check_pd_zone),
    Rule(id=NIXL, title="NIXL uses LIBFABRIC on EFA", check=check_nixl),
    Rule(id=ACCELERATOR, title="accelerator_type matches the pool's GPUs", check=check_accelerator_type),
    Rule(id=UPGRADE, title="NewCluster upgrades have room for a second cluster", check=check_upgrade_capacity),
    Rule(id=CAPACITY, title="The pool holds the starting replicas' worker pods", check=check_worker_capacity),
    Rule(id=SPANNING_ZONE, title="A replica spanning pods stays in one zone", check=check_spanning_zone),
    Rule(id=SPANNING_EFA, title="A replica spanning pods on EFA uses it", check=check_spanning_efa),
)
