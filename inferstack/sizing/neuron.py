"""The memory model of a vLLM replica on AWS Neuron (vllm-neuron on NxD Inference, Neuron SDK 2.31): the KV cache
is allocated at compile time for a fixed batch, not carved out of free memory, and ``gpu_memory_utilization`` is
ignored (the plugin reports raw free HBM).

Per NeuronCore of a ``tp``-core replica (aws-neuron-sdk v2.31.1, NxD Inference docs: "The total data size of model
weights and key-value caches needs to be smaller than the tensor-parallelism degree multiplied by the amount of HBM
memory per Neuron core"; "On inf2/trn1, each Neuron core has 16GB of memory"):

* weights / tp (16 bit, or the quantized width; embeddings and LM head 16 bit);
* KV heads per core: the default ``REPLICATE_TO_TP_DEGREE`` strategy gives ``kv_heads / tp`` when tp divides the
  KV heads and 1 when the KV heads divide tp; otherwise NxD falls back to ``CONVERT_TO_MHA`` (attention heads / tp);
* KV tokens: ``max_num_seqs × max_model_len`` (contiguous layout) or, with prefix caching, ``(blocks + 2) ×
  block_size`` (the plugin adds vLLM's null block, NxD one more);
* a reserve per core for the runtime (micro-code 96 MB, compiled code, scratchpad, collectives): AWS publishes no
  figure; Neuron runtime out-of-memory dumps show 0.35–2.8 GiB of it (transformers-neuronx, same runtime), so the
  model keeps 2.5 GiB (?).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from inferstack.catalog.models import GIB, ModelArchitecture
from inferstack.sizing.model import SizingResult, weights_bytes

#: Per NeuronCore kept free for the Neuron runtime (an inferstack choice, see the module docstring).
NEURON_RESERVE_GIB = 2.5
#: vllm-neuron's prefix-caching block (inferstack renders ``--block-size 32``; constructs.neuron.PREFIX_BLOCK_SIZE).
PREFIX_BLOCK_SIZE = 32
_KV_BYTES = {"auto": 2, "bfloat16": 2, "float16": 2, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1}


@dataclass(frozen=True, kw_only=True)
class NeuronSizingInput:
    model: ModelArchitecture
    core_memory_gib: float
    """HBM of one NeuronCore (16 on inf2/trn1; 24 on trn2 with LNC=2)."""
    tensor_parallel_size: int
    max_model_len: int
    max_num_seqs: int
    kv_blocks: int | None = None
    """Prefix caching: the compiled block count (``--num-gpu-blocks-override``). None: contiguous layout."""
    block_size: int = PREFIX_BLOCK_SIZE
    quantization: str | None = None
    kv_cache_dtype: str = "auto"


def compiled_kv_blocks(max_model_len: int, max_num_seqs: int, prefix_caching: bool) -> int | None:
    """The block count inferstack compiles in with prefix caching (enough for ``max_num_seqs`` full sequences, the
    rule of ``constructs.neuron.neuron_kv_cache``); None without (one contiguous ``max_model_len`` per sequence)."""
    return math.ceil(max_model_len / PREFIX_BLOCK_SIZE) * max_num_seqs if prefix_caching else None


def longest_fitting_neuron_len(data: NeuronSizingInput, prefix_caching: bool) -> int:
    """The longest ``max_model_len`` (a multiple of the prefix block, ≤ the model's context) whose compiled cache
    fits, or 0."""
    low, high = 0, data.model.max_context // PREFIX_BLOCK_SIZE
    while low < high:
        mid = (low + high + 1) // 2
        length = mid * PREFIX_BLOCK_SIZE
        blocks = compiled_kv_blocks(length, data.max_num_seqs, prefix_caching)
        if size_neuron(replace(data, max_model_len=length, kv_blocks=blocks)).fits:
            low = mid
        else:
            high = mid - 1
    return low * PREFIX_BLOCK_SIZE


def kv_heads_per_core(model: ModelArchitecture, tp: int) -> int:
    """KV heads one core holds (NxD Inference GQA sharding: replicate to the TP degree, else convert to MHA)."""
    if model.kv_heads % tp == 0:
        return model.kv_heads // tp
    if tp % model.kv_heads == 0:
        return 1
    return math.ceil(model.attention_heads / tp)


def size_neuron(data: NeuronSizingInput) -> SizingResult:
    """The memory plan of one NeuronCore of a replica."""
    model, tp = data.model, data.tensor_parallel_size
    weights = weights_bytes(model, data.quantization) / tp / GIB
    per_token = 2 * model.layers * kv_heads_per_core(model, tp) * model.head_dim * _KV_BYTES.get(data.kv_cache_dtype, 2)
    if data.kv_blocks is None:
        tokens = data.max_num_seqs * data.max_model_len
    else:
        tokens = (data.kv_blocks + 2) * data.block_size
    budget = data.core_memory_gib - NEURON_RESERVE_GIB - weights
    capacity = math.floor(max(budget, 0) * GIB / per_token)
    return SizingResult(
        torch_memory_gib=data.core_memory_gib,
        weights_gib=weights,
        activation_gib=0.0,
        non_torch_gib=NEURON_RESERVE_GIB,
        cuda_graph_gib=0.0,
        kv_budget_gib=budget,
        kv_bytes_per_token=per_token,
        kv_tokens=tokens,
        blocks=capacity,
        blocks_per_request=tokens,
        max_model_len=data.max_model_len,
        sequences=data.max_num_seqs,
    )
