"""Serving rules: the model fits the accelerators, the parallelism fits a node and the model, the pod fits a
pool, probes wait long enough, accelerators are limited. Each finding names the field and a configuration that
would work."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from inferstack.catalog.instances import AcceleratorKind, InstanceType
from inferstack.catalog.kubernetes import SYSTEM_POOL
from inferstack.catalog.versions import NEURON_SERVING_DEVICES
from inferstack.config.compute import AcceleratedNodeGroupConfig, KarpenterPoolConfig
from inferstack.config.model import InferstackConfig
from inferstack.config.workloads import ModelSourceType
from inferstack.plan import resolve
from inferstack.plan.placement import (
    PodPlan,
    fits_node,
    host_instance,
    pool_instances,
    pool_taints,
)
from inferstack.plan.served import (
    ServedEngine,
    engines,
    memory_per_rank_gib,
    neuron_sizing_input,
    ranks_per_node,
    sizing_for,
    sizing_input,
)
from inferstack.rules.base import Finding, Rule, Severity
from inferstack.rules.suggestions import register_viability_checks, suggesting, viable
from inferstack.sizing.model import SizingResult, longest_fitting_len
from inferstack.sizing.neuron import longest_fitting_neuron_len

FIT = "MODEL-FIT"
PARALLEL_NODE = "PARALLEL-NODE"
TP_HEADS = "TP-HEADS"
NEURON_CORES = "NEURON-CORES"
SCHEDULING = "SCHEDULING"
STARTUP = "STARTUP-PROBE"
NEURON_ARTIFACTS = "NEURON-ARTIFACTS"
NEURON_STACK = "NEURON-STACK"
#: Flags inferstack derives for Neuron engines (the compiled KV layout).
NEURON_KV_FLAGS = frozenset({"--block-size", "--num-gpu-blocks-override"})


#: Most nodes a suggested multi-node replica spans.
MAX_SUGGESTED_NODES = 4
MULTINODE_KIND = "vllm_multinode"


_workloads = engines


def valid_tp(workload: ServedEngine, instance: InstanceType) -> list[int]:
    """Tensor-parallel sizes that divide the heads and whose replica the workload's nodes of ``instance`` hold."""
    heads = workload.model.arch.attention_heads
    step = instance.neuron_cores_per_device if instance.accelerator is AcceleratorKind.NEURON else 1
    limit = ranks_per_node(instance) * workload.nodes // workload.engine.pipeline_parallel_size
    return [tp for tp in range(step, limit + 1, step) if heads % tp == 0]


def check_fit(config: InferstackConfig) -> Iterator[Finding]:
    """The weights and one max_model_len sequence of KV cache fit the accelerators (vLLM refuses otherwise).
    Suggests the smallest TP and the longest max_model_len that pass every rule."""
    for path, workload in _workloads(config):
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
        found += _more_nodes(config, path, workload)
    return tuple(found)


def _more_nodes(config: InferstackConfig, path: str, workload: ServedEngine) -> list[dict[str, Any]]:
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


def _describe(changes: Mapping[str, Any]) -> str:
    """A multi-node suggestion in words."""
    nodes = next(v for k, v in changes.items() if k.endswith(".nodes"))
    tp = next(v for k, v in changes.items() if k.endswith("tensor_parallel_size"))
    efa = " with efa: true" if any(k.endswith(".efa") for k in changes) else ""
    return (
        f"kind: {MULTINODE_KIND} with nodes: {nodes} (tensor_parallel_size {tp} per node × "
        f"pipeline_parallel_size {nodes} across nodes{efa})"
    )


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
            options.append(_describe(changes))
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
        options.append(
            "a pool with more accelerator memory (e.g. p5e/p5en H200, p6-b200), quantization: fp8, "
            f"kv_cache_dtype: fp8, or more nodes per replica (kind: {MULTINODE_KIND})"
        )
    return "use " + " or ".join(options)


