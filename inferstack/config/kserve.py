"""Kind ``kserve``: one model as a KServe ``InferenceService`` on the Hugging Face runtime's vLLM backend
(``kserve-huggingfaceserver``, KServe v0.20.0), in ``Standard`` mode (a Deployment, HPA; never below one replica) or
``Knative`` mode (a Knative Service that scales to zero and wakes on the first request). The weights are mounted from
the model bucket (Mountpoint for S3) or FSx as a ``pvc://`` storage URI — KServe reads no AWS credentials — or
downloaded from Hugging Face at start."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.base import StrictModel
from inferstack.config.engine import VllmEngineConfig, check_extra_args_near
from inferstack.config.workloads import ModelSourceType, SingleModelWorkload

#: vLLM flag lists ``extra_args`` are checked against: kserve/huggingfaceserver:v0.20.0-gpu ships vLLM 0.24.0
#: (python/huggingface_server.Dockerfile, uv.lock at v0.20.0), whose list is not vendored — the lists around it.
KSERVE_VLLM_FLAGS = ("0.19.0", "0.33.0")
#: Longest workload name: KServe names the predictor ``<name>-predictor`` and Knative its revisions
#: ``<name>-predictor-00001`` with a ``-deployment-<10>-<5>`` pod suffix; the Knative Service name is a DNS label.
MAX_NAME_LENGTH = 40


class DeploymentMode(StrEnum):
    """KServe's deployment modes (annotation ``serving.kserve.io/deploymentMode``)."""

    STANDARD = "Standard"
    """A Deployment + Service + HPA: at least one replica always runs. Default."""
    KNATIVE = "Knative"
    """A Knative Service: scales to zero, the activator holds the first request while a pod starts."""


class ScaleMetric(StrEnum):
    """What the autoscaler follows (``predictor.scaleMetric``): ``concurrency``/``rps`` need Knative's KPA,
    ``cpu``/``memory`` the Standard-mode HPA."""

    CONCURRENCY = "concurrency"
    RPS = "rps"
    CPU = "cpu"
    MEMORY = "memory"


class KServeScaling(StrictModel):
    """Replicas of the predictor."""

    min_replicas: int = Field(default=1, ge=0, le=100)
    """Default 1. ``0`` scales to zero — only in ``Knative`` mode (Standard raises it to 1 without a word)."""
    max_replicas: int = Field(default=1, ge=1, le=100)
    """Default 1."""
    metric: ScaleMetric | None = None
    """Default: ``concurrency`` in Knative mode; none (no HPA metric) in Standard mode with one replica."""
    target: int | None = Field(default=None, ge=1)
    """Per-replica target of ``metric`` (requests in flight, requests/s, or % utilization). Default: KServe's."""

    @model_validator(mode="after")
    def _range(self) -> KServeScaling:
        if self.min_replicas > self.max_replicas:
            raise PydanticCustomError("replicas", "min_replicas must be ≤ max_replicas", {"field": "min_replicas"})
        return self


