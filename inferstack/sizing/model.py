"""The memory model of a vLLM (V1 engine) replica on one accelerator, per ../shared/DESIGN.md, following the
engine release (:mod:`inferstack.sizing.profiles`).

Per accelerator, with TP = tensor parallel and PP = pipeline parallel:

* weights = model weights / (TP × PP): MoE counts all experts; a quantized checkpoint keeps the embeddings and the
  LM head in 16 bit (``modules_to_not_convert`` / ``ignore: [lm_head]`` in AWQ, GPTQ and FP8 configs);
* activation peak = the sampler warm-up (``max_num_seqs`` × vocabulary) + the forward pass (``max_num_batched_tokens``
  × attention width / TP);
* non-torch memory: CUDA context, and at TP ≥ 2 NCCL / all-reduce buffers (per release line);
* CUDA graphs: inside the budget from vLLM 0.21 (unless ``enforce_eager``), outside it before;
* budget = memory visible to torch × gpu_memory_utilization − all of the above;
* the KV cache is laid out the way vLLM's KV cache manager does it: one group of layers per attention type, all
  groups the same size (hybrid sliding-window models: ``group_size`` = the smaller layer count, or the larger when
  they differ by less than 1.5×; the last group of a type padded with layers that get real memory). The budget is
  cut into blocks of ``block_size`` tokens × ``group_size`` layers; "GPU KV cache size" = blocks / groups × block
  size, as vLLM reports it;
* the engine refuses to start when one ``max_model_len`` request does not fit: full-attention groups need every
  token, sliding-window groups ``window − 1 + max_num_batched_tokens`` (+ one block).

KV bytes per token per layer = 2 × max(1, kv_heads // TP) × head_dim × kv bytes; MLA: one latent of
``mla_latent_dim``, the same on every TP rank.

Published start-up logs this holds against (±10 % on the KV cache, failures predicted to fail) are in
``tests/sizing/vectors.py``, each with its source.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from inferstack.catalog.models import GIB, ModelArchitecture
from inferstack.catalog.versions import ENGINE_VLLM_VERSIONS
from inferstack.sizing.profiles import (
    DEFAULT_VOCAB,
    FORWARD_GIB_PER_TOKEN_WIDTH,
    SAMPLER_BYTES_PER_LOGIT,
    EngineMemoryProfile,
    profile_for,
)

BLOCK_SIZE = 16
#: torch sees slightly less than the EC2 API's accelerator memory (driver/runtime reservations): 79.18–79.19 GiB of
#: an H100's 80 GiB in the published logs (44.42 of an L40S's 44.7: the H100 ratio is the lower, so it is used).
TORCH_VISIBLE_FRACTION = 79.18 / 80
#: Hybrid models: a larger layer count is used as the group size when it is below this multiple of the smaller
#: (vLLM ``kv_cache_utils`` grouping: "gpt-oss-20b + eagle, with 12 sw + 13 full. We pad it to (13 sw, 13 full)").
GROUP_PADDING_RATIO = 1.5
#: The vLLM release the model assumes when none is given: the pinned GPU engine's.
DEFAULT_ENGINE_VERSION = ENGINE_VLLM_VERSIONS["vllm-gpu"]

#: Bytes per parameter of weights quantized at load or shipped quantized (scales included).
_WEIGHT_BYTES = {"fp8": 1.0, "awq": 0.5625, "gptq": 0.5625, "int8": 1.0, "w8a8": 1.0, "nvfp4": 0.5625}
_KV_BYTES = {"auto": 2, "bfloat16": 2, "float16": 2, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1}


@dataclass(frozen=True, kw_only=True)
class SizingInput:
    """One replica of one model on one kind of GPU. Defaults are vLLM's (``block_size`` 16, util 0.90)."""

    model: ModelArchitecture
    accelerator_memory_gib: float
    """Per GPU, as the EC2 API reports it."""
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    gpu_memory_utilization: float = 0.90
    max_model_len: int = 8192
    max_num_batched_tokens: int = 8192
    max_num_seqs: int = 256
    """Sequences the sampler warm-up samples (vLLM's default on H100-class GPUs is 1024 without the flag; inferstack
    always renders it)."""
    quantization: str | None = None
    """Weight quantization of the checkpoint or applied at load (``fp8``, ``awq``…). None: bf16 / as shipped."""
    kv_cache_dtype: str = "auto"
    enforce_eager: bool = False
    """No CUDA graphs (nothing budgeted for them). Default False."""
    block_size: int = BLOCK_SIZE
    engine_version: str = DEFAULT_ENGINE_VERSION
    """The vLLM release (``0.19.0``): which memory profile applies."""
    torch_visible_fraction: float = TORCH_VISIBLE_FRACTION


