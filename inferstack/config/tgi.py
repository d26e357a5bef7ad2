"""Kind ``tgi``: one model served by Hugging Face Text Generation Inference 3.3.7 on the shared serving pod. TGI has
been in maintenance mode since 2025-12-11 (its README: minor fixes and docs only; Hugging Face points to vLLM and
SGLang) — it is kept for teams that run it already. Typed options render the launcher's flags (launcher/src/main.rs
at v3.3.7)."""

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


class TgiQuantize(StrEnum):
    AWQ = "awq"
    GPTQ = "gptq"
    FP8 = "fp8"
    EETQ = "eetq"
    BITSANDBYTES = "bitsandbytes"


class TgiDtype(StrEnum):
    FLOAT16 = "float16"
    BFLOAT16 = "bfloat16"


class TgiKvCacheDtype(StrEnum):
    FP8_E4M3FN = "fp8_e4m3fn"
    FP8_E5M2 = "fp8_e5m2"


class TgiEngineConfig(StrictModel):
    """TGI launcher settings."""

    num_shard: int = Field(default=1, ge=1, le=16)
    """``--num-shard``: tensor-parallel shards = GPUs of one replica. Default 1."""
    max_total_tokens: int = Field(default=8192, ge=16)
    """``--max-total-tokens``: prompt + generated tokens per request. Default 8192 (TGI's default is the model's
    maximum)."""
    max_input_tokens: int | None = Field(default=None, ge=1)
    """``--max-input-tokens``. Default ``max_total_tokens - 1``."""
    max_batch_prefill_tokens: int | None = Field(default=None, ge=16)
    """``--max-batch-prefill-tokens``. Default: TGI's estimate."""
    max_concurrent_requests: int = Field(default=128, ge=1)
    """``--max-concurrent-requests``. Default 128."""
    cuda_memory_fraction: float = Field(default=1.0, gt=0.1, le=1.0)
    """``--cuda-memory-fraction``. Default 1.0."""
    quantize: TgiQuantize | None = None
    """``--quantize``. Default none."""
    dtype: TgiDtype | None = None
    """``--dtype`` (not with ``quantize``). Default: the model's."""
    kv_cache_dtype: TgiKvCacheDtype | None = None
    """``--kv-cache-dtype``. Default: the model dtype."""
    extra_args: tuple[str, ...] = ()
    """More launcher flags, e.g. ``[--max-batch-size, "32"]``: checked against the flag list of the image's TGI release
    (3.3.7 vendored: an unknown flag is a config error naming the nearest; a flag a typed field sets is refused);
    another release's are passed unchecked (warning ENGINE-FLAGS-UNVERIFIED)."""

    @model_validator(mode="after")
    def _limits(self) -> TgiEngineConfig:
        if self.max_input_tokens is not None and self.max_input_tokens >= self.max_total_tokens:
            raise PydanticCustomError(
                "tgi_tokens",
                "must be below max_total_tokens ({total})",
                {"total": self.max_total_tokens, "field": "max_input_tokens"},
            )
        if self.quantize is not None and self.dtype is not None:
            raise PydanticCustomError(
                "tgi_dtype", "TGI refuses --dtype with --quantize — remove one", {"field": "dtype"}
            )
        return self


#: Launcher flags inferstack renders (:mod:`inferstack.charts.tgi`), and ``--max-input-length``, the deprecated alias of
#: ``--max-input-tokens`` (the launcher stops when both are set): in ``extra_args`` they would contradict the typed
#: fields.
TGI_MANAGED_FLAGS = frozenset(
    {
        "--model-id",
        "--hostname",
        "--port",
        "--prometheus-port",
        "--num-shard",
        "--max-total-tokens",
        "--max-concurrent-requests",
        "--cuda-memory-fraction",
        "--max-input-tokens",
        "--max-input-length",
        "--max-batch-prefill-tokens",
        "--quantize",
        "--dtype",
        "--kv-cache-dtype",
        "--revision",
    }
)


class TgiWorkloadConfig(SingleModelWorkload):
    """One model on TGI, one pod of ``num_shard`` GPUs per replica."""

    kind: Literal["tgi"] = "tgi"  # type: ignore[assignment]
    """``tgi``: a Deployment of TGI servers (maintenance mode upstream)."""
    engine: TgiEngineConfig = TgiEngineConfig()
    """TGI settings."""
    image: PinnedImage | None = None
    """The TGI image, pinned by tag or digest (a mirror, another release). Default: the catalog's
    ``ghcr.io/huggingface/text-generation-inference:3.3.7``. Another release is yours to vouch for: the launcher
    flags inferstack renders are 3.3.7's."""

    @model_validator(mode="after")
    def _tgi(self) -> TgiWorkloadConfig:
        if self.model.source.type is ModelSourceType.S3:
            raise PydanticCustomError(
                "tgi_s3",
                "TGI loads from a path or the Hugging Face Hub, not from S3 — use s3_mount (Mountpoint), fsx, efs, hf "
                "or image",
                {"field": "model.source.type"},
            )
        return self

    @property
    def ranks(self) -> int:
        return self.engine.num_shard

    def image_for(self) -> str:
        """``image``, else the catalog's."""
        return self.image or ENGINE_IMAGES["tgi"]

    @property
    def flags_version(self) -> str | None:
        """The TGI release of the image when inferstack carries its launcher's flag list, else None."""
        return vendored_version("tgi", self.image_for())

    def check_in(self, index: int, accelerator: AcceleratorKind) -> None:
        for position, arg in enumerate(self.engine.extra_args):
            # a pattern with a '/' needs directories of its name in WORKDIR (/usr/src): only a bare one expands
            if not arg or any(c.isspace() for c in arg) or ("/" not in arg and any(c in "*?[" for c in arg)):
                raise PydanticCustomError(
                    "tgi_shell_word",
                    "{arg}: TGI's image starts the launcher through tgi-entrypoint.sh, which passes its arguments "
                    "unquoted ($@): an empty item vanishes, spaces split it, * ? [ in a word without / expand to the "
                    "names of files in its WORKDIR — give a flag "
                    "and its value as separate items, or set the value through the flag's environment variable "
                    "(pod.env, e.g. CORS_ALLOW_ORIGIN), which the launcher reads",
                    {"arg": repr(arg)[:60], "field": f"workloads[{index}].engine.extra_args[{position}]"},
                )
        check_engine_extra_args(self.engine.extra_args, "tgi", self.flags_version, index, TGI_MANAGED_FLAGS)
        if accelerator is not AcceleratorKind.NVIDIA:
            raise PydanticCustomError(
                "tgi_accelerator",
                "the TGI image (CUDA) runs on NVIDIA GPUs — put the workload on a GPU pool",
                {"field": f"workloads[{index}].pool"},
            )
