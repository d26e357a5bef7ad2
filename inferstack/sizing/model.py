"""The memory model of a vLLM (V1 engine) replica on one accelerator, per ../shared/DESIGN.md.

Per accelerator, with TP = tensor parallel and PP = pipeline parallel:

* weights = model weights / (TP × PP)  (MoE: all experts; quantized weights at their byte width);
* KV bytes per token = 2 × layers/PP × max(1, kv_heads // TP) × head_dim × kv bytes; MLA: one latent of
  ``mla_latent_dim`` per layer, the same on every TP rank; sliding-window layers cache at most
  ``window + max_num_batched_tokens`` tokens per sequence;
* budget = memory visible to torch × gpu_memory_utilization − weights − activation peak − non-torch memory;
* KV tokens = budget / KV bytes per token, in blocks of 16; the engine refuses to start when one
  ``max_model_len`` sequence does not fit.

Calibration (published, vLLM 0.19): Llama-3.1-8B-Instruct bf16 on one H100-80GB (79.19 GiB seen by torch), util
0.95, max_model_len = max_num_batched_tokens = 8192 → weights 14.99 GiB, activation 1.89 GiB, non-torch 0.25 GiB,
KV 58.11 GiB = 476,016 tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from inferstack.catalog.models import GIB, ModelArchitecture

BLOCK_SIZE = 16
#: torch sees slightly less than the EC2 API's accelerator memory (driver/runtime reservations):
#: 79.19 GiB of an H100's 80 GiB in the published check.
TORCH_VISIBLE_FRACTION = 79.19 / 80
#: Activation peak of the profiling run per batched token per unit of attention width (heads × head_dim), from
#: the calibration point: 1.89 GiB at 8192 tokens for Llama-3.1-8B (32 × 128 = 4096).
ACTIVATION_GIB_PER_TOKEN_WIDTH = 1.89 / (8192 * 4096)
#: Memory outside torch's allocator: CUDA context and, with TP > 1, NCCL / custom all-reduce buffers.
NON_TORCH_GIB = 0.25
NON_TORCH_TP_GIB = 0.4

_WEIGHT_BYTES = {None: None, "fp8": 1.0, "awq": 0.5625, "gptq": 0.5625, "int8": 1.0, "w8a8": 1.0, "nvfp4": 0.5625}
_KV_BYTES = {"auto": 2, "bfloat16": 2, "float16": 2, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1}


@dataclass(frozen=True, kw_only=True)
class SizingInput:
    """One replica of one model on one kind of accelerator."""

    model: ModelArchitecture
    accelerator_memory_gib: float
    """Per accelerator (per NeuronCore for Neuron), as the EC2 API reports it."""
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    gpu_memory_utilization: float = 0.90
    max_model_len: int = 8192
    max_num_batched_tokens: int = 8192
    quantization: str | None = None
    """Weight quantization applied at load (``fp8``, ``awq``…). None: the checkpoint as shipped."""
    kv_cache_dtype: str = "auto"
    torch_visible_fraction: float = TORCH_VISIBLE_FRACTION


@dataclass(frozen=True, kw_only=True)
class SizingResult:
    """Per-accelerator memory plan; sizes in GiB."""

    torch_memory_gib: float
    weights_gib: float
    activation_gib: float
    non_torch_gib: float
    kv_budget_gib: float
    kv_bytes_per_token: float
    """Per accelerator, full-attention layers plus sliding-window layers as if full (for budgeting)."""
    kv_tokens: int
    max_model_len: int

    @property
    def fits(self) -> bool:
        return self.kv_budget_gib > 0 and self.kv_tokens >= self.max_model_len

    @property
    def concurrency(self) -> float:
        """How many ``max_model_len`` sequences fit in the KV cache at once."""
        return self.kv_tokens / self.max_model_len if self.max_model_len else 0.0


def weights_bytes(model: ModelArchitecture, quantization: str | None) -> float:
    bytes_per_param = _WEIGHT_BYTES.get(quantization)
    if bytes_per_param is None or (model.shipped_weights_gib is not None and bytes_per_param >= 1.0):
        return model.weights_bytes
    return model.params * bytes_per_param


def kv_bytes_per_token(
    model: ModelArchitecture, *, tp: int, pp: int, kv_cache_dtype: str, max_model_len: int, max_num_batched_tokens: int
) -> float:
    """Average KV bytes one token of a ``max_model_len`` sequence costs on one accelerator."""
    dtype_bytes = _KV_BYTES.get(kv_cache_dtype, 2)
    layers = model.layers / pp
    if model.is_mla:
        per_layer = (model.mla_latent_dim or 0) * dtype_bytes
        return layers * per_layer
    heads = max(1, model.kv_heads // tp)
    per_layer = 2 * heads * model.head_dim * dtype_bytes
    sliding = model.sliding_layers / pp
    full = layers - sliding
    if not sliding or not model.sliding_window:
        return layers * per_layer
    held = min(model.sliding_window + max_num_batched_tokens, max_model_len)
    return full * per_layer + sliding * per_layer * held / max_model_len


def size(data: SizingInput) -> SizingResult:
    """The memory plan of one accelerator of a replica."""
    model, tp, pp = data.model, data.tensor_parallel_size, data.pipeline_parallel_size
    torch_memory = data.accelerator_memory_gib * data.torch_visible_fraction
    weights = weights_bytes(model, data.quantization) / (tp * pp) / GIB
    width = model.attention_heads * model.head_dim
    activation = ACTIVATION_GIB_PER_TOKEN_WIDTH * data.max_num_batched_tokens * width / tp
    non_torch = NON_TORCH_GIB + (NON_TORCH_TP_GIB if tp > 1 else 0.0)
    budget = torch_memory * data.gpu_memory_utilization - weights - activation - non_torch
    per_token = kv_bytes_per_token(
        model,
        tp=tp,
        pp=pp,
        kv_cache_dtype=data.kv_cache_dtype,
        max_model_len=data.max_model_len,
        max_num_batched_tokens=data.max_num_batched_tokens,
    )
    blocks = math.floor(max(budget, 0) * GIB / (per_token * BLOCK_SIZE)) if per_token else 0
    return SizingResult(
        torch_memory_gib=torch_memory,
        weights_gib=weights,
        activation_gib=activation,
        non_torch_gib=non_torch,
        kv_budget_gib=budget,
        kv_bytes_per_token=per_token,
        kv_tokens=blocks * BLOCK_SIZE,
        max_model_len=data.max_model_len,
    )


def longest_fitting_len(data: SizingInput) -> int:
    """The longest ``max_model_len`` (multiple of the block size, ≤ the model's context) that fits, or 0."""
    low, high = 0, data.model.max_context // BLOCK_SIZE
    while low < high:
        mid = (low + high + 1) // 2
        candidate = SizingInput(
            **{
                **data.__dict__,
                "max_model_len": mid * BLOCK_SIZE,
                "max_num_batched_tokens": min(data.max_num_batched_tokens, mid * BLOCK_SIZE),
            }
        )
        if size(candidate).fits:
            low = mid
        else:
            high = mid - 1
    return low * BLOCK_SIZE