def check_parallel_node(config: InferstackConfig) -> Iterator[Finding]:
    """A pod's ranks (TP × PP, divided over ``nodes`` for ``vllm_multinode``) must be on one node; where no node
    holds them, the fix is a smaller TP that still fits, another pool, or more nodes per replica."""
    for path, workload in _workloads(config):
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
                options.append(_describe(changes))
            elif f"{workload.workload_path}.pool" in changes:
                name = changes[f"{workload.workload_path}.pool"]
                kinds = ", ".join(sorted(t.name for t in pool_instances(config.pool(name))))
                options.append(f"pool {name} ({kinds})")
            else:
                options.append(f"tensor_parallel_size {changes[f'{path}.engine.tensor_parallel_size']}")
        if options:
            fix = "use " + " or ".join(options)
        else:
            fix = (
                "no pool's node holds it with a TP that fits: add a pool of "
                f"{', '.join(bigger) if bigger else f'instances with ≥ {parallel} {unit}'}, or serve it across "
                f"nodes (kind: {MULTINODE_KIND}, GPU pools)"
            )
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
    return (*found, *_more_nodes(config, path, workload))


def check_tp_heads(config: InferstackConfig) -> Iterator[Finding]:
    """vLLM shards attention heads across TP ranks: the head count must divide evenly."""
    for path, workload in _workloads(config):
        heads, tp = workload.model.arch.attention_heads, workload.engine.tensor_parallel_size
        if heads % tp:
            divisors = [d for d in (1, 2, 4, 8, 16, 32, 64) if heads % d == 0]
            field = f"{path}.engine.tensor_parallel_size"
            ranked = sorted(divisors, key=lambda d: (abs(d - tp), -d))
            passing = [d for d in ranked if suggesting() and viable(config, {field: d})]
            yield Finding(
                rule=TP_HEADS,
                path=field,
                message=f"{workload.model.id} has {heads} attention heads, not divisible by tensor_parallel_size {tp}",
                fix=f"use a tensor_parallel_size that divides {heads}: {', '.join(map(str, divisors))}"
                + (f" ({passing[0]} fits this pool)" if passing else ""),
                suggestions=({field: passing[0]},) if passing else (),
            )


def check_neuron_cores(config: InferstackConfig) -> Iterator[Finding]:
    """On Neuron, TP counts NeuronCores, which come in whole devices (inf2/trn1: 2 per device, trn2: 8)."""
    for path, workload in _workloads(config):
        instances = pool_instances(config.pool(workload.pool))
        if instances[0].accelerator is not AcceleratorKind.NEURON:
            continue
        per_device = instances[0].neuron_cores_per_device
        tp = workload.engine.tensor_parallel_size
        if tp % per_device:
            field = f"{path}.engine.tensor_parallel_size"
            multiples = list(range(per_device, 4 * max(tp, per_device) + 1, per_device))
            ranked = sorted(multiples, key=lambda m: (abs(m - tp), m))
            passing = [m for m in ranked if suggesting() and viable(config, {field: m})]
            yield Finding(
                rule=NEURON_CORES,
                path=field,
                suggestions=({field: passing[0]},) if passing else (),
                message=f"tensor_parallel_size {tp} NeuronCores is not a whole number of "
                f"{instances[0].accelerator_model} devices ({per_device} cores each): the pod requests "
                "aws.amazon.com/neuron in devices",
                fix=f"use a multiple of {per_device} (e.g. {max(per_device, tp - tp % per_device)})",
            )


def check_neuron_artifacts(config: InferstackConfig) -> Iterator[Finding]:
    """Neuron servers load weights and pre-compiled artifacts from the model bucket (never compile at start)."""
    for path, workload in _workloads(config):
        if config.pool(workload.pool).accelerator is not AcceleratorKind.NEURON:
            continue
        if workload.model.source.type is not ModelSourceType.S3 or config.storage.model_bucket is None:
            yield Finding(
                rule=NEURON_ARTIFACTS,
                path=f"{path}.model.source.type",
                message=f"Neuron workloads read weights and the compile Job's artifacts from the model bucket; "
                f"source {workload.model.source.type.value} has no place for pre-compiled artifacts",
                fix="use source type s3 (the default) with storage.model_bucket",
            )