@dataclass(frozen=True)
class KvLayout:
    """How vLLM's KV cache manager lays out one GPU's cache: groups of ``group_size`` layers, each group one
    attention type; blocks of ``block_size`` tokens shared by all groups."""

    layer_bytes_per_token: int
    """One layer's K and V for one token on this GPU."""
    group_size: int
    full_groups: int
    sliding_groups: int
    block_size: int
    sliding_tokens: int = 0
    """Tokens a sliding-window layer holds per request (``window − 1 + max_num_batched_tokens``, ≤ the length)."""

    @property
    def groups(self) -> int:
        return self.full_groups + self.sliding_groups

    @property
    def block_bytes(self) -> int:
        """One block id across the ``group_size`` layer tensors."""
        return self.layer_bytes_per_token * self.block_size * self.group_size

    def blocks_per_request(self, max_model_len: int) -> int:
        full = math.ceil(max_model_len / self.block_size)
        sliding = math.ceil(self.sliding_tokens / self.block_size) + 1 if self.sliding_groups else 0
        return self.full_groups * full + self.sliding_groups * sliding


@dataclass(frozen=True, kw_only=True)
class SizingResult:
    """Per-GPU memory plan; sizes in GiB."""

    torch_memory_gib: float
    weights_gib: float
    activation_gib: float
    non_torch_gib: float
    cuda_graph_gib: float
    """Budgeted inside ``gpu_memory_utilization`` (vLLM ≥ 0.21); 0 before, where graphs sit outside it."""
    kv_budget_gib: float
    kv_bytes_per_token: float
    """Bytes one reported KV token costs (all groups, padding layers included)."""
    kv_tokens: int
    """What vLLM logs as "GPU KV cache size": blocks / groups × block size."""
    blocks: int
    blocks_per_request: int
    """Blocks one ``max_model_len`` request needs (sliding-window groups: only their window)."""
    max_model_len: int
    sequences: int | None = None
    """Neuron: the sequences the compiled cache holds (``blocks`` is then the capacity in tokens and
    ``blocks_per_request`` the tokens compiled in). None on GPUs."""

    @property
    def fits(self) -> bool:
        return self.kv_budget_gib > 0 and self.blocks >= self.blocks_per_request

    @property
    def concurrency(self) -> float:
        """How many ``max_model_len`` requests fit in the KV cache at once."""
        if self.sequences is not None:
            return float(self.sequences) if self.fits else 0.0
        return self.blocks / self.blocks_per_request if self.blocks_per_request else 0.0


def _embedding_params(model: ModelArchitecture) -> int:
    if model.hidden_size is None or model.vocab_size is None:
        return 0
    return model.hidden_size * model.vocab_size * (1 if model.tied_embeddings else 2)


def weights_bytes(model: ModelArchitecture, quantization: str | None) -> float:
    """Weights as the engine loads them: as shipped (× the loader's overhead) for pre-quantized checkpoints; with
    ``quantization``, the embeddings and LM head stay 16 bit and the rest take the quantized width."""
    bytes_per_param = _WEIGHT_BYTES.get(quantization or "")
    if bytes_per_param is None or (model.shipped_weights_gib is not None and bytes_per_param >= 1.0):
        return model.weights_bytes * model.load_overhead
    embeddings = _embedding_params(model)
    return (model.params - embeddings) * bytes_per_param + embeddings * 2


