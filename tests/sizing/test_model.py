"""The sizing model against published vLLM measurements (each with its source) and the facts tables."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from inferstack.catalog.models import GIB, MODELS
from inferstack.sizing.model import SizingInput, kv_bytes_per_token, kv_layout, longest_fitting_len, size, weights_bytes
from inferstack.sizing.profiles import PROFILES, profile_for
from tests.sizing.vectors import CONVERSIONS, H100, PUBLISHED, Vector

LLAMA_8B = MODELS["meta-llama/Llama-3.1-8B-Instruct"]


def within(value: float, expected: float, tolerance: float = 0.10) -> bool:
    return abs(value - expected) <= tolerance * expected


def _input(vector: Vector) -> SizingInput:
    return SizingInput(
        model=MODELS[vector.model],
        accelerator_memory_gib=vector.accelerator_memory_gib,
        tensor_parallel_size=vector.tensor_parallel_size,
        gpu_memory_utilization=vector.gpu_memory_utilization,
        max_model_len=vector.max_model_len,
        max_num_batched_tokens=vector.max_num_batched_tokens,
        max_num_seqs=vector.max_num_seqs,
        quantization=vector.quantization,
        kv_cache_dtype=vector.kv_cache_dtype,
        block_size=vector.block_size,
        engine_version=vector.engine_version,
    )


SERVED = [v for v in PUBLISHED if not v.fails]
FAILED = [v for v in PUBLISHED if v.fails]


def test_the_published_set_covers_what_issue_15_asks():
    assert len(PUBLISHED) >= 10
    assert len([v for v in SERVED if v.tensor_parallel_size >= 2]) >= 3
    assert len([v for v in SERVED if MODELS[v.model].sliding_window]) >= 2
    assert len([v for v in SERVED if v.quantization or MODELS[v.model].shipped_weights_gib]) >= 2
    assert len({v.engine_version.rsplit(".", 1)[0] for v in PUBLISHED}) >= 3


@pytest.mark.parametrize("vector", SERVED, ids=lambda v: v.id)
def test_published_kv_cache_within_ten_percent(vector):
    result = size(_input(vector))
    assert result.fits, vector.log
    if vector.kv_gib is not None:
        assert within(result.kv_budget_gib, vector.kv_gib), (result.kv_budget_gib, vector.log)
    if vector.kv_tokens is not None:
        assert within(result.kv_tokens, vector.kv_tokens), (result.kv_tokens, vector.log)


@pytest.mark.parametrize("vector", FAILED, ids=lambda v: v.id)
def test_published_failures_are_predicted_to_fail(vector):
    assert not size(_input(vector)).fits, vector.log


@pytest.mark.parametrize("conversion", CONVERSIONS, ids=lambda c: c[0].split(" (")[0])
def test_published_kv_memory_to_tokens(conversion):
    """KV bytes per token as vLLM lays the cache out (GQA heads split by TP, replicated beyond the KV heads)."""
    _, _, model_id, tp, gib, tokens = conversion
    layout = kv_layout(
        MODELS[model_id], tp=tp, pp=1, kv_cache_dtype="auto", max_model_len=8192, max_num_batched_tokens=8192
    )
    predicted = int(gib * GIB / layout.block_bytes) // layout.groups * layout.block_size
    assert within(predicted, tokens, 0.02)  # within 1.1 % on all three (issue 21348's vLLM ~0.9.2 is the widest)


def test_weights_of_a_quantized_checkpoint_keep_embeddings_in_16_bit():
    """Llama-3.3-70B in FP8: 68.45 B parameters at 1 byte, embeddings and LM head (2 × 128,256 × 8,192) at 2 —
    67.66 GiB; vLLM logged 67.72 (llm-d, TP 1) and 33.88 per GPU at TP 2."""
    model = MODELS["meta-llama/Llama-3.3-70B-Instruct"]
    assert weights_bytes(model, "fp8") / GIB == pytest.approx(67.72, rel=0.005)
    assert weights_bytes(model, "fp8") > model.params * 1.0


def test_hybrid_layout_groups_and_pads_like_vllm():
    """gemma-3-27b: 52 sliding + 10 full layers → groups of 10, six sliding groups (8 padding layers) and one full;
    gpt-oss-20b: 12 + 12 → two groups of 12."""
    gemma = kv_layout(MODELS["google/gemma-3-27b-it"], tp=1, pp=1, kv_cache_dtype="auto", max_model_len=131_072,
                      max_num_batched_tokens=8192)  # fmt: skip
    assert (gemma.group_size, gemma.sliding_groups, gemma.full_groups) == (10, 6, 1)
    oss = kv_layout(MODELS["openai/gpt-oss-20b"], tp=1, pp=1, kv_cache_dtype="auto", max_model_len=16_000,
                    max_num_batched_tokens=8192)  # fmt: skip
    assert (oss.group_size, oss.sliding_groups, oss.full_groups) == (12, 1, 1)
    # a sliding group holds only its window: a long request costs the full groups' blocks plus a window's
    assert oss.blocks_per_request(16_000) == 1000 + math.ceil((128 - 1 + 8192) / 16) + 1


def test_cuda_graphs_are_budgeted_from_vllm_0_21():
    base = SizingInput(model=LLAMA_8B, accelerator_memory_gib=H100)
    before, after = size(replace(base, engine_version="0.20.0")), size(replace(base, engine_version="0.21.0"))
    assert before.cuda_graph_gib == 0 and after.cuda_graph_gib > 0
    assert after.kv_budget_gib == pytest.approx(before.kv_budget_gib - after.cuda_graph_gib)
    eager = size(replace(base, engine_version="0.21.0", enforce_eager=True))
    assert eager.cuda_graph_gib == 0


def test_non_torch_memory_grows_with_tp_in_vllm_0_19():
    base = SizingInput(model=LLAMA_8B, accelerator_memory_gib=H100, engine_version="0.19.0")
    assert size(base).non_torch_gib == pytest.approx(0.25)
    assert size(replace(base, tensor_parallel_size=2)).non_torch_gib == pytest.approx(2.0)


def test_engine_releases_map_to_their_profile_line():
    assert profile_for("0.11.0").since == (0, 10)
    assert profile_for("v0.19.0").since == (0, 19)
    assert profile_for("0.33.0").since == (0, 21)
    assert profile_for("0.8.5") == PROFILES[0]  # older than every profile: the oldest
    with pytest.raises(ValueError, match="not a vLLM release"):
        profile_for("latest")


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


def test_nearly_equal_layer_counts_share_the_larger_group_size():
    """12 sliding + 13 full (vLLM's own example, gpt-oss-20b + an EAGLE layer): groups of 13, one padding layer."""
    model = replace(MODELS["openai/gpt-oss-20b"], layers=25, sliding_layers=12)
    layout = kv_layout(model, tp=1, pp=1, kv_cache_dtype="auto", max_model_len=16_000, max_num_batched_tokens=8192)
    assert (layout.group_size, layout.sliding_groups, layout.full_groups) == (13, 1, 1)
