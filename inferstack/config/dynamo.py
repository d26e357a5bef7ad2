"""Kind ``dynamo``: one model served by NVIDIA Dynamo through its operator — a ``nvidia.com/v1beta1``
DynamoGraphDeployment of a frontend (OpenAI API, router) and vLLM workers, either ``aggregated`` (each worker
prefills and decodes) or ``disaggregated`` (prefill workers hand their KV cache to decode workers over NIXL, on EFA
pools through libfabric)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from inferstack.catalog.images import image_facts
from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.versions import ENGINE_VLLM_VERSIONS, IMAGES
from inferstack.config.base import StrictModel
from inferstack.config.engine import VllmEngineConfig, check_extra_args
from inferstack.config.ray_serve import NixlBackend
from inferstack.config.types import KubernetesName, PinnedImage
from inferstack.config.workloads import ModelSourceType, SingleModelWorkload

#: The vLLM flag list a worker's ``extra_args`` are checked against: the runtime image ships vLLM 0.26.0
#: (pyproject.toml ``vllm[flashinfer,runai,otel]==0.26.0`` at Dynamo 1.4.0), whose list is vendored (dumped from the
#: 0.26.0 wheel's own parser: scripts/upstream/engines). Another 1.4 runtime's vLLM is not known: the same list.
DYNAMO_VLLM_FLAGS = ENGINE_VLLM_VERSIONS["dynamo-vllm"]

#: Longest workload name: the operator names a worker component's objects ``<name>-<component>-<worker hash>``
#: (GetDCDResourceName, dynamo/graph.go at 1.4.0; ``-prefill`` is the longest component, the hash 8 hex characters:
#: internal/dynamo/hash.go), and a Service name is a DNS label of at most 63.
MAX_NAME_LENGTH = 40
#: The operator's Dynamo namespace ``<namespace>-<name>`` is the label value ``nvidia.com/dynamo-namespace`` of every
#: component and pod (v1beta1 dynamocomponentdeployment_types.go, graph.go): at most 63 characters.
MAX_DYNAMO_NAMESPACE_LENGTH = 63


class DynamoMode(StrEnum):
    """How the workers split the work."""

    AGGREGATED = "aggregated"
    """Each worker runs prefill and decode (``workers``). Default."""
    DISAGGREGATED = "disaggregated"
    """Prefill workers and decode workers (``prefill``, ``decode``), the KV cache moved by NIXL."""


class RouterMode(StrEnum):
    """How the frontend picks a worker (``python3 -m dynamo.frontend --router-mode``, Dynamo 1.4)."""

    KV = "kv"
    """KV-cache aware: to the worker that already holds the prompt's prefix (workers publish KV events). Default."""
    ROUND_ROBIN = "round-robin"
    RANDOM = "random"
    LEAST_LOADED = "least-loaded"
    POWER_OF_TWO = "power-of-two"


class DynamoFrontendConfig(StrictModel):
    """The frontend: OpenAI-compatible HTTP on port 8000 and the router (CPU only, on the system nodes)."""

    replicas: int = Field(default=1, ge=1, le=32)
    """Default 1."""
    router_mode: RouterMode = RouterMode.KV
    """Default ``kv`` (workers publish KV events over ZMQ)."""
    cpu: float = Field(default=2, gt=0, le=64)
    """vCPUs per frontend pod. Default 2."""
    memory_gib: float = Field(default=4, gt=0, le=256)
    """Memory per frontend pod, GiB (requests = limits). Default 4."""
    image: PinnedImage | None = None
    """The frontend image, pinned: a mirror of ``nvcr.io/nvidia/ai-dynamo/dynamo-frontend`` or another release of it,
    ``…/ai-dynamo/dynamo-frontend:<release>`` of the pinned operator's major.minor. Default: the catalog's
    ``dynamo-frontend:1.4.0``."""

    @model_validator(mode="after")
    def _release(self) -> DynamoFrontendConfig:
        if self.image is not None:
            check_release(self.image, "dynamo-frontend", "image")
        return self


