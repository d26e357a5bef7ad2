"""Published vLLM start-up measurements the sizing model is held to, each with its source and the lines it comes
from. Inputs not stated in a log are vLLM's defaults for that release and GPU (the OpenAI server on an H100-class GPU:
``max_num_seqs`` 1024, ``max_num_batched_tokens`` 8192; on smaller GPUs 256 / 2048) and say so.

``kv_gib``: "Available KV cache memory" per GPU. ``kv_tokens``: "GPU KV cache size" where the log gives it; else None
(the tokens follow from the memory through the layout, so a ±10 % memory check is a ±10 % token check).
"""

from __future__ import annotations

from dataclasses import dataclass

H100 = 80.0  # GiB, as the EC2 API reports it (81,920 MiB)
L40S = 45_776 / 1024

LLM_D = (
    "llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-results.md (vLLM v0.11.0 image, H100 79.18 GiB, "
    "--gpu-memory-utilization 0.9 --max-model-len 16000 --block-size 128 --enable-prefix-caching)"
)


@dataclass(frozen=True)
class Vector:
    id: str
    source: str
    log: str
    model: str
    engine_version: str
    accelerator_memory_gib: float
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float = 0.9
    max_model_len: int = 16_000
    max_num_batched_tokens: int = 8192
    max_num_seqs: int = 1024
    quantization: str | None = None
    kv_cache_dtype: str = "auto"
    block_size: int = 16
    kv_gib: float | None = None
    kv_tokens: int | None = None
    fails: bool = False