class KServeWorkloadConfig(SingleModelWorkload):
    """One model served by KServe's Hugging Face runtime with the vLLM backend."""

    kind: Literal["kserve"] = "kserve"  # type: ignore[assignment]
    """``kserve``: an InferenceService (Hugging Face runtime, vLLM backend)."""
    deployment_mode: DeploymentMode = DeploymentMode.STANDARD
    """``Standard`` (default) or ``Knative`` (scale to zero; Knative Serving must run on the cluster:
    ``cluster.knative_serving``)."""
    scaling: KServeScaling = KServeScaling()
    """Replicas and the autoscaler's metric. Default: exactly one replica."""
    engine: VllmEngineConfig = VllmEngineConfig()
    """vLLM settings, passed to the server as vLLM arguments. ``tensor_parallel_size`` is the pod's GPUs (the
    server sets TP to the visible GPUs); no pipeline parallelism."""
    cold_start_tolerance_seconds: int | None = Field(default=None, ge=1)
    """How long a client accepts to wait for the first response when no replica runs (a node, the image and the
    model load). Default: not stated (nothing checks the cold start)."""

    @field_validator("name")
    @classmethod
    def _name_length(cls, value: str) -> str:
        if len(value) > MAX_NAME_LENGTH:
            raise PydanticCustomError(
                "kserve_name",
                "{length} characters — a kserve workload name has at most {max}: KServe and Knative name the "
                "predictor's Service and revisions '<name>-predictor-00001' and its pods add more, within 63",
                {"length": len(value), "max": MAX_NAME_LENGTH},
            )
        return value

    @field_validator("engine")
    @classmethod
    def _engine(cls, value: VllmEngineConfig) -> VllmEngineConfig:
        if value.pipeline_parallel_size != 1:
            raise PydanticCustomError(
                "kserve_pp",
                "the Hugging Face server sets tensor parallelism to every visible GPU (vllm_model.py): pipeline "
                "parallelism would not be what the pod asks for — use tensor_parallel_size alone",
                {"field": "pipeline_parallel_size"},
            )
        for field, why in (
            ("image", "the runtime's image (kserve/huggingfaceserver, -gpu with GPUs) runs the engine"),
            ("lmcache", "inferstack does not wire LMCache into KServe's runtime"),
        ):
            if getattr(value, field):
                raise PydanticCustomError(
                    "kserve_engine_field", "not available for kserve: {why} — remove it", {"why": why, "field": field}
                )
        return value

    @model_validator(mode="after")
    def _kserve(self) -> KServeWorkloadConfig:
        source = self.model.source.type
        if source is ModelSourceType.S3:
            raise PydanticCustomError(
                "kserve_s3",
                "KServe's storage-initializer has no EKS Pod Identity path (it reads credentials from IRSA or Secrets "
                "only) — use s3_mount: the Mountpoint CSI driver reads the bucket with its own role and KServe mounts "
                "the claim (pvc://), no credentials in the pod",
                {"field": "model.source.type"},
            )
        if source is ModelSourceType.IMAGE:
            raise PydanticCustomError(
                "kserve_image_source",
                "the runtime's image runs the server: weights in an image of their own would be a modelcar "
                "(oci://), which inferstack does not render — use s3_mount, fsx, efs or hf",
                {"field": "model.source.type"},
            )
        for field, why in (
            ("autoscaling", "set scaling (KServe's own autoscaler: HPA, or Knative's KPA)"),
            ("startup_timeout_seconds", "the startup budget is sized from the model (and Knative's progress deadline)"),
        ):
            if getattr(self, field) is not None:
                raise PydanticCustomError(
                    "kserve_field", "not available for kserve: {why} — remove it", {"why": why, "field": field}
                )
        if self.replicas != 1:
            raise PydanticCustomError(
                "kserve_replicas", "set scaling.min_replicas / max_replicas instead of replicas", {"field": "replicas"}
            )
        metric = self.scaling.metric
        knative = self.deployment_mode is DeploymentMode.KNATIVE
        if metric is not None and knative != (metric in (ScaleMetric.CONCURRENCY, ScaleMetric.RPS)):
            valid = "concurrency or rps" if knative else "cpu or memory"
            raise PydanticCustomError(
                "kserve_metric",
                "{metric} is not a {mode}-mode metric — use {valid}",
                {"metric": metric.value, "mode": self.deployment_mode.value, "valid": valid, "field": "scaling.metric"},
            )
        return self

    @property
    def ranks(self) -> int:
        return self.engine.tensor_parallel_size

    def check_in(self, index: int, accelerator: AcceleratorKind) -> None:
        """GPU pools only (the ``-gpu`` runtime image); ``extra_args`` are vLLM flags — the server drops unknown
        arguments silently (``parse_known_args``), so a misspelt flag is an error here."""
        if accelerator is not AcceleratorKind.NVIDIA:
            raise PydanticCustomError(
                "kserve_accelerator",
                "the Hugging Face runtime's vLLM backend runs on NVIDIA GPUs — put the workload on a GPU pool",
                {"field": f"workloads[{index}].pool"},
            )
        if self.engine.extra_args:
            check_extra_args_near(self.engine.extra_args, KSERVE_VLLM_FLAGS, f"workloads[{index}].engine.")
