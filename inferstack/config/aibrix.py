"""AIBrix (vllm-project/aibrix v0.7.0) on a ``vllm`` workload: multi-tenant LoRA — its pods labelled for AIBrix's model
router and adapter controller, vLLM with runtime LoRA loading, one ``ModelAdapter`` per adapter and optionally an
AIBrix ``PodAutoscaler``. The AIBrix control plane itself (its controller, Envoy Gateway v1.2.8 with
``enableEnvoyPatchPolicy``, the gateway plugin) is installed from its release manifests and is not installed by
inferstack: its chart (``dist/chart``) is in its git tree only, in no Helm repository, and neither it nor the release
manifests are vendored — declare it in ``cluster.aibrix``."""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from inferstack.config.base import StrictModel
from inferstack.config.types import ServiceName

_HF_ARTIFACT = re.compile(r"^huggingface://[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
#: ``--max-lora-rank`` choices of vLLM 0.19.0 (engine_flag_data/vllm-0.19.0.json).
LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


class LoraAdapter(StrictModel):
    """One LoRA adapter: a ``ModelAdapter`` that AIBrix loads into the workload's vLLM pods."""

    name: ServiceName
    """The adapter's name: what clients put in ``model`` (AIBrix loads it as ``lora_name = metadata.name``)."""
    artifact: str
    """Where it comes from: ``huggingface://org/adapter`` (vLLM downloads it). S3 artifacts need AIBrix's runtime
    sidecar, which takes static access keys from a Secret (no session token) or else boto3's default chain, which is
    not confirmed to reach Pod Identity there (aibrix v0.7.0 ``runtime/downloaders.py:104-117``): not offered."""
    base_model: str
    """The Hugging Face id of the model it was trained on: must be the workload's model (rule AIBRIX-BASE-MODEL)."""

    @field_validator("artifact")
    @classmethod
    def _artifact(cls, value: str) -> str:
        if value.startswith("s3://"):
            raise PydanticCustomError(
                "adapter_s3",
                "S3 adapters need AIBrix's runtime sidecar, which inferstack does not run (it takes static keys, no "
                "session token) — publish the adapter on the Hugging Face Hub (huggingface://org/adapter)",
            )
        if not _HF_ARTIFACT.match(value):
            raise PydanticCustomError(
                "adapter_artifact",
                "not an adapter artifact — huggingface://org/adapter (AIBrix rewrites only huggingface:// for vLLM; an "
                "hf:// URL reaches vLLM unchanged and fails to load)",
            )
        return value


class AutoscalingStrategy(StrEnum):
    KPA = "KPA"
    """Knative-style panic/stable windows. Default."""
    APA = "APA"
    """AIBrix's own (fluctuation tolerance)."""
    HPA = "HPA"
    """An HPA managed by AIBrix."""


class AibrixMetric(StrEnum):
    """AIBrix's metric registry keys (pkg/metrics/metrics.go at v0.7.0), not vLLM's raw names. Not
    ``gpu_cache_usage_perc``: it maps to ``vllm:gpu_cache_usage_perc``, which vLLM 0.19 no longer exports (#29330),
    and AIBrix reads a missing metric as 0 — it would never scale."""

    NUM_REQUESTS_WAITING = "num_requests_waiting"
    KV_CACHE_USAGE_PERC = "kv_cache_usage_perc"


class AibrixAutoscaler(StrictModel):
    """An AIBrix ``PodAutoscaler`` on the workload's Deployment (scraping each pod's ``/metrics`` on 8000)."""

    strategy: AutoscalingStrategy = AutoscalingStrategy.KPA
    """Default KPA."""
    min_replicas: int = Field(default=1, ge=1)
    """Default 1."""
    max_replicas: int = Field(default=4, ge=1)
    """Default 4."""
    metric: AibrixMetric = AibrixMetric.NUM_REQUESTS_WAITING
    """Default ``num_requests_waiting``."""
    target: float = Field(default=5, gt=0)
    """Per-pod target of ``metric`` (requests, or a 0–1 usage fraction). Default 5."""

    @model_validator(mode="after")
    def _range(self) -> AibrixAutoscaler:
        if self.min_replicas > self.max_replicas:
            raise PydanticCustomError("replicas", "min_replicas must be ≤ max_replicas", {"field": "min_replicas"})
        return self


class AibrixConfig(StrictModel):
    """AIBrix for this workload: LoRA adapters and its autoscaler."""

    adapters: tuple[LoraAdapter, ...] = ()
    """The adapters (each a ModelAdapter). Default none (LoRA loading on, adapters added later)."""
    max_loras: int = Field(default=4, ge=1, le=64)
    """``--max-loras``: adapters one pod holds at once. Default 4."""
    max_lora_rank: int = 64
    """``--max-lora-rank``: one of vLLM's choices 1, 8, 16, 32, 64, 128, 256, 320, 512. Default 64."""
    autoscaler: AibrixAutoscaler | None = None
    """An AIBrix PodAutoscaler (instead of ``autoscaling``). Default none."""

    @field_validator("max_lora_rank")
    @classmethod
    def _rank(cls, value: int) -> int:
        if value not in LORA_RANKS:
            raise PydanticCustomError(
                "lora_rank",
                "{value} — vLLM 0.19 accepts {valid}",
                {"value": value, "valid": ", ".join(map(str, LORA_RANKS))},
            )
        return value

    @field_validator("adapters")
    @classmethod
    def _unique(cls, value: tuple[LoraAdapter, ...]) -> tuple[LoraAdapter, ...]:
        names = [a.name for a in value]
        if len(set(names)) != len(names):
            raise PydanticCustomError("adapter_names", "adapter names are unique (clients name them in model)")
        return value


class AibrixPlatformConfig(StrictModel):
    """The AIBrix control plane on the cluster, installed by you from its release manifests
    (``aibrix-dependency-v0.7.0.yaml`` — Envoy Gateway v1.2.8 — then ``aibrix-core-crds`` and ``aibrix-core``)."""

    version: str = Field(default="0.7.0", pattern=r"^0\.7\.[0-9]+$")
    """Its release (inferstack renders AIBrix v0.7 objects). Default 0.7.0."""
