"""Rules of the ``vllm_multinode`` kind: GPU pools only, the pool holds whole groups, the group's traffic stays in
one zone and on EFA where the nodes have it, and the image can use EFA at all."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.config.compute import KarpenterPoolConfig
from inferstack.config.model import InferstackConfig
from inferstack.config.vllm_multinode import VllmMultinodeWorkloadConfig
from inferstack.plan import resolve
from inferstack.plan.placement import host_instance, pool_instances
from inferstack.rules.base import Finding, Rule, Severity

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


def check_accelerator(config: InferstackConfig) -> Iterator[Finding]:
    """vLLM's multi-node mode needs NVIDIA GPUs: the pinned Neuron stack (vllm-neuron 0.5) serves one node."""
    for path, workload in _all(config):
        accelerator = config.pool(workload.pool).accelerator
        if accelerator is not AcceleratorKind.NVIDIA:
            yield Finding(
                rule=ACCELERATOR,
                path=f"{path}.pool",
                message=f"pool {workload.pool!r} has {accelerator.value} nodes; vllm_multinode spans NVIDIA GPU nodes "
                "(NCCL between the nodes' ranks) — inferstack's Neuron image serves one node",
                fix="use a GPU pool, or kind: vllm on one Neuron node (a larger instance, e.g. trn1.32xlarge)",
            )


def check_capacity(config: InferstackConfig) -> Iterator[Finding]:
    """A replica starts only when all of its nodes run: the pool must be able to hold ``nodes × replicas`` nodes
    (a partial group holds its GPUs and waits forever)."""
    for resolved in resolve(config).workloads:
        workload = resolved.config
        if (
            not isinstance(workload, VllmMultinodeWorkloadConfig)
            or resolved.pool.accelerator is not AcceleratorKind.NVIDIA
        ):
            continue
        pool = config.pool(workload.pool)
        plan = resolved.server.pod
        host = host_instance(pool_instances(pool), plan.accelerators)
        if host is None or not plan.accelerators:
            continue  # PARALLEL-NODE / SCHEDULING say why
        per_node = max(1, host.accelerator_count // plan.accelerators)
        nodes = -(-workload.nodes * workload.replicas // per_node)
        if isinstance(pool, KarpenterPoolConfig):
            limit = pool.accelerator_limit or 0
            needed = nodes * host.accelerator_count
            if needed > limit:
                yield Finding(
                    rule=CAPACITY,
                    path=f"{resolved.path}.replicas",
                    message=f"{workload.replicas} replica(s) × {workload.nodes} nodes need {nodes} × {host.name} "
                    f"({needed} GPUs); pool {pool.name!r} allows {limit}, so a group would wait for nodes forever",
                    fix=f"raise max_accelerators of pool {pool.name!r} to ≥ {needed}, or lower replicas",
                )
        elif nodes > pool.max_size:
            yield Finding(
                rule=CAPACITY,
                path=f"{resolved.path}.replicas",
                message=f"{workload.replicas} replica(s) × {workload.nodes} nodes need {nodes} nodes; node group "
                f"{pool.name!r} has max_size {pool.max_size}, so a group would wait for nodes forever",
                fix=f"raise max_size of {pool.name!r} to ≥ {nodes}, or lower replicas",
                suggestions=({f"{resolved.path}.replicas": pool.max_size * per_node // workload.nodes},)
                if pool.max_size * per_node >= workload.nodes
                else (),
            )


def check_zone(config: InferstackConfig) -> Iterator[Finding]:
    """A group's ranks exchange activations every step: its nodes belong in one Availability Zone (cross-zone
    latency and data charges; EFA pools are pinned already by EFA-AZ)."""
    for path, workload in _workloads(config):
        pool = config.pool(workload.pool)
        if pool.availability_zone is None and not pool.efa:
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


def check_efa_image(config: InferstackConfig) -> Iterator[Finding]:
    """NCCL reaches EFA only through libfabric and the aws-ofi-nccl plugin. vllm/vllm-openai:v0.19.0 carries neither
    (docker/Dockerfile at v0.19.0: libibverbs and NCCL only), so NCCL falls back to TCP sockets without an error."""
    for path, workload in _workloads(config):
        if workload.efa and workload.image(AcceleratorKind.NVIDIA) == ENGINE_IMAGES["vllm-gpu"]:
            yield Finding(
                rule=EFA_IMAGE,
                path=f"{path}.engine.image",
                message=f"{ENGINE_IMAGES['vllm-gpu']} has no libfabric / aws-ofi-nccl: the EFA devices are attached "
                "but NCCL between the nodes runs over TCP sockets, silently (NCCL_DEBUG=INFO would log NET/Socket)",
                fix="set engine.image to a vLLM image with the EFA stack (the AWS Deep Learning Container for vLLM, or "
                "vllm-openai with the EFA installer and aws-ofi-nccl), or accept this warning",
                severity=Severity.WARNING,
            )


RULES = (
    Rule(id=ACCELERATOR, title="Multi-node vLLM runs on GPU pools", check=check_accelerator, acknowledgeable=False),
    Rule(id=CAPACITY, title="The pool holds every node of every group", check=check_capacity),
    Rule(id=ZONE, title="A multi-node group stays in one zone", check=check_zone),
    Rule(id=EFA, title="Multi-node groups on EFA pools request EFA", check=check_efa),
    Rule(id=EFA_IMAGE, title="EFA needs libfabric and aws-ofi-nccl in the image", check=check_efa_image),
)
