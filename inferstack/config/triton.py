"""Kind ``triton``: one model served by NVIDIA Triton Inference Server with its vLLM backend — a Deployment of
``tritonserver`` pods on the shared serving pod, loading a model repository inferstack generates from the typed vLLM
settings (``config.pbtxt`` with ``backend: "vllm"``, ``1/model.json`` = vLLM engine arguments)."""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator, model_validator
from pydantic_core import PydanticCustomError

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.config.engine import VllmEngineConfig
from inferstack.config.types import PinnedImage
from inferstack.config.workloads import ModelSourceType, SingleModelWorkload


class TritonWorkloadConfig(SingleModelWorkload):
    """One model on Triton's vLLM backend (KServe v2 protocol on 8000, gRPC on 8001, Prometheus on 8002)."""

    kind: Literal["triton"] = "triton"  # type: ignore[assignment]
    """``triton``: a Deployment of Triton Inference Server pods (vLLM backend)."""
    engine: VllmEngineConfig = VllmEngineConfig()
    """vLLM settings, rendered into ``model.json`` (vLLM engine arguments, not a command line: no ``extra_args``,
    no ``image``)."""
    image: PinnedImage | None = None
    """Triton image with the vLLM backend, pinned. Default: the catalog's ``tritonserver:<yy.mm>-vllm-python-py3``."""

    @field_validator("engine")
    @classmethod
    def _engine(cls, value: VllmEngineConfig) -> VllmEngineConfig:
        for field, why in (
            ("extra_args", "model.json takes engine arguments by name, not a command line — use the typed fields"),
            ("image", "the workload's image (Triton with the vLLM backend) runs the engine"),
            ("lmcache", "inferstack does not wire LMCache into Triton's vLLM backend"),
            ("tool_calling", "Triton's vLLM backend serves the KServe v2 generate API, not OpenAI tool calls"),
        ):
            if getattr(value, field):
                raise PydanticCustomError(
                    "triton_engine_field", "not available for triton: {why} — remove it", {"why": why, "field": field}
                )
        return value

    @model_validator(mode="after")
    def _triton(self) -> TritonWorkloadConfig:
        if self.model.source.type is ModelSourceType.S3:
            raise PydanticCustomError(
                "triton_s3",
                "s3 streams with the Run:ai streamer, which Triton's vLLM image is not known to carry — use s3_mount "
                "(Mountpoint), fsx, efs, hf or image",
                {"field": "model.source.type"},
            )
        if self.autoscaling is not None:
            raise PydanticCustomError(
                "triton_autoscaling",
                "not available for triton: its queue metric is not wired by inferstack — set replicas",
                {"field": "autoscaling"},
            )
        return self

    @property
    def ranks(self) -> int:
        return self.engine.tensor_parallel_size * self.engine.pipeline_parallel_size

    def image_for(self) -> str:
        return self.image or ENGINE_IMAGES["triton-vllm"]

    def check_in(self, index: int, accelerator: AcceleratorKind) -> None:
        if accelerator is not AcceleratorKind.NVIDIA:
            raise PydanticCustomError(
                "triton_accelerator",
                "Triton's vLLM backend image runs on NVIDIA GPUs — put the workload on a GPU pool",
                {"field": f"workloads[{index}].pool"},
            )
