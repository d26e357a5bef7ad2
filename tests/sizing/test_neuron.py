"""The Neuron memory model: static KV cache per NeuronCore (NxD Inference, aws-neuron-sdk v2.31.1)."""

from __future__ import annotations

import pytest

from inferstack.catalog.models import MODELS
from inferstack.constructs.neuron import neuron_kv_cache
from inferstack.sizing.neuron import (
    NEURON_RESERVE_GIB,
    NeuronSizingInput,
    compiled_kv_blocks,
    kv_heads_per_core,
    longest_fitting_neuron_len,
    size_neuron,
)

LLAMA_8B = MODELS["meta-llama/Llama-3.1-8B-Instruct"]
LLAMA_70B = MODELS["meta-llama/Llama-3.1-70B-Instruct"]


def test_llama_8b_on_one_inferentia2_device():
    """tp 2, 8 sequences of 4,096: 7.48 GiB of weights and 2.00 GiB of KV per core (4 KV heads per core)."""
    result = size_neuron(
        NeuronSizingInput(
            model=LLAMA_8B, core_memory_gib=16, tensor_parallel_size=2, max_model_len=4096, max_num_seqs=8
        )
    )
    assert result.weights_gib == pytest.approx(7.48, abs=0.01)
    assert result.kv_bytes_per_token * result.kv_tokens / 2**30 == pytest.approx(2.0)
    assert result.fits and result.concurrency == 8
    assert result.non_torch_gib == NEURON_RESERVE_GIB


def test_vllm_default_batch_does_not_fit_a_neuron_core():
    """256 × 8,192 tokens compiled in: 128 GiB of KV per core."""
    result = size_neuron(
        NeuronSizingInput(
            model=LLAMA_8B, core_memory_gib=16, tensor_parallel_size=2, max_model_len=8192, max_num_seqs=256
        )
    )
    assert not result.fits and result.concurrency == 0


def test_llama_70b_on_16_trainium_cores():
    """NxD Inference docs: Llama-3.1-70B "can run on 16 NeuronCores on one trn1.32xlarge" (~148 GB)."""
    fits = size_neuron(
        NeuronSizingInput(
            model=LLAMA_70B, core_memory_gib=16, tensor_parallel_size=16, max_model_len=4096, max_num_seqs=4
        )
    )
    assert fits.fits
    too_few = size_neuron(
        NeuronSizingInput(
            model=LLAMA_70B, core_memory_gib=16, tensor_parallel_size=8, max_model_len=4096, max_num_seqs=4
        )
    )
    assert not too_few.fits  # 16.4 GiB of weights per core


@pytest.mark.parametrize(("tp", "expected"), [(1, 8), (2, 4), (8, 1), (16, 1), (24, 1), (3, 11)])
def test_kv_heads_per_core_follow_nxd_sharding(tp, expected):
    """8 KV heads: split when tp divides them, replicated to one when they divide tp, else MHA (32 heads / tp)."""
    assert kv_heads_per_core(LLAMA_8B, tp) == expected


@pytest.mark.parametrize("prefix", [True, False])
def test_compiled_blocks_match_what_the_compile_job_renders(prefix):
    rendered = neuron_kv_cache(4096, 8, prefix)
    assert compiled_kv_blocks(4096, 8, prefix) == (rendered.num_blocks if rendered.block_size else None)


def test_prefix_caching_layout_holds_the_blocks_plus_two():
    blocks = compiled_kv_blocks(4096, 8, True)
    result = size_neuron(
        NeuronSizingInput(
            model=LLAMA_8B,
            core_memory_gib=16,
            tensor_parallel_size=2,
            max_model_len=4096,
            max_num_seqs=8,
            kv_blocks=blocks,
        )
    )
    assert result.kv_tokens == (blocks + 2) * 32


def test_longest_fitting_len_on_neuron():
    data = NeuronSizingInput(
        model=LLAMA_8B, core_memory_gib=16, tensor_parallel_size=2, max_model_len=131_072, max_num_seqs=8
    )
    length = longest_fitting_neuron_len(data, prefix_caching=True)
    assert 4096 < length < 131_072 and length % 32 == 0


def test_the_fit_rule_sizes_neuron_pools_with_the_neuron_model():
    from inferstack.config.loader import load_config
    from inferstack.plan import served
    from inferstack.plan.placement import pool_instances

    config = load_config("examples/vllm-neuron-inf2.yaml")
    ((_, engine),) = list(served.engines(config))
    host = pool_instances(config.pool(engine.pool))[0]
    result = served.sizing_for(engine, host)
    assert result.sequences == engine.engine.max_num_seqs and result.fits
