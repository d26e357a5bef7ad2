"""MODEL-FIT: the weights and one ``max_model_len`` sequence of KV cache fit the accelerators of the tightest
instance the pool may launch — vLLM refuses to start otherwise. The finding suggests the smallest larger
tensor-parallel size and the longest ``max_model_len`` that pass every rule, or else more nodes per replica."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from inferstack.catalog.instances import AcceleratorKind, InstanceType
from inferstack.config.model import InferstackConfig
from inferstack.config.ray_serve import RayServeWorkloadConfig
from inferstack.plan.placement import pool_instances
from inferstack.plan.served import (
    ServedEngine,
    engines,
    memory_per_rank_gib,
    neuron_sizing_input,
    ranks_per_node,
    sizing_for,
    sizing_input,
)
from inferstack.rules.base import Finding, Rule
from inferstack.rules.serving.common import MULTINODE_KIND, across_nodes, describe_more_nodes, more_nodes
from inferstack.rules.suggestions import suggesting, viable
from inferstack.sizing.model import SizingResult, longest_fitting_len
from inferstack.sizing.neuron import longest_fitting_neuron_len

FIT = "MODEL-FIT"


def valid_tp(workload: ServedEngine, instance: InstanceType) -> list[int]:
    """Tensor-parallel sizes that divide the heads and whose replica the workload's nodes of ``instance`` hold."""
    heads = workload.model.arch.attention_heads
    step = instance.neuron_cores_per_device if instance.accelerator is AcceleratorKind.NEURON else 1
    limit = ranks_per_node(instance) * workload.nodes // workload.engine.pipeline_parallel_size
    return [tp for tp in range(step, limit + 1, step) if heads % tp == 0]


def check_fit(config: InferstackConfig) -> Iterator[Finding]:
    """The weights and one max_model_len sequence of KV cache fit the accelerators (vLLM refuses otherwise).
    Suggests the smallest TP and the longest max_model_len that pass every rule."""
    for path, workload in engines(config):
        instances = pool_instances(config.pool(workload.pool))
        hosts = [t for t in instances if ranks_per_node(t) >= workload.ranks_per_pod]
        if not hosts:
            continue  # PARALLEL-NODE reports it
        # the tightest of the instances the pool may launch: the least memory per rank, then the smallest node
        host = min(hosts, key=lambda t: (memory_per_rank_gib(t), ranks_per_node(t), t.vcpu))
        result = sizing_for(workload, host)
        if result.fits:
            continue
        suggestions = _fit_suggestions(config, path, workload, instances, host) if suggesting() else ()
        yield Finding(
            rule=FIT,
            path=f"{path}.engine.tensor_parallel_size" if result.kv_budget_gib <= 0 else f"{path}.engine.max_model_len",
            message=_fit_message(workload, host, result),
            fix=_fit_alternatives(workload, instances, host, suggestions),
            suggestions=suggestions,
        )


def _fit_message(workload: ServedEngine, host: InstanceType, result: SizingResult) -> str:
    engine = workload.engine
    where = f"{host.name} ({host.accelerator_model}, {memory_per_rank_gib(host):.1f} GiB per rank)"
    if result.kv_budget_gib <= 0:
        return (
            f"{workload.model.id} needs {result.weights_gib:.1f} GiB of weights per rank at "
            f"tensor_parallel_size {engine.tensor_parallel_size} on {where}, leaving no room for the KV cache "
            f"(budget {result.kv_budget_gib:.1f} GiB at gpu_memory_utilization {engine.gpu_memory_utilization})"
        )
    return (
        f"the KV cache on {where} holds {result.kv_tokens:,} tokens, less than one max_model_len "
        f"{workload.max_model_len:,} sequence: vLLM refuses to start"
    )


def _fit_suggestions(
    config: InferstackConfig, path: str, workload: ServedEngine, instances: list[InstanceType], host: InstanceType
) -> tuple[dict[str, Any], ...]:
    """The smallest larger TP the pool holds, and the longest max_model_len that fits the current host — each only
    if the changed config passes every fit, parallelism and scheduling rule."""
    found: list[dict[str, Any]] = []
    current = workload.engine.tensor_parallel_size
    candidates = sorted({tp for instance in instances for tp in valid_tp(workload, instance) if tp > current})
    for tp in candidates:
        changes = {f"{path}.engine.tensor_parallel_size": tp}
        if viable(config, changes):
            found.append(changes)
            break
    if host.accelerator is AcceleratorKind.NEURON:
        prefix = workload.engine.enable_prefix_caching
        length = longest_fitting_neuron_len(neuron_sizing_input(workload, host, None, None), prefix)
    else:
        length = longest_fitting_len(sizing_input(workload, host))
    if length >= 16:
        changes = {f"{path}.engine.max_model_len": length}
        if viable(config, changes):
            found.append(changes)
    if not found:
        found += more_nodes(config, path, workload)
    return tuple(found)


def _fit_alternatives(
    workload: ServedEngine,
    instances: list[InstanceType],
    host: InstanceType,
    suggestions: tuple[Mapping[str, Any], ...],
) -> str:
    options: list[str] = []
    by_size = sorted(instances, key=lambda t: (ranks_per_node(t), t.vcpu))
    for changes in suggestions:
        if any(k.endswith(".kind") or k.endswith(".nodes") for k in changes):
            options.append(describe_more_nodes(changes))
            continue
        ((field, value),) = changes.items()
        if field.endswith("tensor_parallel_size"):
            ranks = value * workload.engine.pipeline_parallel_size // workload.nodes
            instance = next(t for t in by_size if ranks_per_node(t) >= ranks)
            result = sizing_for(workload, instance, tp=value)
            options.append(
                f"tensor_parallel_size {value} on {instance.name} "
                f"({result.kv_tokens:,} KV tokens, {result.concurrency:.1f}× concurrency)"
            )
        else:
            options.append(f"max_model_len ≤ {value:,} on {host.name}")
    if not options:
        spread = (
            across_nodes(workload.workload)
            if isinstance(workload.workload, RayServeWorkloadConfig)
            else (f"more nodes per replica (kind: {MULTINODE_KIND})")
        )
        options.append(
            "a pool with more accelerator memory (e.g. p5e/p5en H200, p6-b200), quantization: fp8, "
            f"kv_cache_dtype: fp8, or {spread}"
        )
    return "use " + " or ".join(options)


RULE = Rule(id=FIT, title="Weights and one sequence of KV cache fit", check=check_fit)