PUBLISHED: tuple[Vector, ...] = (
    Vector(
        "llama-3.1-8b-h100-v0.19",
        "llm-d-planner validation logs, vLLM 0.19 (../shared/DESIGN.md); max_num_seqs not stated: the H100 default",
        "Available KV cache memory: 58.11 GiB / GPU KV cache size: 476,016 tokens",
        "meta-llama/Llama-3.1-8B-Instruct",
        "0.19.0",
        H100,
        gpu_memory_utilization=0.95,
        max_model_len=8192,
        kv_gib=58.11,
        kv_tokens=476_016,
    ),
    Vector(
        "llama-3.1-8b-h100-v0.19-fp8-kv",
        "the same run with --kv-cache-dtype fp8 (../shared/DESIGN.md)",
        "GPU KV cache size: 952,032 tokens",
        "meta-llama/Llama-3.1-8B-Instruct",
        "0.19.0",
        H100,
        gpu_memory_utilization=0.95,
        max_model_len=8192,
        kv_cache_dtype="fp8",
        kv_tokens=952_032,
    ),
    Vector(
        "llama-3.1-8b-h100-v0.11",
        LLM_D,
        "Llama-3.1-8B | SUCCESS | 14.99 | 4.76 | 0.13 | -0.45 | 51.38 | 1 | 16000",
        "meta-llama/Llama-3.1-8B-Instruct",
        "0.11.0",
        H100,
        block_size=128,
        kv_gib=51.38,
    ),
    Vector(
        "qwen3-32b-h100-tp1-v0.11",
        LLM_D,
        "Qwen3-32B | SUCCESS | 61.03 | 5.64 | 0.14 | -0.88 | 4.45 | 1 | 16000",
        "Qwen/Qwen3-32B",
        "0.11.0",
        H100,
        block_size=128,
        kv_gib=4.45,
    ),
    Vector(
        "qwen3-32b-h100-tp2-v0.11",
        LLM_D,
        "Qwen3-32B | SUCCESS | 30.59 | 5.64 | 0.54 | -0.33 | 34.49 | 2 | 16000",
        "Qwen/Qwen3-32B",
        "0.11.0",
        H100,
        tensor_parallel_size=2,
        block_size=128,
        kv_gib=34.49,
    ),
    Vector(
        "llama-3.3-70b-fp8-h100-tp2-v0.11",
        f"{LLM_D}; RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic (compressed-tensors FP8, lm_head ignored)",
        "Llama-3.3-70B-FP8 (TP=2) | SUCCESS | 33.88 | 4.84 | 0.55 | -0.42 | 32.0 | 2 | 16000",
        "meta-llama/Llama-3.3-70B-Instruct",
        "0.11.0",
        H100,
        tensor_parallel_size=2,
        quantization="fp8",
        block_size=128,
        kv_gib=32.0,
    ),
    Vector(
        "gpt-oss-20b-h100-v0.11",
        LLM_D,
        "gpt-oss-20b | SUCCESS | 13.47 | 7.38 | 0.13 | 0.39 | 50.28 | 1 | 16000",
        "openai/gpt-oss-20b",
        "0.11.0",
        H100,
        block_size=128,
        kv_gib=50.28,
    ),
    Vector(
        "gpt-oss-120b-h100-v0.11",
        f"{LLM_D} (the newer table, whose rows add up to 0.95 × 79.18 = 75.22 GiB: run at util 0.95)",
        "gpt-oss-120b (MoE) | 64.38 | 7.38 | 0.13 | 1.03 | 3.33 | 1 | 0.9 | 16000",
        "openai/gpt-oss-120b",
        "0.11.0",
        H100,
        gpu_memory_utilization=0.95,
        block_size=128,
        kv_gib=3.33,
    ),
    Vector(
        "qwen3-235b-fp8-l40s-tp8-v0.10",
        "public 'Hosting Qwen3-235B-A22B-Instruct-2507-FP8 on 8xL40S' start-up log (vLLM 0.10.2, util 0.9, "
        "max_model_len 32768, logged max_num_batched_tokens 2048; L40S defaults: max_num_seqs 256)",
        "Available KV cache memory: 10.65 GiB / GPU KV cache size: 238,208 tokens",
        "Qwen/Qwen3-235B-A22B",
        "0.10.2",
        L40S,
        tensor_parallel_size=8,
        max_model_len=32_768,
        max_num_batched_tokens=2048,
        max_num_seqs=256,
        quantization="fp8",
        kv_gib=10.65,
        kv_tokens=238_208,
    ),
    # Published failures: each must be predicted not to fit.
    Vector(
        "llama-3.3-70b-fp8-h100-tp1-v0.11-fails",
        LLM_D,
        "Llama-3.3-70B-FP8 | FAILED | 67.72 | 4.84 | 0.14 | -1.44 | "
        "ValueError: No available memory for the cache blocks.",
        "meta-llama/Llama-3.3-70B-Instruct",
        "0.11.0",
        H100,
        quantization="fp8",
        block_size=128,
        fails=True,
    ),
    Vector(
        "qwen3-32b-h100-tp1-32k-v0.11-fails",
        LLM_D,
        "Qwen3-32B | FAILED | 61.03 | 5.64 | 0.14 | N/A | N/A | 1 | 32000 — 'No KV cache room'",
        "Qwen/Qwen3-32B",
        "0.11.0",
        H100,
        max_model_len=32_000,
        block_size=128,
        fails=True,
    ),
    Vector(
        "gpt-oss-120b-h100-v0.10-fails",
        "vLLM issue 23278 (gpt-oss-120b on one H100 80GB, vLLM ~0.10.1; util and max_model_len not set: 0.9 and "
        "the model's 131,072)",
        "Model loading took 65.9651 GiB ... Available KV cache memory: -2.14 GiB ... EngineCore failed to start",
        "openai/gpt-oss-120b",
        "0.10.1",
        H100,
        max_model_len=131_072,
        fails=True,
    ),
)

#: Logs that give only the KV memory and its token count (the rest of the inputs unknown): they check the KV bytes
#: per token, not the budget.
CONVERSIONS: tuple[tuple[str, str, str, int, float, int], ...] = (
    (
        "vLLM issue 21348 (V1, 4× H100, TP 4, Qwen3-235B-A22B-FP8)",
        "Available KV cache memory: 8.11 GiB / GPU KV cache size: 178,880 tokens",
        "Qwen/Qwen3-235B-A22B",
        4,
        8.11,
        178_880,
    ),
    (
        "LMCache issue 1739 (Qwen3-14B, TP 1, max_model_len 32768)",
        "Available KV cache memory: 6.51 GiB / GPU KV cache size: 42,656 tokens",
        "Qwen/Qwen3-14B",
        1,
        6.51,
        42_656,
    ),
    (
        "Qwen3-235B-FP8 on 8× L40S (above), TP 8",
        "Available KV cache memory: 10.65 GiB / GPU KV cache size: 238,208 tokens",
        "Qwen/Qwen3-235B-A22B",
        8,
        10.65,
        238_208,
    ),
)
