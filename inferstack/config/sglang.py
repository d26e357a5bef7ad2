"""Kind ``sglang``: one model served by SGLang (``python3 -m sglang.launch_server``, 0.5.19) on the shared serving
pod — RadixAttention prefix caching and grammar-constrained (structured) output. Typed options render SGLang's own
flags (``--tp-size``, ``--context-length``, ``--mem-fraction-static``…), read from sglang 0.5.19's
``srt/server_args.py``."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from inferstack.catalog.engine_flags import vendored_version
from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.config.base import StrictModel
from inferstack.config.engine import check_engine_extra_args
from inferstack.config.types import PinnedImage
from inferstack.config.workloads import ModelSourceType, SingleModelWorkload

#: What SGLang sizes ``mem_fraction_static`` to when it cannot read the GPU's memory (arg_groups/memory_hook.py);
#: on known GPUs it derives the fraction from the chunked-prefill and CUDA-graph reservations.
SGLANG_DEFAULT_MEM_FRACTION = 0.88
#: Flags inferstack renders from typed fields (:mod:`inferstack.charts.sglang`): in ``extra_args`` they would
#: contradict those fields.
SGLANG_MANAGED_FLAGS = frozenset(
    {
        "--model-path",
        "--served-model-name",
        "--host",
        "--port",
        "--tp-size",
        "--context-length",
        "--dtype",
        "--kv-cache-dtype",
        "--grammar-backend",
        "--mem-fraction-static",
        "--max-running-requests",
        "--chunked-prefill-size",
        "--quantization",
        "--tool-call-parser",
        "--reasoning-parser",
        "--disable-radix-cache",
        "--enable-metrics",
        "--revision",
    }
)


class GrammarBackend(StrEnum):
    """Structured-output backend (``--grammar-backend``)."""

    XGRAMMAR = "xgrammar"
    """SGLang's default."""
    OUTLINES = "outlines"
    LLGUIDANCE = "llguidance"


class SglangDtype(StrEnum):
    AUTO = "auto"
    BFLOAT16 = "bfloat16"
    FLOAT16 = "float16"


class SglangQuantization(StrEnum):
    FP8 = "fp8"
    AWQ = "awq"
    GPTQ = "gptq"


class SglangKvCacheDtype(StrEnum):
    AUTO = "auto"
    FP8_E4M3 = "fp8_e4m3"
    FP8_E5M2 = "fp8_e5m2"


class SglangEngineConfig(StrictModel):
    """SGLang server settings."""

    tensor_parallel_size: int = Field(default=1, ge=1, le=16)
    """``--tp-size``: GPUs of one replica (one node). Default 1."""
    context_length: int = Field(default=8192, ge=16)
    """``--context-length``: longest sequence, tokens. Default 8192 (SGLang's own default is the model's maximum,
    which may not fit: inferstack sizes and renders this one)."""
    mem_fraction_static: float | None = Field(default=None, gt=0.1, le=0.97)
    """``--mem-fraction-static``: GPU memory share for weights and the KV pool (the rest: activations, CUDA
    graphs). Default: SGLang sizes it from the GPU (~0.88)."""
    max_running_requests: int | None = Field(default=None, ge=1)
    """``--max-running-requests``. Default: SGLang's (from the KV pool)."""
    chunked_prefill_size: int | None = Field(default=None, ge=-1)
    """``--chunked-prefill-size`` (``-1`` disables chunking). Default: sized from GPU memory."""
    dtype: SglangDtype = SglangDtype.AUTO
    """``--dtype``. Default auto."""
    quantization: SglangQuantization | None = None
    """``--quantization``. Default none."""
    kv_cache_dtype: SglangKvCacheDtype = SglangKvCacheDtype.AUTO
    """``--kv-cache-dtype``. Default auto."""
    grammar_backend: GrammarBackend = GrammarBackend.XGRAMMAR
    """``--grammar-backend`` for JSON-schema / regex / EBNF constrained output. Default xgrammar."""
    disable_radix_cache: bool = False
    """``--disable-radix-cache``. Default false (RadixAttention prefix sharing on)."""
    tool_call_parser: str | None = Field(default=None, pattern=r"^[a-z0-9_.-]+$")
    """``--tool-call-parser`` (e.g. ``qwen25``, ``llama3``, ``hermes``). Default none."""
    reasoning_parser: str | None = Field(default=None, pattern=r"^[a-z0-9_.-]+$")
    """``--reasoning-parser`` (e.g. ``qwen3``, ``deepseek-r1``). Default none."""
    extra_args: tuple[str, ...] = ()
    """More SGLang flags, e.g. ``[--enable-hierarchical-cache]``: checked against the flag list of the image's SGLang
    release (0.5.19 vendored: an unknown flag is a config error naming the nearest; a flag a typed field sets is
    refused); another release's are passed unchecked (warning ENGINE-FLAGS-UNVERIFIED)."""

    @property
    def sizing_memory_fraction(self) -> float:
        return self.mem_fraction_static or SGLANG_DEFAULT_MEM_FRACTION


class SglangWorkloadConfig(SingleModelWorkload):
    """One model on SGLang, one pod of ``tensor_parallel_size`` GPUs per replica."""

    kind: Literal["sglang"] = "sglang"  # type: ignore[assignment]
    """``sglang``: a Deployment of SGLang servers (OpenAI-compatible API on 30000)."""
    engine: SglangEngineConfig = SglangEngineConfig()
    """SGLang settings."""
    image: PinnedImage | None = None
    """The SGLang image, pinned by tag or digest (a mirror, another release). Default: the catalog's
    ``lmsysorg/sglang:v0.5.19-cu129``. Another release is yours to vouch for: the flags inferstack renders
    (``--tp-size``, ``--enable-metrics``…) and the gauge autoscaling reads (``sglang:num_queue_reqs``) are 0.5.19's."""

    @model_validator(mode="after")
    def _sglang(self) -> SglangWorkloadConfig:
        source = self.model.source.type
        if source is ModelSourceType.S3:
            raise PydanticCustomError(
                "sglang_s3",
                "an s3:// model path makes SGLang load with the Run:ai streamer, which the image is not known to "
                "carry — use s3_mount (Mountpoint), fsx, efs, hf or image",
                {"field": "model.source.type"},
            )
        return self

    @property
    def ranks(self) -> int:
        return self.engine.tensor_parallel_size

    def image_for(self) -> str:
        """``image``, else the catalog's."""
        return self.image or ENGINE_IMAGES["sglang"]

    @property
    def flags_version(self) -> str | None:
        """The SGLang release of the image when inferstack carries its flag list, else None."""
        return vendored_version("sglang", self.image_for())

    def check_in(self, index: int, accelerator: AcceleratorKind) -> None:
        check_engine_extra_args(self.engine.extra_args, "sglang", self.flags_version, index, SGLANG_MANAGED_FLAGS)
        if accelerator is not AcceleratorKind.NVIDIA:
            raise PydanticCustomError(
                "sglang_accelerator",
                "the SGLang image (CUDA) runs on NVIDIA GPUs — put the workload on a GPU pool",
                {"field": f"workloads[{index}].pool"},
            )