def kv_layout(
    model: ModelArchitecture,
    *,
    tp: int,
    pp: int,
    kv_cache_dtype: str,
    max_model_len: int,
    max_num_batched_tokens: int,
    block_size: int = BLOCK_SIZE,
) -> KvLayout:
    """The KV cache layout of one GPU (one pipeline stage)."""
    dtype_bytes = _KV_BYTES.get(kv_cache_dtype, 2)
    if model.is_mla:
        per_layer = (model.mla_latent_dim or 0) * dtype_bytes
    else:
        per_layer = 2 * max(1, model.kv_heads // tp) * model.head_dim * dtype_bytes
    sliding = math.ceil(model.sliding_layers / pp) if model.sliding_window else 0
    full = math.ceil((model.layers - (model.sliding_layers if model.sliding_window else 0)) / pp)
    if not sliding or not full:
        return KvLayout(per_layer, max(full, sliding), 1, 0, block_size)
    low, high = min(full, sliding), max(full, sliding)
    group = high if high < low * GROUP_PADDING_RATIO else low
    held = min((model.sliding_window or 0) - 1 + max_num_batched_tokens, max_model_len)
    return KvLayout(per_layer, group, math.ceil(full / group), math.ceil(sliding / group), block_size, held)


def kv_bytes_per_token(
    model: ModelArchitecture, *, tp: int, pp: int, kv_cache_dtype: str, max_model_len: int, max_num_batched_tokens: int
) -> float:
    """Average KV bytes one token of a ``max_model_len`` sequence costs on one GPU (sliding-window layers only their
    window), without the layout's padding."""
    dtype_bytes = _KV_BYTES.get(kv_cache_dtype, 2)
    layers = model.layers / pp
    if model.is_mla:
        return layers * (model.mla_latent_dim or 0) * dtype_bytes
    per_layer = 2 * max(1, model.kv_heads // tp) * model.head_dim * dtype_bytes
    sliding = model.sliding_layers / pp
    full = layers - sliding
    if not sliding or not model.sliding_window:
        return layers * per_layer
    held = min(model.sliding_window - 1 + max_num_batched_tokens, max_model_len)  # as kv_layout and vLLM
    return full * per_layer + sliding * per_layer * held / max_model_len


def activation_gib(model: ModelArchitecture, data: SizingInput) -> float:
    """The profiling run's peak: sampler warm-up over the vocabulary + the forward pass of the batched tokens."""
    vocab = model.vocab_size or DEFAULT_VOCAB
    sampler = SAMPLER_BYTES_PER_LOGIT * data.max_num_seqs * vocab / GIB
    width = model.attention_heads * model.head_dim
    return sampler + FORWARD_GIB_PER_TOKEN_WIDTH * data.max_num_batched_tokens * width / data.tensor_parallel_size


def _graphs(profile: EngineMemoryProfile, data: SizingInput) -> float:
    return profile.cuda_graph_gib if profile.cuda_graphs_in_budget and not data.enforce_eager else 0.0


def size(data: SizingInput) -> SizingResult:
    """The memory plan of one GPU of a replica."""
    model, tp, pp = data.model, data.tensor_parallel_size, data.pipeline_parallel_size
    profile = profile_for(data.engine_version)
    torch_memory = data.accelerator_memory_gib * data.torch_visible_fraction
    weights = weights_bytes(model, data.quantization) / (tp * pp) / GIB
    activation = activation_gib(model, data)
    non_torch = profile.non_torch_tp_gib if tp > 1 else profile.non_torch_gib
    graphs = _graphs(profile, data)
    budget = torch_memory * data.gpu_memory_utilization - weights - activation - non_torch - graphs
    layout = kv_layout(
        model,
        tp=tp,
        pp=pp,
        kv_cache_dtype=data.kv_cache_dtype,
        max_model_len=data.max_model_len,
        max_num_batched_tokens=data.max_num_batched_tokens,
        block_size=data.block_size,
    )
    blocks = math.floor(max(budget, 0) * GIB / layout.block_bytes) if layout.block_bytes else 0
    return SizingResult(
        torch_memory_gib=torch_memory,
        weights_gib=weights,
        activation_gib=activation,
        non_torch_gib=non_torch,
        cuda_graph_gib=graphs,
        kv_budget_gib=budget,
        kv_bytes_per_token=layout.block_bytes * layout.groups / layout.block_size,
        kv_tokens=blocks // layout.groups * layout.block_size,
        blocks=blocks,
        blocks_per_request=layout.blocks_per_request(data.max_model_len),
        max_model_len=data.max_model_len,
    )


def longest_fitting_len(data: SizingInput) -> int:
    """The longest ``max_model_len`` (multiple of the block size, ≤ the model's context) that fits, or 0."""
    low, high = 0, data.model.max_context // data.block_size
    while low < high:
        mid = (low + high + 1) // 2
        length = mid * data.block_size
        candidate = replace(data, max_model_len=length, max_num_batched_tokens=min(data.max_num_batched_tokens, length))
        if size(candidate).fits:
            low = mid
        else:
            high = mid - 1
    return low * data.block_size
