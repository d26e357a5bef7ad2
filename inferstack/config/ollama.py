"""Kind ``ollama``: Ollama (0.32.15) for dev/test and CPU or edge serving of GGUF models — one pod whose models are
pulled from the Ollama registry into a persistent volume when it starts, on a CPU pool or with GPUs."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.kubernetes import MODEL_CACHE_STORAGE_CLASS
from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.config.types import KubernetesName, PinnedImage
from inferstack.config.workloads import ModelConfig, WorkloadBase

#: An Ollama model reference: ``name[:tag]``, optionally ``namespace/name`` (e.g. ``qwen3:8b``, ``llama3.2:3b``).
_OLLAMA_MODEL = re.compile(r"^[a-z0-9][a-z0-9._-]*(/[a-z0-9][a-z0-9._-]*)?(:[A-Za-z0-9._-]+)?$")


class OllamaWorkloadConfig(WorkloadBase):
    """An Ollama server with its models (GGUF, from the Ollama registry)."""

    kind: Literal["ollama"] = "ollama"  # type: ignore[assignment]
    """``ollama``: one Ollama pod with a model volume."""
    models: tuple[str, ...] = Field(min_length=1, max_length=16)
    """Models to pull at start (``ollama pull``), e.g. ``qwen3:8b``; clients name one in ``model``."""
    image: PinnedImage | None = None
    """The Ollama image, pinned by tag or digest (a mirror, another release). Default: the catalog's
    ``docker.io/ollama/ollama:0.32.15``. Another release is yours to vouch for: the pull init container,
    ``OLLAMA_NOPRUNE`` and the read-only model store were read at 0.32.15."""
    gpus: int = Field(default=0, ge=0, le=8)
    """GPUs of the pod. Default 0: CPU (llama.cpp on the node's cores)."""
    storage_gib: int = Field(default=50, ge=32, le=16384)
    """The model volume, GiB (≥ 32: its StorageClass provisions 16,000 IOPS, at most 500 per GiB). Default 50."""
    storage_class: KubernetesName = MODEL_CACHE_STORAGE_CLASS
    """StorageClass of the model volume. Default ``inferstack-model-cache`` (EBS gp3, retained)."""
    keep_alive: str = Field(default="24h", pattern=r"^-?[0-9]+(ms|s|m|h)?$")
    """``OLLAMA_KEEP_ALIVE``: how long a model stays loaded after its last request (negative: forever). Default
    24h (Ollama's 5m would unload a dev model between requests)."""
    num_parallel: int = Field(default=1, ge=1, le=64)
    """``OLLAMA_NUM_PARALLEL``: requests one model serves at once. Default 1 (Ollama's)."""
    context_length: int | None = Field(default=None, ge=256)
    """``OLLAMA_CONTEXT_LENGTH``. Default: Ollama's (from the memory it finds)."""
    monitoring: bool = False
    """Ollama has no Prometheus endpoint (no /metrics at 0.32.15): must stay false."""

    @field_validator("models")
    @classmethod
    def _models(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for item in value:
            if not _OLLAMA_MODEL.match(item):
                raise PydanticCustomError(
                    "ollama_model", "{model} is not an Ollama model — name[:tag], e.g. qwen3:8b", {"model": repr(item)}
                )
        if len(set(value)) != len(value):
            raise PydanticCustomError("ollama_models", "a model is listed twice")
        return value

    @model_validator(mode="after")
    def _ollama(self) -> OllamaWorkloadConfig:
        for field, bad, why in (
            ("monitoring", self.monitoring, "Ollama serves no Prometheus metrics"),
            ("replicas", self.replicas != 1, "one pod owns the ReadWriteOnce model volume — run one replica"),
            ("autoscaling", self.autoscaling is not None, "one pod owns the model volume"),
            ("startup_timeout_seconds", self.startup_timeout_seconds is not None, "models are pulled before probes"),
        ):
            if bad:
                raise PydanticCustomError(
                    "ollama_field", "not available for ollama: {why}", {"why": why, "field": field}
                )
        return self

    @property
    def model_entries(self) -> tuple[tuple[str, ModelConfig], ...]:
        """None: Ollama pulls its models into its own volume (no model bucket, no sync Job)."""
        return ()

    def image_for(self) -> str:
        """``image``, else the catalog's."""
        return self.image or ENGINE_IMAGES["ollama"]

    def check_in(self, index: int, accelerator: AcceleratorKind) -> None:
        if self.gpus and accelerator is not AcceleratorKind.NVIDIA:
            raise PydanticCustomError(
                "ollama_gpus",
                "{gpus} GPUs on a pool without NVIDIA GPUs — use gpus: 0 on CPU pools",
                {"gpus": self.gpus, "field": f"workloads[{index}].gpus"},
            )
