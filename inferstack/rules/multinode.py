"""Rules of the ``vllm_multinode`` kind: GPU pools only, the pool holds whole groups, the group's traffic stays in
one zone and on EFA where the nodes have it, and the image can use EFA at all."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from inferstack.catalog.images import ImageFacts, image_facts
from inferstack.catalog.instances import AcceleratorKind, InstanceType
from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.config.compute import AcceleratedNodeGroupConfig, KarpenterPoolConfig
from inferstack.config.model import InferstackConfig
from inferstack.config.vllm_multinode import VllmMultinodeWorkloadConfig
from inferstack.plan import ResolvedWorkload, resolve
from inferstack.plan.placement import host_instance, pool_instances
from inferstack.plan.served import serving_instances
from inferstack.rules.base import Finding, Rule, Severity
from inferstack.rules.suggestions import register_viability_checks, suggesting, viable

ACCELERATOR = "MULTINODE-ACCELERATOR"
CAPACITY = "MULTINODE-CAPACITY"
ZONE = "MULTINODE-ZONE"
EFA = "MULTINODE-EFA"
EFA_IMAGE = "MULTINODE-EFA-IMAGE"


def _all(config: InferstackConfig) -> Iterator[tuple[str, VllmMultinodeWorkloadConfig]]:
    for index, workload in enumerate(config.workloads):
        if isinstance(workload, VllmMultinodeWorkloadConfig):
            yield f"workloads[{index}]", workload


def _workloads(config: InferstackConfig) -> Iterator[tuple[str, VllmMultinodeWorkloadConfig]]:
    """The multi-node workloads on GPU pools (MULTINODE-ACCELERATOR reports the others)."""
    for path, workload in _all(config):
        if config.pool(workload.pool).accelerator is AcceleratorKind.NVIDIA:
            yield path, workload


#: Share of a node's accelerator memory the weights may take and still leave the KV cache room (a coarse
#: MODEL-FIT: kind vllm's own sizing judges the real config).
WEIGHTS_SHARE = 0.8


def _one_neuron_node_fix(workload: VllmMultinodeWorkloadConfig) -> str:
    """Use a GPU pool — or one Neuron node, only when a Neuron instance inferstack serves on holds the weights with
    room for the KV cache."""
    weights = workload.model.arch.weights_gib

    def memory(t: InstanceType) -> float:
        return t.accelerator_count * t.accelerator_memory_mib / 1024

    served = serving_instances(AcceleratorKind.NEURON)
    holding = sorted((t for t in served if weights <= WEIGHTS_SHARE * memory(t)), key=memory)
    if holding:
        return f"use a GPU pool, or kind: vllm on one Neuron node ({', '.join(t.name for t in holding)})"
    top = max(served, key=memory, default=None)
    largest_node = f" (the largest inferstack serves on, {top.name}, has {memory(top):.0f} GiB)" if top else ""
    return (
        f"use a GPU pool: {weights:.0f} GiB of weights fit no single Neuron node with room for the KV cache"
        f"{largest_node}, and inferstack serves Neuron on one node"
    )


def check_accelerator(config: InferstackConfig) -> Iterator[Finding]:
    """vLLM's multi-node mode needs NVIDIA GPUs: the pinned Neuron stack serves one node. Read by a helper: the
    vllm-neuron 0.5 plugin sets ``distributed_executor_backend = "uni"`` whenever ``world_size > 1``
    (``vllm_neuron/platform.py:339-340``) and initializes a world of 1 (``worker/neuron_worker.py:186-197``); the
    SDK 2.31.1 docs say multi-node inference "will be supported in future Neuron releases" (``libraries/
    nxd-inference/overview-index.rst:27``); ai-on-eks's Trn1 405B LeaderWorkerSet runs the transformers-neuronx vLLM
    fork of SDK 2.20 (``neuron_multi_node_runner.py``), which no current DLC carries."""
    for path, workload in _all(config):
        accelerator = config.pool(workload.pool).accelerator
        if accelerator is not AcceleratorKind.NVIDIA:
            yield Finding(
                rule=ACCELERATOR,
                path=f"{path}.pool",
                message=f"pool {workload.pool!r} has {accelerator.value} nodes; vllm_multinode spans NVIDIA GPU nodes "
                "(NCCL between the nodes' ranks) — on Neuron the pinned stack has no multi-node serving: the "
                "vllm-neuron 0.5 plugin runs one engine process (it forces the 'uni' executor for any world size) "
                "and SDK 2.31.1 lists multi-node inference through vLLM as not yet supported (the ai-on-eks Trn1 "
                "405B example runs the retired transformers-neuronx vLLM fork of SDK 2.20)",
                fix=_one_neuron_node_fix(workload),
            )


def _nodes_of(resolved: ResolvedWorkload, pool: AcceleratedNodeGroupConfig | KarpenterPoolConfig) -> int | None:
    """Nodes the workload's starting pods occupy on its pool (None: no host holds its pod — PARALLEL-NODE and
    SCHEDULING say why). A pod with EFA takes every EFA device of its node, so it has the node to itself."""
    plan = resolved.server.pod
    host = host_instance(pool_instances(pool), plan.accelerators)
    if host is None or not plan.accelerators:
        return None
    per_node = 1 if plan.efa else max(1, host.accelerator_count // plan.accelerators)
    workload = resolved.config
    replicas = workload.autoscaling.min_replicas if workload.autoscaling else workload.replicas
    pods = replicas * sum(role.pods_per_replica for role in resolved.roles.values())
    return -(-pods // per_node)


def check_capacity(config: InferstackConfig) -> Iterator[Finding]:
    """A replica starts only when all of its nodes run: the pool must hold every group, with every other workload
    on it (a partial group holds its GPUs and waits forever). EFA pods count one per node."""
    plan = resolve(config)
    for pool_name, resolved_pool in plan.pools.items():
        on_pool = [w for w in plan.workloads if w.pool.name == pool_name]
        groups = [w for w in on_pool if isinstance(w.config, VllmMultinodeWorkloadConfig)]
        if not groups or resolved_pool.accelerator is not AcceleratorKind.NVIDIA:
            continue
        pool = resolved_pool.config
        counts = {w.name: _nodes_of(w, pool) for w in on_pool}
        if any(counts[w.name] is None for w in groups):
            continue
        needed = sum(n for n in counts.values() if n is not None)
        first = groups[0]
        share = ", ".join(f"{name} {n}" for name, n in counts.items() if n)
        host = host_instance(pool_instances(pool), first.server.pod.accelerators)
        assert host is not None
        if isinstance(pool, KarpenterPoolConfig):
            limit = pool.accelerator_limit or 0
            gpus = needed * host.accelerator_count
            if gpus > limit:
                yield Finding(
                    rule=CAPACITY,
                    path=f"{first.path}.replicas",
                    message=f"the workloads on pool {pool_name!r} need {needed} × {host.name} ({gpus} GPUs; {share}); "
                    f"the pool allows {limit}, so a group would wait for nodes forever",
                    fix=f"raise max_accelerators of pool {pool_name!r} to ≥ {gpus}, or lower replicas",
                )
            admitted = pool.memory_nodes(host)
            if admitted is not None and needed > admitted:
                memory = needed * host.memory_gib
                yield Finding(
                    rule=CAPACITY,
                    path=f"{first.path}.replicas",
                    message=f"the workloads on pool {pool_name!r} need {needed} × {host.name} ({memory:g} GiB of "
                    f"memory; {share}); its max_memory_gib {pool.max_memory_gib} admits {admitted}, so a group would "
                    "wait for nodes forever",
                    fix=f"raise max_memory_gib of pool {pool_name!r} to ≥ {memory:g}, or lower replicas",
                )
        elif needed > pool.max_size:
            yield Finding(
                rule=CAPACITY,
                path=f"{first.path}.replicas",
                message=f"the workloads on node group {pool_name!r} need {needed} nodes ({share}); it has max_size "
                f"{pool.max_size}, so a group would wait for nodes forever",
                fix=f"raise max_size of {pool_name!r} to ≥ {needed}, or lower replicas",
                suggestions=_fewer_replicas(config, first),
            )


def _fewer_replicas(config: InferstackConfig, resolved: ResolvedWorkload) -> tuple[dict[str, Any], ...]:
    """The most replicas (≥ 1) of the group that fit beside the pool's other workloads — checked to pass."""
    if not suggesting():
        return ()
    for replicas in range(resolved.config.replicas - 1, 0, -1):
        changes = {f"{resolved.path}.replicas": replicas}
        if viable(config, changes):
            return (changes,)
    return ()