def check_scheduling(config: InferstackConfig) -> Iterator[Finding]:
    """Every role's pod (requests, node selector, tolerations) fits a node of its pool ("will it schedule")."""
    for resolved in resolve(config).workloads:
        index, workload = resolved.index, resolved.config
        seen: list[PodPlan] = []
        for role in resolved.roles.values():
            if role.pod in seen or role.pool == SYSTEM_POOL:
                continue  # a leader and its workers are the same pod; the system nodes are not a compute pool
            seen.append(role.pod)
            pool = config.pool(role.pool or workload.pool)
            plan = role.pod
            fits, reason = fits_node(plan, pool)
            if fits:
                continue
            others = []
            for candidate in config.compute.pools:
                if candidate.name == pool.name:
                    continue
                moved = PodPlan(
                    **{
                        **plan.__dict__,
                        "node_selector": {"inferstack.io/pool": candidate.name},
                        "tolerations": plan.tolerations | _taints(candidate),
                    }
                )
                ok, instance = fits_node(moved, candidate)
                changes = {f"workloads[{index}].pool": candidate.name}
                if ok and suggesting() and viable(config, changes):
                    others.append((f"{candidate.name} ({instance})", changes))
            fix = (
                f"move the workload to pool {' or '.join(text for text, _ in others)}"
                if others
                else "add a pool whose instances hold the request, or lower tensor_parallel_size / resources"
            )
            pod = "pod" if len(resolved.roles) == 1 else f"{role.name} pod"
            yield Finding(
                rule=SCHEDULING,
                path=f"workloads[{index}].pool",
                message=f"the {pod} would stay Pending: pool {pool.name!r} cannot run it — {reason}",
                fix=fix,
                suggestions=tuple(changes for _, changes in others),
            )
            break


def _taints(pool: AcceleratedNodeGroupConfig | KarpenterPoolConfig) -> frozenset[tuple[str, str]]:
    return frozenset(pool_taints(pool))


def check_startup(config: InferstackConfig) -> Iterator[Finding]:
    """An explicit startup timeout must cover the estimated model load, or Kubernetes kills the loading pod."""
    for resolved in resolve(config).workloads:
        workload, index = resolved.config, resolved.index
        if workload.startup_timeout_seconds is None:
            continue
        needed = resolved.server.pod.estimated_startup_seconds
        if workload.startup_timeout_seconds < needed:
            nodes = workload_nodes(workload)
            group = f" on each of {nodes} nodes, form the group" if nodes > 1 else ""
            source = "its cache" if not workload.model_entries else workload.model.source.type.value
            yield Finding(
                rule=STARTUP,
                path=f"workloads[{index}].startup_timeout_seconds",
                message=f"{workload.startup_timeout_seconds}s is shorter than the ~{needed}s estimated to load "
                f"{workload.model.arch.weights_gib:.0f} GiB from {source}{group} and start "
                "the engine: the pod would be restarted in a loop",
                fix=f"set startup_timeout_seconds ≥ {needed} or remove it (inferstack sizes it from the model)",
                suggestions=({f"workloads[{index}].startup_timeout_seconds": needed},),
            )


def workload_nodes(workload: object) -> int:
    """Nodes one replica spans (1 for single-node kinds)."""
    return int(getattr(workload, "nodes", 1))


def check_neuron_stack(config: InferstackConfig) -> Iterator[Finding]:
    """What the pinned Neuron serving stack (vLLM 0.16 + vllm-neuron 0.5 on NxD Inference, SDK 2.31.1) can run:
    Inferentia2 and Trainium1 only, no pipeline parallelism, KV cache in the model dtype."""
    for path, workload in _workloads(config):
        pool = config.pool(workload.pool)
        if pool.accelerator is not AcceleratorKind.NEURON:
            continue
        devices = sorted({t.accelerator_model for t in pool_instances(pool)} - NEURON_SERVING_DEVICES)
        if devices:
            yield Finding(
                rule=NEURON_STACK,
                path=f"{path}.pool",
                message=f"pool {pool.name!r} has {', '.join(devices)} devices; inferstack's Neuron image (vLLM 0.16 "
                "with vllm-neuron 0.5, Neuron SDK 2.31.1) serves Inferentia2 and Trainium1 only — Trn2/Trn3 need "
                "the vllm-neuron 0.24+ plugin (SDK 2.32+), which inferstack does not render yet",
                fix="use an inf2 or trn1 pool for this workload",
            )
        if workload.engine.pipeline_parallel_size > 1:
            yield Finding(
                rule=NEURON_STACK,
                path=f"{path}.engine.pipeline_parallel_size",
                message=f"{workload.engine.pipeline_parallel_size} — vllm-neuron 0.5 raises NotImplementedError for "
                "pipeline parallelism",
                fix="use pipeline_parallel_size: 1 and raise tensor_parallel_size (NeuronCores) instead",
            )
        if workload.engine.kv_cache_dtype.value != "auto":
            yield Finding(
                rule=NEURON_STACK,
                path=f"{path}.engine.kv_cache_dtype",
                message=f"{workload.engine.kv_cache_dtype.value} — vllm-neuron 0.5 does not pass the KV cache dtype "
                "to NxD Inference, so the setting would be ignored without a word",
                fix="use kv_cache_dtype: auto on Neuron",
            )
        yield from _neuron_compile_capacity(config, path, workload, pool)
        kv_flags = [a for a in workload.engine.extra_args if a.split("=", 1)[0] in NEURON_KV_FLAGS]
        if kv_flags:
            yield Finding(
                rule=NEURON_STACK,
                path=f"{path}.engine.extra_args",
                message=f"{', '.join(kv_flags)} — inferstack sets the KV block size and block count on Neuron (the "
                "compiled model's KV layout and vllm-neuron's prefix-caching assertion depend on them)",
                fix="remove them; use enable_prefix_caching / max_model_len / max_num_seqs instead",
            )
        elif workload.engine.extra_args:
            yield Finding(
                rule=NEURON_STACK,
                path=f"{path}.engine.extra_args",
                message="the Neuron compile Job compiles the typed engine settings only; a server started with other "
                "flags loads the pre-compiled model and ignores them (vllm-neuron loads NEURON_COMPILED_ARTIFACTS "
                "as is), and vLLM 0.16's flags are not vendored, so they are unchecked",
                fix="express the settings through typed engine fields, or accept this warning",
                severity=Severity.WARNING,
            )


