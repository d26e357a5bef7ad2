"""The sizing model against published vLLM measurements (each with its source) and the facts tables."""

from __future__ import annotations

import pytest

from inferstack.catalog.models import GIB, MODELS
from inferstack.sizing.model import BLOCK_SIZE, SizingInput, kv_bytes_per_token, longest_fitting_len, size

LLAMA_8B = MODELS["meta-llama/Llama-3.1-8B-Instruct"]


def within(value: float, expected: float, tolerance: float = 0.10) -> bool:
    return abs(value - expected) <= tolerance * expected


def test_published_llama_8b_on_h100():
    """vLLM 0.19 V1, llm-d-planner validation logs (../shared/DESIGN.md): 58.11 GiB KV = 476,016 tokens."""
    result = size(
        SizingInput(
            model=LLAMA_8B,
            accelerator_memory_gib=80,
            gpu_memory_utilization=0.95,
            max_model_len=8192,
            max_num_batched_tokens=8192,
        )
    )
    assert within(result.kv_tokens, 476_016)
    assert within(result.kv_budget_gib, 58.11)
    assert within(result.weights_gib, 14.99, 0.01)
    assert result.torch_memory_gib == pytest.approx(79.19)
    assert result.concurrency == pytest.approx(58.1, rel=0.10)


def test_published_llama_8b_on_h100_with_fp8_kv_cache():
    """The same with --kv-cache-dtype fp8: twice the tokens, 952,032 (../shared/DESIGN.md)."""
    result = size(
        SizingInput(model=LLAMA_8B, accelerator_memory_gib=80, gpu_memory_utilization=0.95, kv_cache_dtype="fp8")
    )
    assert within(result.kv_tokens, 952_032)


def test_published_qwen3_235b_kv_memory_to_tokens():
    """vLLM issue #21348 (V1, 4× H100, TP=4, Qwen3-235B-A22B-FP8): "Available KV cache memory: 8.11 GiB",
    "GPU KV cache size: 178,880 tokens". Checks the per-rank KV bytes of a GQA model with TP = KV heads."""
    model = MODELS["Qwen/Qwen3-235B-A22B"]
    per_token = kv_bytes_per_token(
        model, tp=4, pp=1, kv_cache_dtype="auto", max_model_len=40_960, max_num_batched_tokens=8192
    )
    tokens = int(8.11 * GIB / per_token) // BLOCK_SIZE * BLOCK_SIZE
    assert within(tokens, 178_880)


@pytest.mark.parametrize(
    ("model_id", "expected"),
    [
        ("meta-llama/Llama-3.1-405B-Instruct", 516_096),
        ("Qwen/Qwen2.5-72B-Instruct", 327_680),
        ("deepseek-ai/DeepSeek-R1", 70_272),  # MLA: 61 × 576 × 2
        ("microsoft/phi-4", 204_800),
    ],
)
def test_kv_bytes_match_the_facts_table(model_id, expected):
    """../shared/facts/models.md §3, "KV B/token bf16, all layers" (whole model, TP=1)."""
    per_token = kv_bytes_per_token(
        MODELS[model_id], tp=1, pp=1, kv_cache_dtype="auto", max_model_len=8192, max_num_batched_tokens=8192
    )
    assert per_token == expected


def test_mla_cache_is_replicated_not_split_by_tp():
    model = MODELS["deepseek-ai/DeepSeek-R1"]
    one = kv_bytes_per_token(model, tp=1, pp=1, kv_cache_dtype="auto", max_model_len=8192, max_num_batched_tokens=8192)
    eight = kv_bytes_per_token(
        model, tp=8, pp=1, kv_cache_dtype="auto", max_model_len=8192, max_num_batched_tokens=8192
    )
    assert one == eight


def test_gqa_heads_replicate_beyond_kv_head_count():
    model = MODELS["Qwen/Qwen3-30B-A3B"]  # 4 KV heads
    at4 = kv_bytes_per_token(model, tp=4, pp=1, kv_cache_dtype="auto", max_model_len=8192, max_num_batched_tokens=8192)
    at8 = kv_bytes_per_token(model, tp=8, pp=1, kv_cache_dtype="auto", max_model_len=8192, max_num_batched_tokens=8192)
    assert at4 == at8  # one head per rank either way


def test_sliding_window_layers_are_capped():
    """gemma-3-27b: 52 of 62 layers slide over 1024 tokens; at 131k context they cost almost nothing."""
    model = MODELS["google/gemma-3-27b-it"]
    long = kv_bytes_per_token(
        model, tp=1, pp=1, kv_cache_dtype="auto", max_model_len=131_072, max_num_batched_tokens=8192
    )
    full_layers_only = 10 * 2 * 16 * 128 * 2
    assert full_layers_only < long < full_layers_only * 1.5


def test_70b_does_not_fit_one_l40s_and_fits_tp8_on_a100():
    model = MODELS["meta-llama/Llama-3.1-70B-Instruct"]
    assert not size(SizingInput(model=model, accelerator_memory_gib=45_776 / 1024)).fits
    assert size(SizingInput(model=model, accelerator_memory_gib=40, tensor_parallel_size=8)).fits


def test_longest_fitting_len():
    data = SizingInput(model=LLAMA_8B, accelerator_memory_gib=22_888 / 1024, max_model_len=131_072)
    length = longest_fitting_len(data)
    assert 8192 < length < 131_072
    assert size(
        SizingInput(
            model=LLAMA_8B, accelerator_memory_gib=22_888 / 1024, max_model_len=length, max_num_batched_tokens=8192
        )
    ).fits