def check_zone(config: InferstackConfig) -> Iterator[Finding]:
    """A group's ranks exchange activations every step: its nodes belong in one Availability Zone (cross-zone
    latency and data charges). A group that requests EFA on an EFA pool is judged by EFA-AZ; one that does not
    (EFA off, or a pool that may span zones without a placement group) is judged here."""
    for path, workload in _workloads(config):
        pool = config.pool(workload.pool)
        if pool.availability_zone is None and not (pool.efa and workload.efa):
            yield Finding(
                rule=ZONE,
                path=f"{path}.pool",
                message=f"pool {pool.name!r} spans all {config.network.az_count} zones, so a group's {workload.nodes} "
                "nodes may land in different zones: every pipeline step then crosses zones (latency, cross-AZ "
                "data charges)",
                fix=f"pin pool {pool.name!r} to one zone (availability_zone: 0), or accept this warning",
                severity=Severity.WARNING,
            )


def check_efa(config: InferstackConfig) -> Iterator[Finding]:
    """On an EFA pool the group should request the EFA devices (``efa: true``), or NCCL between its nodes runs over
    the ENA interface only."""
    for path, workload in _workloads(config):
        pool = config.pool(workload.pool)
        if pool.efa and not workload.efa:
            yield Finding(
                rule=EFA,
                path=f"{path}.efa",
                message=f"pool {pool.name!r} has EFA, but the workload does not request it: the {workload.nodes} "
                "nodes of a group talk over TCP",
                fix="set efa: true",
                severity=Severity.WARNING,
                suggestions=({f"{path}.efa": True},),
            )


