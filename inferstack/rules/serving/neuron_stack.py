"""NEURON-STACK: what the pinned Neuron serving stack (vLLM 0.16 + vllm-neuron 0.5 on NxD Inference, Neuron SDK
2.31.1) can run — Inferentia2 and Trainium1 devices only, no pipeline parallelism, the KV cache in the model dtype,
the KV block settings left to inferstack — and whether the pool holds the starting replicas and the compile Job at
once (the servers hold their devices while they wait for it). Extra engine flags are a warning: the compile Job
compiles the typed settings only."""

from __future__ import annotations

import math
from collections.abc import Iterator

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.versions import NEURON_SERVING_DEVICES
from inferstack.config.compute import AcceleratedNodeGroupConfig, KarpenterPoolConfig
from inferstack.config.model import InferstackConfig
from inferstack.plan import resolve
from inferstack.plan.placement import host_instance, pool_instances
from inferstack.plan.served import ServedEngine, engines
from inferstack.rules.base import Finding, Rule, Severity

NEURON_STACK = "NEURON-STACK"
#: Flags inferstack derives for Neuron engines (the compiled KV layout).
NEURON_KV_FLAGS = frozenset({"--block-size", "--num-gpu-blocks-override"})


def check_neuron_stack(config: InferstackConfig) -> Iterator[Finding]:
    """What the pinned Neuron serving stack (vLLM 0.16 + vllm-neuron 0.5 on NxD Inference, SDK 2.31.1) can run:
    Inferentia2 and Trainium1 only, no pipeline parallelism, KV cache in the model dtype."""
    for path, workload in engines(config):
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


RULE = Rule(id=NEURON_STACK, title="Neuron workloads fit the pinned Neuron stack", check=check_neuron_stack)
