"""Rules of the single-node engines besides vLLM: ``ENGINE-FIT`` (SGLang's and TGI's weights and one sequence of KV
cache fit their GPUs — the vLLM memory model, with SGLang's ``mem_fraction_static`` and TGI's
``cuda_memory_fraction`` as the memory share; Ollama's GGUF models are not sized), ``OLLAMA-CPU-ON-GPU`` (a CPU
engine holding a GPU node, a warning), plus the shared scheduling and startup rules and the unchecked-flags warning."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.engine import Quantization, VllmEngineConfig
from inferstack.config.model import InferstackConfig
from inferstack.config.ollama import OllamaWorkloadConfig
from inferstack.config.sglang import SglangWorkloadConfig
from inferstack.config.tgi import TgiWorkloadConfig
from inferstack.plan.placement import pool_instances
from inferstack.plan.served import ServedEngine, sizing_for
from inferstack.rules import engine_flags, serving
from inferstack.rules.base import Finding, Rule, Severity

FIT = "ENGINE-FIT"
OLLAMA_GPU = "OLLAMA-CPU-ON-GPU"


@dataclass(frozen=True)
class _Sized:
    """An engine's sizing in vLLM's terms, and the config fields that set each quantity."""

    engine: VllmEngineConfig
    ranks_field: str
    length_field: str


def _sized(workload: object) -> _Sized | None:
    if isinstance(workload, SglangWorkloadConfig):
        e = workload.engine
        quantization = Quantization.FP8 if e.quantization and e.quantization.value == "fp8" else None
        return _Sized(
            VllmEngineConfig(
                tensor_parallel_size=e.tensor_parallel_size,
                gpu_memory_utilization=min(0.98, e.sizing_memory_fraction),
                max_model_len=e.context_length,
                max_num_batched_tokens=min(e.context_length, 8192),
                quantization=quantization,
            ),
            "engine.tensor_parallel_size",
            "engine.context_length",
        )
    if isinstance(workload, TgiWorkloadConfig):
        e = workload.engine
        quantization = Quantization.FP8 if e.quantize and e.quantize.value == "fp8" else None
        return _Sized(
            VllmEngineConfig(
                tensor_parallel_size=e.num_shard,
                gpu_memory_utilization=min(0.95, e.cuda_memory_fraction),
                max_model_len=e.max_total_tokens,
                max_num_batched_tokens=min(e.max_total_tokens, 8192),
                quantization=quantization,
            ),
            "engine.num_shard",
            "engine.max_total_tokens",
        )
    return None


def check_fit(config: InferstackConfig) -> Iterator[Finding]:
    """The weights and one sequence of KV cache fit the pod's GPUs (the engine refuses to start, or OOMs, else)."""
    for index, workload in enumerate(config.workloads):
        sized = _sized(workload)
        if sized is None:
            continue
        pool = config.pool(workload.pool)
        hosts = [t for t in pool_instances(pool) if t.accelerator_count >= sized.engine.tensor_parallel_size]
        if pool.accelerator is not AcceleratorKind.NVIDIA or not hosts:
            continue  # the config refuses other accelerators; SCHEDULING reports a pod no node holds
        host = min(hosts, key=lambda t: (t.accelerator_count, t.vcpu))
        served = ServedEngine(index, workload, workload.model, sized.engine)  # type: ignore[arg-type, attr-defined]
        result = sizing_for(served, host)
        if result.fits:
            continue
        path = f"workloads[{index}]"
        no_room = result.kv_budget_gib <= 0
        yield Finding(
            rule=FIT,
            path=f"{path}.{sized.ranks_field if no_room else sized.length_field}",
            message=f"{workload.model.id} on {sized.engine.tensor_parallel_size} × {host.accelerator_model}: "  # type: ignore[attr-defined]
            + (
                f"{result.weights_gib:.1f} GiB of weights per GPU leave no room for the KV cache"
                if no_room
                else f"the KV cache holds {result.kv_tokens:,} tokens, less than one {sized.engine.max_model_len:,}"
                "-token sequence"
            ),
            fix=f"raise {sized.ranks_field} (more GPUs) or use a larger GPU"
            if no_room
            else f"lower {sized.length_field} to ≤ {result.kv_tokens:,}",
        )


def check_ollama_gpu(config: InferstackConfig) -> Iterator[Finding]:
    """Ollama on CPU (``gpus: 0``) on an accelerated pool holds a GPU node for work its cores do."""
    for index, workload in enumerate(config.workloads):
        if isinstance(workload, OllamaWorkloadConfig) and workload.gpus == 0:
            pool = config.pool(workload.pool)
            if pool.accelerator is not AcceleratorKind.NONE:
                yield Finding(
                    rule=OLLAMA_GPU,
                    path=f"workloads[{index}].pool",
                    message=f"Ollama runs on CPU (gpus: 0) on {pool.accelerator.value} pool {pool.name!r}: the "
                    "accelerated node it holds does nothing",
                    fix="put it on a CPU pool, or give it gpus: 1",
                    severity=Severity.WARNING,
                )


RULES = (
    Rule(id=FIT, title="SGLang and TGI models fit their GPUs", check=check_fit),
    Rule(id=OLLAMA_GPU, title="Ollama on CPU does not hold a GPU node", check=check_ollama_gpu),
    *(rule for rule in serving.RULES if rule.id in (serving.SCHEDULING, serving.STARTUP)),
    engine_flags.RULE,
)