def _neuron_compile_capacity(
    config: InferstackConfig,
    path: str,
    workload: ServedEngine,
    pool: AcceleratedNodeGroupConfig | KarpenterPoolConfig,
) -> Iterator[Finding]:
    """The servers hold their Neuron devices while they wait for the compile Job, which needs the same devices: the
    pool must hold the starting replicas and the Job at once, or the Job never schedules (a deadlock)."""
    plan = resolve(config).workload(workload.workload).server.pod
    host = host_instance(pool_instances(pool), plan.accelerators)
    if host is None or not plan.accelerators:
        return  # PARALLEL-NODE / SCHEDULING say why
    scaling, replicas = workload.workload.autoscaling, workload.workload.replicas
    replicas = scaling.min_replicas if scaling else replicas
    per_node = host.accelerator_count // plan.accelerators
    nodes = math.ceil((replicas + 1) / per_node)
    if isinstance(pool, KarpenterPoolConfig):
        limit = pool.accelerator_limit or 0
        if nodes * host.accelerator_count > limit:
            yield Finding(
                rule=NEURON_STACK,
                path=f"{path}.pool",
                message=f"{replicas} starting replica(s) and the compile Job need {nodes} × {host.name} "
                f"({nodes * host.accelerator_count} Neuron devices); pool {pool.name!r} allows {limit}, and the "
                "servers hold their devices while they wait for the compile",
                fix=f"raise compute.karpenter_pools max_accelerators of {pool.name!r} to ≥ "
                f"{nodes * host.accelerator_count}, or start with fewer replicas",
            )
    elif nodes > pool.max_size:
        yield Finding(
            rule=NEURON_STACK,
            path=f"{path}.pool",
            message=f"{replicas} starting replica(s) and the compile Job need {nodes} nodes of node group "
            f"{pool.name!r}, which has max_size {pool.max_size}; the servers hold their devices while they wait",
            fix=f"raise max_size of {pool.name!r} to ≥ {nodes}, or start with fewer replicas",
        )


RULES = (
    Rule(id=TP_HEADS, title="Tensor parallelism divides the attention heads", check=check_tp_heads),
    Rule(id=NEURON_CORES, title="Neuron TP is a whole number of devices", check=check_neuron_cores),
    Rule(
        id=NEURON_ARTIFACTS,
        title="Neuron servers load pre-compiled artifacts",
        check=check_neuron_artifacts,
        acknowledgeable=False,
    ),
    Rule(id=PARALLEL_NODE, title="TP × PP fits one node", check=check_parallel_node),
    Rule(id=FIT, title="Weights and one sequence of KV cache fit", check=check_fit),
    Rule(id=SCHEDULING, title="Every serving pod fits a node of its pool", check=check_scheduling),
    Rule(id=STARTUP, title="Startup probe covers the model load", check=check_startup),
    Rule(id=NEURON_STACK, title="Neuron workloads fit the pinned Neuron stack", check=check_neuron_stack),
)


register_viability_checks(check_tp_heads, check_neuron_cores, check_parallel_node, check_fit, check_scheduling)