def check_release(image: str, repository: str, field: str) -> None:
    """``image`` is Dynamo's ``repository`` (``vllm-runtime``, ``dynamo-frontend``) wherever mirrored, its tag naming
    a release of the pinned operator's major.minor — the operator renders env, probes and discovery for its own
    release (a runtime of another is run with its defaults without a word: constructs/dynamo.py
    runtime_version_problem, which the chart checks again)."""
    facts = image_facts(image)
    operator = IMAGES["dynamo-operator"].rsplit(":", 1)[1]
    example = f"nvcr.io/nvidia/ai-dynamo/{repository}:{operator}"
    if facts is None or facts.engine != "dynamo" or f"ai-dynamo/{repository}:" not in image:
        raise PydanticCustomError(
            "dynamo_image",
            "{image} is not Dynamo's {repository} named by its release — …/ai-dynamo/{repository}:<release> (e.g. "
            "{example}, or your mirror of it)",
            {"image": repr(image), "repository": repository, "example": example, "field": field},
        )
    release = str(facts.engine_version)
    if release.split(".")[:2] != operator.split(".")[:2]:
        raise PydanticCustomError(
            "dynamo_release",
            "{image} is Dynamo {release}, but the pinned operator is {operator} and would run it with {operator}'s "
            "env, probes and discovery — use a {minor}.x image (e.g. {example})",
            {
                "image": repr(image),
                "release": release,
                "operator": operator,
                "minor": ".".join(operator.split(".")[:2]),
                "example": example,
                "field": field,
            },
        )


def check_runtime_args(args: tuple[str, ...], prefix: str) -> None:
    """``args`` against the runtime's vLLM 0.26.0 flag list."""
    check_extra_args(args, DYNAMO_VLLM_FLAGS, prefix=prefix)


def _worker_engine(engine: VllmEngineConfig) -> VllmEngineConfig:
    """What a Dynamo worker's engine cannot have: its own image (the workload's runtime image runs every worker),
    LMCache (not wired into Dynamo by inferstack)."""
    for field, why in (
        ("image", "every worker runs the workload's Dynamo vLLM runtime image (workloads[].image)"),
        ("lmcache", "inferstack does not wire LMCache into Dynamo workers"),
        ("tool_calling", "tool calling is the frontend's in Dynamo, not a vLLM engine flag"),
    ):
        if getattr(engine, field) is not None:
            raise PydanticCustomError(
                "dynamo_engine_field",
                "not available for dynamo workers: {why} — remove it",
                {"why": why, "field": field},
            )
    return engine


class DynamoWorkersConfig(StrictModel):
    """One kind of vLLM worker (``python3 -m dynamo.vllm``): its replicas and engine settings."""

    replicas: int = Field(default=1, ge=1, le=256)
    """Worker pods (each one engine of ``tensor_parallel_size`` GPUs on one node). Default 1."""
    engine: VllmEngineConfig = VllmEngineConfig()
    """vLLM settings, passed to ``dynamo.vllm`` as vLLM engine arguments. Default TP 1."""

    @field_validator("engine")
    @classmethod
    def _engine(cls, value: VllmEngineConfig) -> VllmEngineConfig:
        return _worker_engine(value)