def _efa_stack_missing(facts: ImageFacts | None) -> str:
    if facts is None:
        return "libfabric / aws-ofi-nccl"
    return " / ".join(n for n, has in (("libfabric", facts.libfabric), ("aws-ofi-nccl", facts.aws_ofi_nccl)) if not has)


def check_efa_image(config: InferstackConfig) -> Iterator[Finding]:
    """NCCL reaches EFA only through libfabric and the aws-ofi-nccl plugin — read from the image's facts
    (:mod:`inferstack.catalog.images`). The upstream vllm/vllm-openai images carry neither (docker/Dockerfile at
    v0.19.0: libibverbs and NCCL only), so NCCL falls back to TCP sockets without an error; the default AWS Deep
    Learning Container has both. An image without facts is not judged (ENGINE-FLAGS-UNVERIFIED names it)."""
    for path, workload in _workloads(config):
        image = workload.image(AcceleratorKind.NVIDIA)
        facts = image_facts(image)
        stock = facts is not None and not (facts.libfabric and facts.aws_ofi_nccl)
        most = max(t.accelerator_count for t in pool_instances(config.pool(workload.pool)))
        if stock and workload.engine.tensor_parallel_size > most:
            yield Finding(
                rule=EFA_IMAGE,
                path=f"{path}.engine.tensor_parallel_size",
                message=f"tensor_parallel_size {workload.engine.tensor_parallel_size} spans nodes of {most} GPUs: an "
                f"all-reduce per layer between nodes, and {image} (no {_efa_stack_missing(facts)}) runs it over "
                "TCP sockets",
                fix=f"keep tensor parallelism inside a node (tensor_parallel_size {most}, pipeline_parallel_size = "
                "nodes), or use a vLLM image with the EFA stack",
                severity=Severity.WARNING,
            )
        elif workload.efa and stock:
            yield Finding(
                rule=EFA_IMAGE,
                path=f"{path}.engine.image",
                message=f"{image} has no {_efa_stack_missing(facts)}: the EFA devices are attached "
                "but NCCL between the nodes runs over TCP sockets, silently (NCCL_DEBUG=INFO would log NET/Socket)",
                fix=f"leave engine.image unset (the default {ENGINE_IMAGES['vllm-gpu']} has the EFA stack) or set "
                "another image with libfabric and aws-ofi-nccl, or accept this warning",
                severity=Severity.WARNING,
            )


RULES = (
    Rule(id=ACCELERATOR, title="Multi-node vLLM runs on GPU pools", check=check_accelerator, acknowledgeable=False),
    Rule(id=CAPACITY, title="The pool holds every node of every group", check=check_capacity),
    Rule(id=ZONE, title="A multi-node group stays in one zone", check=check_zone),
    Rule(id=EFA, title="Multi-node groups on EFA pools request EFA", check=check_efa),
    Rule(id=EFA_IMAGE, title="EFA needs libfabric and aws-ofi-nccl in the image", check=check_efa_image),
)

register_viability_checks(check_accelerator, check_capacity)
