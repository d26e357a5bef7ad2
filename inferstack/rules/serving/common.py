"""What the serving rules share: a multi-node replica as the fix where one node cannot hold the model — MODEL-FIT
and PARALLEL-NODE both suggest it — and how such a suggestion reads in a finding's fix."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.model import InferstackConfig
from inferstack.config.ray_serve import RayServeWorkloadConfig
from inferstack.plan.placement import pool_instances
from inferstack.plan.served import ServedEngine, ranks_per_node
from inferstack.rules.suggestions import viable

#: Most nodes a suggested multi-node replica spans.
MAX_SUGGESTED_NODES = 4
MULTINODE_KIND = "vllm_multinode"


def more_nodes(config: InferstackConfig, path: str, workload: ServedEngine) -> list[dict[str, Any]]:
    """The fewest nodes per replica that hold the model, as pipeline stages across nodes (tensor parallelism stays
    inside a node): ``kind: vllm_multinode`` with ``nodes`` = ``pipeline_parallel_size``, EFA on where the pool has
    it — checked to pass. None on Neuron (the pinned Neuron stack serves single nodes only)."""
    pool = config.pool(workload.pool)
    if pool.accelerator is not AcceleratorKind.NVIDIA or not workload.multinode:
        return []
    tp = workload.engine.tensor_parallel_size
    most = max(ranks_per_node(t) for t in pool_instances(pool))
    tp = tp if tp <= most else most
    for nodes in range(max(2, workload.nodes + 1), MAX_SUGGESTED_NODES + 1):
        changes: dict[str, Any] = {
            f"{path}.kind": MULTINODE_KIND,
            f"{path}.nodes": nodes,
            f"{path}.engine.tensor_parallel_size": tp,
            f"{path}.engine.pipeline_parallel_size": nodes,
        }
        if pool.efa:
            changes[f"{path}.efa"] = True
        if viable(config, changes):
            return [changes]
    return []


def describe_more_nodes(changes: Mapping[str, Any]) -> str:
    """A multi-node suggestion (of :func:`more_nodes`) in words."""
    nodes = next(v for k, v in changes.items() if k.endswith(".nodes"))
    tp = next(v for k, v in changes.items() if k.endswith("tensor_parallel_size"))
    efa = " with efa: true" if any(k.endswith(".efa") for k in changes) else ""
    return (
        f"kind: {MULTINODE_KIND} with nodes: {nodes} (tensor_parallel_size {tp} per node × "
        f"pipeline_parallel_size {nodes} across nodes{efa})"
    )


def ray_pod_split(tp: int, replica: int, node: int) -> int | None:
    """The most GPUs per Ray worker pod (``workers.gpus_per_pod``) a node of ``node`` GPUs holds that keep each TP
    group of ``tp`` in one pod and divide a replica of ``replica`` ranks into whole pods; None when TP itself
    exceeds the node."""
    return next((m for m in range(min(node, replica), 0, -1) if m % tp == 0 and replica % m == 0), None)


def span_pods(config: InferstackConfig, path: str, workload: ServedEngine) -> list[dict[str, Any]]:
    """A Ray Serve replica spanning worker pods — ``workers.gpus_per_pod`` a node's GPUs, pipeline stages across
    pods — checked to pass. None for other kinds, or where a node cannot hold one TP group."""
    if not isinstance(workload.workload, RayServeWorkloadConfig):
        return []
    pool = config.pool(workload.pool)
    if pool.accelerator is not AcceleratorKind.NVIDIA:
        return []
    node = max(ranks_per_node(t) for t in pool_instances(pool))
    split = ray_pod_split(workload.engine.tensor_parallel_size, workload.ranks, node)
    if split is None or split >= workload.ranks:
        return []
    changes: dict[str, Any] = {f"{workload.workload_path}.workers.gpus_per_pod": split}
    return [changes] if viable(config, changes) else []


def across_nodes(workload: object, tp_fits: bool = True) -> str:
    """How ``workload``'s kind spreads one replica over nodes, for a fix text; ``tp_fits``: its tensor-parallel size
    fits a node (else it must come down first, pipeline stages taking the rest)."""
    if isinstance(workload, RayServeWorkloadConfig) and workload.prefill_decode is not None:
        return (
            "serve it without prefill_decode (its sides take no pipeline stages; without it a replica's stages can "
            "span worker pods)"
        )
    if isinstance(workload, RayServeWorkloadConfig):
        lower = "" if tp_fits else "lower tensor_parallel_size to a node's GPUs and raise pipeline_parallel_size, then "
        return (
            f"{lower}span worker pods (workers.gpus_per_pod a node's GPUs, a multiple of tensor_parallel_size: "
            "pipeline stages across pods)"
        )
    return f"serve it across nodes (kind: {MULTINODE_KIND}, GPU pools)"