class DynamoWorkloadConfig(SingleModelWorkload):
    """One model served by Dynamo: a frontend and vLLM workers in one DynamoGraphDeployment."""

    kind: Literal["dynamo"] = "dynamo"  # type: ignore[assignment]
    """``dynamo``: a DynamoGraphDeployment (frontend + vLLM workers) reconciled by the Dynamo operator."""
    mode: DynamoMode = DynamoMode.AGGREGATED
    """``aggregated`` (``workers``) or ``disaggregated`` (``prefill`` + ``decode``). Default aggregated."""
    frontend: DynamoFrontendConfig = DynamoFrontendConfig()
    """The frontend. Default: one pod, KV routing."""
    workers: DynamoWorkersConfig | None = None
    """Aggregated workers. Default (``mode: aggregated``): one worker, TP 1."""
    prefill: DynamoWorkersConfig | None = None
    """Disaggregated prefill workers. Default (``mode: disaggregated``): one, TP 1."""
    decode: DynamoWorkersConfig | None = None
    """Disaggregated decode workers. Default (``mode: disaggregated``): one, TP 1."""
    kv_backends: tuple[NixlBackend, ...] = Field(default=(NixlBackend.LIBFABRIC,), min_length=1)
    """NIXL backends of the KV transfer (``disaggregated``). Default ``[LIBFABRIC]`` (EFA)."""
    image: PinnedImage | None = None
    """The vLLM runtime image every worker runs, pinned: a mirror of ``nvcr.io/nvidia/ai-dynamo/vllm-runtime`` or
    another release of it, ``…/ai-dynamo/vllm-runtime:<release>[-efa]`` — the tag names the release, which must be
    the pinned operator's major.minor (the operator renders env, probes and discovery for its own release), and
    ``-efa`` builds carry libfabric and aws-ofi-nccl (NIXL's LIBFABRIC backend needs them: IMAGE-NIXL-LIBFABRIC).
    The vLLM inside another release than the catalog's is not known (its ``extra_args`` are checked against the
    vendored lists nearest the catalog's). Default: the catalog's ``vllm-runtime:1.4.0``, ``1.4.0-efa`` with
    ``efa``."""
    image_pull_secret: KubernetesName | None = None
    """Secret (``kubernetes.io/dockerconfigjson``) for the Dynamo images, when the registry needs one (a mirror).
    Default none: the ``nvcr.io/nvidia/ai-dynamo`` images are pulled anonymously (?)."""

    @field_validator("name")
    @classmethod
    def _name_length(cls, value: str) -> str:
        if len(value) > MAX_NAME_LENGTH:
            raise PydanticCustomError(
                "dynamo_name",
                "{length} characters — a dynamo workload name has at most {max}: the operator names each component "
                "'<name>-<component>-<hash>' (up to 23 more characters), a Service name within 63",
                {"length": len(value), "max": MAX_NAME_LENGTH},
            )
        return value

    @model_validator(mode="after")
    def _shape(self) -> DynamoWorkloadConfig:
        dynamo_namespace = f"{self.namespace}-{self.name}"
        if len(dynamo_namespace) > MAX_DYNAMO_NAMESPACE_LENGTH:
            raise PydanticCustomError(
                "dynamo_namespace",
                "namespace and name make the operator's Dynamo namespace {value} ({length} characters), a label "
                "value of at most 63 — shorten the name or the namespace",
                {"value": repr(dynamo_namespace), "length": len(dynamo_namespace), "field": "name"},
            )
        aggregated = self.mode is DynamoMode.AGGREGATED
        wrong = ("prefill", "decode") if aggregated else ("workers",)
        for field in wrong:
            if getattr(self, field) is not None:
                other = "workers" if aggregated else "prefill and decode"
                raise PydanticCustomError(
                    "dynamo_mode_role",
                    "{field} belongs to mode {mode} — with mode {current} set {other}",
                    {
                        "field": field,
                        "mode": "aggregated" if field == "workers" else "disaggregated",
                        "current": self.mode.value,
                        "other": other,
                    },
                )
        if self.image is not None:
            check_release(self.image, "vllm-runtime", "image")
        if self.model.source.type is ModelSourceType.IMAGE:
            raise PydanticCustomError(
                "dynamo_image_source",
                "the workers run the Dynamo runtime image, so weights cannot come in an image of their own — use "
                "hf, s3_mount, fsx or efs",
                {"field": "model.source.type"},
            )
        for field, why in (
            (
                "service_account",
                "its pods run as the ServiceAccount the Dynamo operator creates for service discovery "
                "('<name>-k8s-service-discovery')",
            ),
            ("autoscaling", "set workers/prefill/decode replicas (the Dynamo planner is not wired by inferstack)"),
            ("startup_timeout_seconds", "the operator probes the workers itself"),
        ):
            if getattr(self, field) is not None:
                raise PydanticCustomError(
                    "dynamo_field",
                    "not available for dynamo workloads: {why} — remove it",
                    {"why": why, "field": field},
                )
        if not self.probes.empty:
            raise PydanticCustomError(
                "dynamo_field",
                "not available for dynamo workloads: {why} — remove it",
                {"why": "the operator probes the frontend and workers itself (/health, /live)", "field": "probes"},
            )
        if self.replicas != 1:
            raise PydanticCustomError(
                "dynamo_replicas",
                "a dynamo workload is one graph — set workers.replicas (or prefill/decode.replicas) instead",
                {"field": "replicas"},
            )
        return self

    @property
    def serving_account(self) -> str:
        """The account the Dynamo operator gives every pod of the graph (``<name>-k8s-service-discovery``,
        discovery.GetK8sDiscoveryServiceAccountName at 1.4.0)."""
        return f"{self.name}-k8s-service-discovery"

    def named_secrets(self) -> tuple[str, ...]:
        return (self.image_pull_secret,) if self.image_pull_secret else ()

    @property
    def roles(self) -> dict[str, DynamoWorkersConfig]:
        """Worker roles by component name: ``worker``, or ``prefill`` and ``decode``."""
        if self.mode is DynamoMode.AGGREGATED:
            return {"worker": self.workers or DynamoWorkersConfig()}
        return {"prefill": self.prefill or DynamoWorkersConfig(), "decode": self.decode or DynamoWorkersConfig()}

    @staticmethod
    def role_path(role: str) -> str:
        """Config path of a role, relative to the workload."""
        return "workers" if role == "worker" else role

    def check_in(self, index: int, accelerator: AcceleratorKind) -> None:
        """GPU pools only; each role's ``extra_args`` are vLLM flags (``dynamo.vllm`` parses them strictly)."""
        if accelerator is not AcceleratorKind.NVIDIA:
            raise PydanticCustomError(
                "dynamo_accelerator",
                "Dynamo's vLLM runtime runs on NVIDIA GPUs only — put the workload on a GPU pool",
                {"field": f"workloads[{index}].pool"},
            )
        for name, role in self.roles.items():
            if role.engine.extra_args:
                check_runtime_args(role.engine.extra_args, f"workloads[{index}].{self.role_path(name)}.engine.")
