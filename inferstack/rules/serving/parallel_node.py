"""PARALLEL-NODE: a pod's ranks (tensor × pipeline parallel, divided over ``nodes`` for ``vllm_multinode``) must
be on one node, since a pod cannot span nodes. Where no node of the pool holds them, the finding suggests the
largest tensor-parallel size that still fits, another pool that holds the current one, or more nodes per replica."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.model import InferstackConfig
from inferstack.plan.placement import pool_instances
from inferstack.plan.served import ServedEngine, engines, ranks_per_node, serving_instances, sizing_for
from inferstack.rules.base import Finding, Rule
from inferstack.rules.serving.common import across_nodes, describe_more_nodes, more_nodes, span_pods
from inferstack.rules.suggestions import suggesting, viable

PARALLEL_NODE = "PARALLEL-NODE"


def check_parallel_node(config: InferstackConfig) -> Iterator[Finding]:
    """A pod's ranks (TP × PP, divided over ``nodes`` for ``vllm_multinode``) must be on one node; where no node
    holds them, the fix is a smaller TP that still fits, another pool, or more nodes per replica."""
    for path, workload in engines(config):
        parallel = workload.ranks_per_pod
        instances = pool_instances(config.pool(workload.pool))
        most = max(ranks_per_node(t) for t in instances)
        if parallel <= most:
            continue
        unit = "NeuronCores" if instances[0].accelerator is AcceleratorKind.NEURON else "GPUs"
        bigger = sorted(
            {
                t.name
                for p in config.compute.pools
                for t in pool_instances(p)
                if t.accelerator is instances[0].accelerator and ranks_per_node(t) >= parallel
            }
        )
        suggestions = _parallel_suggestions(config, path, workload, most) if suggesting() else ()
        options = []
        for changes in suggestions:
            if f"{path}.nodes" in changes:
                options.append(describe_more_nodes(changes))
            elif f"{workload.workload_path}.workers.gpus_per_pod" in changes:
                split = changes[f"{workload.workload_path}.workers.gpus_per_pod"]
                options.append(
                    f"workers.gpus_per_pod {split} (the replica spans {workload.ranks // split} worker pods: "
                    "tensor parallel inside a pod, pipeline stages across pods)"
                )
            elif f"{workload.workload_path}.pool" in changes:
                name = changes[f"{workload.workload_path}.pool"]
                kinds = ", ".join(sorted(t.name for t in pool_instances(config.pool(name))))
                options.append(f"pool {name} ({kinds})")
            else:
                options.append(f"tensor_parallel_size {changes[f'{path}.engine.tensor_parallel_size']}")
        if options:
            fix = "use " + " or ".join(options)
        else:
            fix = "no pool's node holds it with a TP that fits: " + _bigger_or_across(workload, bigger, parallel, unit)
        spread = f" per node ({workload.nodes} nodes)" if workload.nodes > 1 else ""
        yield Finding(
            rule=PARALLEL_NODE,
            path=f"{path}.engine.tensor_parallel_size",
            message=f"tensor_parallel_size × pipeline_parallel_size = {workload.ranks}"
            f"{f' is {parallel}' + spread if spread else ''}, but pool {workload.pool!r} has at most {most} {unit} "
            "per node",
            fix=fix,
            suggestions=suggestions,
        )


def _bigger_or_across(workload: ServedEngine, bigger: list[str], parallel: int, unit: str) -> str:
    """What can hold ``parallel`` ranks: a pool of the configured types that do, else of the catalog's types inferstack
    serves on whose node the model fits (MODEL-FIT's sizing), else across nodes — never an instance type that does not
    exist, that inferstack does not serve on, or that the model does not fit."""
    accelerator = AcceleratorKind.NEURON if unit == "NeuronCores" else AcceleratorKind.NVIDIA
    top_node = max((ranks_per_node(t) for t in serving_instances(accelerator)), default=0)
    across = across_nodes(workload.workload, tp_fits=workload.engine.tensor_parallel_size <= top_node)
    if not bigger:
        bigger = sorted(
            t.name
            for t in serving_instances(accelerator)
            if ranks_per_node(t) >= parallel and sizing_for(workload, t).fits
        )
    if bigger:
        return f"add a pool of {', '.join(bigger)}, or {across}"
    top = max(serving_instances(accelerator), key=lambda t: (ranks_per_node(t), t.name), default=None)
    most = f" (the most: {ranks_per_node(top)} on {top.name})" if top is not None else ""
    return (
        f"no instance type inferstack serves on holds {parallel} {unit} on one node{most} — {across}, or lower "
        "tensor × pipeline parallel"
    )


def _parallel_suggestions(
    config: InferstackConfig, path: str, workload: ServedEngine, most: int
) -> tuple[dict[str, Any], ...]:
    """The largest TP the pool's nodes hold, another pool that holds the current TP, or more nodes per replica —
    each checked to pass."""
    found: list[dict[str, Any]] = []
    heads = workload.model.arch.attention_heads
    for tp in range(most * workload.nodes // workload.engine.pipeline_parallel_size, 0, -1):
        changes = {f"{path}.engine.tensor_parallel_size": tp}
        if heads % tp == 0 and viable(config, changes):
            found.append(changes)
            break
    for pool in config.compute.pools:
        changes = {f"{workload.workload_path}.pool": pool.name}
        if pool.name != workload.pool and viable(config, changes):
            found.append(changes)
    return (*found, *more_nodes(config, path, workload), *span_pods(config, path, workload))


RULE = Rule(id=PARALLEL_NODE, title="TP × PP fits one node", check=check_parallel_node)
