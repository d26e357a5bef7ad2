"""Workloads: what is served, from where, on which pool. Engine settings live next to the source."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.models import MODELS, ModelArchitecture, near_model_ids
from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.config.aibrix import AibrixConfig
from inferstack.config.alerts import AlertTargets
from inferstack.config.base import StrictModel, refuse_unread
from inferstack.config.bench import BenchConfig
from inferstack.config.caches import WorkloadCachesConfig
from inferstack.config.engine import (
    AutoscalingConfig,
    ResourcesConfig,
    VllmEngineConfig,
    check_extra_args,
    flags_version_of,
)
from inferstack.config.pod import PodConfig
from inferstack.config.probes import ProbeScheme, ProbesConfig
from inferstack.config.routing import RoutingConfig
from inferstack.config.secret_ref import SecretRef
from inferstack.config.storage import check_fs_path, check_prefix
from inferstack.config.types import KubernetesName, ServiceName, check_plain

_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$")
_HF_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
#: Flags inferstack renders for Mistral-format checkpoints (``--tokenizer-mode mistral --config-format mistral``).
MISTRAL_FORMAT_FLAGS = frozenset({"--tokenizer-mode", "--config-format", "--load-format"})
#: An ``overrides`` key: an object's Kind, or Kind/name.
OverrideTarget = Annotated[str, Field(pattern=r"^[A-Z][A-Za-z0-9]*(/[a-z0-9]([-a-z0-9.]*[a-z0-9])?)?$")]
_IMAGE = re.compile(r"^[a-z0-9.-]+(:[0-9]+)?/[a-z0-9._/-]+(:[A-Za-z0-9._-]+|@sha256:[a-f0-9]{64})$")
#: A served model name: printable, no whitespace (it is a command-line value and a JSON string clients send).
_SERVED_NAME = re.compile(r"^[^\s\x00-\x1f\x7f]{1,256}$")


def _reason(value: str) -> str:
    if len(value.strip()) < 10:
        raise PydanticCustomError(
            "acknowledgement_reason",
            "a reason is required — at least 10 characters on why this override is meant, as for acknowledge[].reason",
        )
    return value


#: Why an override is meant (``override_acknowledgements``): at least 10 characters besides white space.
AcknowledgementReason = Annotated[str, AfterValidator(_reason)]


class ModelSourceType(StrEnum):
    """How the weights reach the engine (seed 000's model-loading table)."""

    S3 = "s3"
    """Run:ai streamer straight from the model bucket: no PV/PVC; default, models ≤ ~48 GB."""
    S3_MOUNT = "s3_mount"
    """Mountpoint for S3 CSI, ReadOnlyMany PV/PVC shared by all replicas (Ray head and workers)."""
    FSX = "fsx"
    """FSx for Lustre pre-cache (same AZ): the largest models."""
    IMAGE = "image"
    """Weights baked into the container image: tiny models, air-gapped clusters."""
    HF = "hf"
    """Download from Hugging Face at start into a cache volume."""
    EFS = "efs"
    """A directory of ``storage.efs`` holding the checkpoint (written there by you or a training job), mounted
    read-only by every replica: regional, any zone."""


#: Sources whose weights live in the model bucket under ``source.prefix`` (``fsx`` through its data repository):
#: the only ones a prefix, a sync Job or a bucket role is for.
BUCKET_SOURCES = (ModelSourceType.S3, ModelSourceType.S3_MOUNT, ModelSourceType.FSX)


class InlineArchitecture(StrictModel):
    """Architecture of a model that is not in the catalog (numbers from its config.json)."""

    params: int = Field(gt=0)
    """Total parameters (MoE: all experts)."""
    layers: int = Field(gt=0)
    """Transformer layers (``num_hidden_layers``)."""
    attention_heads: int = Field(gt=0)
    """Query heads (``num_attention_heads``)."""
    kv_heads: int = Field(gt=0)
    """Key/value heads (``num_key_value_heads``; GQA)."""
    head_dim: int = Field(gt=0)
    """Dimension of one attention head."""
    max_context: int = Field(gt=0)
    """Longest context the model supports, tokens (``max_position_embeddings``)."""
    shipped_weights_gib: float | None = Field(default=None, gt=0)
    """Size of the checkpoint as shipped, GiB. Default: params × 2 bytes."""
    mla_latent_dim: int | None = Field(default=None, gt=0)
    """MLA: KV latent per layer (``kv_lora_rank`` + rope dims). Default none (not MLA)."""
    sliding_window: int | None = Field(default=None, gt=0)
    """Sliding-window attention span, tokens. Default none."""
    sliding_layers: int = Field(default=0, ge=0)
    """Layers with sliding-window attention. Default 0."""
    gated: bool = False
    """Hugging Face requires accepting a licence (a token is needed). Default false."""


class ModelSource(StrictModel):
    """Where the engine reads the weights from. Default: Run:ai streamer from ``models/<id>/<revision>/``."""

    type: ModelSourceType = ModelSourceType.S3
    """``s3`` (Run:ai streamer from the bucket), ``s3_mount`` (Mountpoint), ``fsx``, ``image``, ``hf`` or ``efs``.
    Default s3."""
    prefix: str | None = None
    """Bucket prefix (``s3``, ``s3_mount``, ``fsx``). Default ``models/<model id>/<revision>/``."""
    image: str | None = None
    """``image`` source: the image carrying the weights, pinned by tag or digest."""
    path: str | None = None
    """``image`` source: where the weights are inside the image. ``efs`` source: the checkpoint's directory in the
    file system (absolute, not ``/``, e.g. ``/models/Qwen3-8B``; its ``config.json`` and weights directly in it),
    readable by uid 1000 — the serving pods mount only this directory, read-only, and nothing fills it: inferstack
    neither creates nor syncs it (a directory that does not exist leaves the pods in ContainerCreating)."""
    streamer_concurrency: int = Field(default=16, ge=1, le=64)
    """Run:ai streamer parallel reads. Default 16."""
    cache_size_gib: int = Field(default=100, ge=1)
    """``hf`` source: size of the download cache volume, GiB. Default 100."""

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str | None) -> str | None:
        return None if value is None else check_prefix(value)

    @field_validator("image")
    @classmethod
    def _image(cls, value: str | None) -> str | None:
        if value is not None and not _IMAGE.match(value):
            raise PydanticCustomError("image", "not a pinned image reference — registry/repo:tag or @sha256:digest")
        return value

    @model_validator(mode="after")
    def _image_fields(self) -> ModelSource:
        if self.type is ModelSourceType.IMAGE and not (self.image and self.path):
            raise PydanticCustomError(
                "image_source", "an image source needs image and path", {"field": "image" if not self.image else "path"}
            )
        if self.type is ModelSourceType.EFS:
            if self.image:
                raise PydanticCustomError(
                    "not_image", "image applies to type: image only — an efs source reads path", {"field": "image"}
                )
            if not self.path:
                raise PydanticCustomError(
                    "efs_source",
                    "an efs source needs path: the checkpoint's directory in the file system (e.g. /models/Qwen3-8B)",
                    {"field": "path"},
                )
            try:
                check_fs_path(self.path)
            except PydanticCustomError:
                raise PydanticCustomError(
                    "fs_path",
                    "'{value}' — the checkpoint's directory in the file system: an absolute path of letters, digits, "
                    "'-', '_', '.' and '/', without '..' or a trailing '/' (e.g. /models/Qwen3-8B)",
                    {"value": self.path, "field": "path"},
                ) from None
            if self.path == "/":
                raise PydanticCustomError(
                    "efs_root",
                    "'/' is the file system's root, which holds every inferstack-efs cache's directory too — name the "
                    "checkpoint's own directory (e.g. /models/Qwen3-8B)",
                    {"field": "path"},
                )
        elif self.type is not ModelSourceType.IMAGE and (self.image or self.path):
            field = "image" if self.image else "path"
            raise PydanticCustomError(
                "not_image",
                "{field} applies to type: image (path to efs too), and the source is type {type} — remove {field}, or "
                "set type: image (or efs)",
                {"field": field, "type": self.type.value},
            )
        if self.type not in BUCKET_SOURCES:
            refuse_unread(
                self,
                ("prefix",),
                f"with a bucket-backed type (s3, s3_mount, fsx), and the source is type {self.type.value}",
                "set type: s3, s3_mount or fsx",
            )
        if self.type is not ModelSourceType.S3:
            refuse_unread(
                self,
                ("streamer_concurrency",),
                f"with type s3 only (the Run:ai streamer's parallel reads), and the source is type {self.type.value}",
                "set type: s3",
            )
        if self.type is not ModelSourceType.HF:
            refuse_unread(
                self,
                ("cache_size_gib",),
                f"with type hf only (the download cache volume), and the source is type {self.type.value}",
                "set type: hf",
            )
        return self


class ModelConfig(StrictModel):
    """The model a workload serves."""

    id: str
    """Hugging Face id, e.g. ``meta-llama/Llama-3.1-8B-Instruct``."""
    revision: str = "main"
    """Branch, tag or commit (Hugging Face revision: letters, digits, ``.``, ``_``, ``-``, ``/``; e.g. a 40-hex
    commit). Pin a commit in production. Default ``main``."""
    served_name: str | None = None
    """Name clients put in ``model``: 1-256 characters, no spaces or control characters. Default: the id."""
    source: ModelSource = ModelSource()
    """Where the engine reads the weights. Default: Run:ai streamer from the model bucket."""
    hf_token_secret: SecretRef | None = None
    """Secret holding a Hugging Face token (gated models; ``hf`` source and the model-sync job)."""
    architecture: InlineArchitecture | None = None
    """Required for models not in the catalog."""

    @field_validator("served_name")
    @classmethod
    def _served_name(cls, value: str | None) -> str | None:
        if value is not None and not _SERVED_NAME.match(value):
            raise PydanticCustomError(
                "served_name",
                "not a model name clients can send — 1-256 characters without spaces or control characters "
                "(e.g. 'qwen3-8b'); leave it unset to serve the model's id",
            )
        return value

    @field_validator("revision")
    @classmethod
    def _revision(cls, value: str) -> str:
        # It names the bucket prefix (an IAM resource) and reaches the model-sync Job: no wildcard, no shell.
        if not _REVISION.match(check_plain(value, "a Hugging Face revision")) or ".." in value or value.endswith("/"):
            raise PydanticCustomError(
                "revision",
                "not a Hugging Face revision — a branch, tag or commit of letters, digits, '.', '_', '-', '/' "
                "(e.g. main, v1.0, or a 40-character commit)",
            )
        return value

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _HF_ID.match(check_plain(value, "a Hugging Face model id")):
            raise PydanticCustomError("model_id", "not a Hugging Face model id — 'organization/name'")
        return value

    @model_validator(mode="after")
    def _read_from_a_path(self) -> ModelConfig:
        if self.source.type is ModelSourceType.EFS:
            refuse_unread(
                self,
                ("revision", "hf_token_secret"),
                "where something downloads from Hugging Face (hf source, model sync), and an efs source reads the "
                "directory as it is",
                "point source.path at the revision's directory",
            )
        return self

    @model_validator(mode="after")
    def _known(self) -> ModelConfig:
        if self.id not in MODELS and self.architecture is None:
            close = near_model_ids(self.id)
            hint = f"did you mean {', '.join(close)}? or " if close else ""
            raise PydanticCustomError(
                "unknown_model",
                "{id} is not in the model catalog — {hint}describe it under model.architecture",
                {"id": self.id, "hint": hint, "field": "id"},
            )
        return self

    @property
    def arch(self) -> ModelArchitecture:
        if self.architecture is None:
            return MODELS[self.id]
        a = self.architecture
        return ModelArchitecture(
            id=self.id,
            params=a.params,
            layers=a.layers,
            attention_heads=a.attention_heads,
            kv_heads=a.kv_heads,
            head_dim=a.head_dim,
            max_context=a.max_context,
            shipped_weights_gib=a.shipped_weights_gib,
            mla_latent_dim=a.mla_latent_dim,
            sliding_window=a.sliding_window,
            sliding_layers=a.sliding_layers,
            gated=a.gated,
        )

    @property
    def bucket_prefix(self) -> str:
        return self.source.prefix or f"models/{self.id}/{self.revision}/"

    @property
    def name(self) -> str:
        return self.served_name or self.id


#: The kind of a workload entry without ``kind``.
DEFAULT_KIND = "vllm"


def _kind_in_schema(schema: dict[str, Any], model: type) -> None:
    """A kind's JSON Schema requires ``kind``, except the default kind's (an entry without ``kind`` is a vllm
    workload): an editor then matches one branch of ``workloads[]``, not every branch whose required fields an
    entry happens to have."""
    kind = getattr(model, "model_fields", {}).get("kind")
    if kind is not None and kind.default not in (None, DEFAULT_KIND) and isinstance(kind.default, str):
        schema["required"] = sorted({*schema.get("required", []), "kind"})


class WorkloadBase(StrictModel):
    """What every workload kind has: a name, a pool, a model and its source, replicas, resources and monitoring.
    A kind (``vllm``, ``vllm_multinode``, …) subclasses it with ``kind`` as a literal and its engine settings; the
    registry (:mod:`inferstack.config.kinds`) makes ``workloads[]`` a union discriminated on ``kind``."""

    model_config = ConfigDict(**StrictModel.model_config, json_schema_extra=_kind_in_schema)

    kind: str
    """The workload kind: how the model is served. Default ``vllm`` (one vLLM server per replica)."""
    name: ServiceName
    """Names its objects and its Service (a DNS-1035 label: lowercase letters, digits, '-', a letter first)."""
    namespace: KubernetesName = "inference"
    """Default ``inference``."""
    service_account: KubernetesName | None = None
    """Default: the workload name. Bound (Pod Identity) to a role that can only read this model's prefix. Not
    ``default``: every pod of the namespace that names no account runs as it, so all of them would get that role."""
    pool: str
    """Node group or Karpenter pool (``compute``) the pods run on."""
    sync_model: bool = True
    """For bucket-backed sources: a Job copies each model from Hugging Face into its prefix once. Default on."""
    replicas: int = Field(default=1, ge=0)
    """Replicas when not autoscaled. Default 1."""
    autoscaling: AutoscalingConfig | None = None
    """Scale on the engine's queue depth. Default off."""
    resources: ResourcesConfig = ResourcesConfig()
    """CPU, memory and shared memory per serving pod. Default: derived from the pool's instances."""
    efa: bool = False
    """Request EFA devices (``vpc.amazonaws.com/efa``), for NCCL or KV transfer between nodes: the pod's share of its
    node's devices, as of its accelerators (a 4-GPU pod on a p5.48xlarge: 16 of 32), at least one. Default off."""
    startup_timeout_seconds: int | None = Field(default=None, ge=60)
    """How long the startup probe waits for the model to load. Default: estimated from model size and source."""
    monitoring: bool = True
    """A PodMonitor for Prometheus (the engine's ``/metrics``), and for vLLM, Ray Serve LLM and NIM its alerts and
    dashboard rows. Default on."""
    alerts: AlertTargets | None = None
    """This workload's alert targets. Default: ``observability.alerts``."""
    bench: BenchConfig | None = None
    """A benchmark Job template against this workload's endpoint (``python -m inferstack.cli bench NAME`` runs it).
    Default none."""
    probes: ProbesConfig = ProbesConfig()
    """Shape (``http``/``tcp``, ``HTTPS``) and timing of its serving containers' probes. Default inferstack's: the
    engine's health path, readiness every 10 s, liveness every 15 s, a startup budget sized from the model."""
    caches: WorkloadCachesConfig = WorkloadCachesConfig()
    """Persistent volumes for the engine's compile caches (``compile``) and the Hub download of an ``hf`` model
    (``huggingface``), so a replaced pod starts from what an earlier one built (:mod:`inferstack.config.caches`).
    Default none: both live in the pod."""
    routing: RoutingConfig | None = None
    """A request router in front of the replicas (the Gateway API inference extension's endpoint picker, with
    Envoy): each request goes to the replica with the shortest queue, the most free KV cache and the longest cached
    prefix; clients call ``<name>-router`` on port 8081 (:mod:`inferstack.config.routing`). ``vllm``,
    ``vllm_multinode`` and ``sglang`` only. Default none: the Service spreads requests."""
    pod: PodConfig = PodConfig()
    """Labels, annotations and environment variables of its serving pods, whichever kind or operator makes them
    (not of its Jobs). Keys Kubernetes, inferstack or an operator owns are refused. Default none."""
    expected_requests_per_day: int | None = Field(default=None, ge=1, le=10**10)
    """The traffic you expect, requests per day: ``plan`` then prices 1,000 requests. Default: not stated."""
    overrides: dict[OverrideTarget, dict[str, Any]] = Field(default_factory=dict)
    """Escape hatch: per rendered object, a patch deep-merged into it (mappings merge key by key, anything else
    replaces), then validated against the object's schema — an unknown field is an error. Keys are the object's
    ``Kind`` (e.g. ``Deployment``, ``Service``, ``LeaderWorkerSet``) or ``Kind/name`` when the workload renders
    several of that kind (its Jobs). Default none."""
    override_acknowledgements: dict[str, AcknowledgementReason] = Field(default_factory=dict)
    """Overrides meant despite exposing the workload or changing its pods' identity: the override's path relative
    to ``overrides`` (as its error names it, e.g. ``Service.spec.type``) → why, at least 10 characters. Without one,
    these are refused: a Service ``type`` LoadBalancer or NodePort, ``externalIPs``, a pod's ``serviceAccountName``
    or ``serviceAccount``, ``automountServiceAccountToken: true``. What Pod Security baseline refuses, and a label a
    selector uses, cannot be acknowledged; an acknowledgement of a path that no override sets, or that needs none, is
    an error. Default none."""

    @field_validator("service_account")
    @classmethod
    def _own_account(cls, value: str | None) -> str | None:
        if value == "default":
            raise PydanticCustomError(
                "default_service_account",
                "'default' is the account of every pod in the namespace that names none: its role (this model's "
                "prefix) would go to all of them — leave service_account unset (the workload's name) or name one of "
                "its own",
            )
        return value

    @model_validator(mode="after")
    def _https_probes(self) -> WorkloadBase:
        if self.probes.scheme is ProbeScheme.HTTPS:
            callers = [
                name
                for name, on in (
                    ("monitoring", self.monitoring),
                    ("autoscaling", self.autoscaling is not None),
                    ("bench", self.bench is not None),
                    ("routing", self.routing is not None),
                )
                if on
            ]
            if callers:
                raise PydanticCustomError(
                    "probes_https",
                    "HTTPS — the pods would serve TLS, but {callers} call them over HTTP (the PodMonitor, the "
                    "autoscaler's metric, the benchmark, the router's Envoy and picker): turn those off, or keep "
                    "scheme HTTP",
                    {"callers": ", ".join(callers), "field": "probes.scheme"},
                )
        return self

    def check_in(self, index: int, accelerator: AcceleratorKind) -> None:
        """Checks that need the platform (the pool's accelerator); raise ``PydanticCustomError`` with a ``field``
        relative to the workload. Default: none."""

    @property
    def referenced_secrets(self) -> frozenset[str]:
        """Names of the Secrets (in its namespace) the workload's objects read — created outside inferstack: every
        :class:`SecretRef` in its config, plus those a kind names by string (:meth:`named_secrets`)."""
        found: set[str] = set(self.named_secrets())

        def walk(node: object) -> None:
            if isinstance(node, SecretRef):
                found.add(node.name)
            elif isinstance(node, StrictModel):
                for name in type(node).model_fields:
                    walk(getattr(node, name))
            elif isinstance(node, tuple | list):
                for item in node:
                    walk(item)
            elif isinstance(node, dict):
                for item in node.values():
                    walk(item)

        walk(self)
        return frozenset(found)

    @property
    def serving_account(self) -> str:
        """The ServiceAccount its serving pods run as: ``service_account``, else its name. A kind whose operator
        names the account overrides this."""
        return self.service_account or self.name

    def named_secrets(self) -> tuple[str, ...]:
        """Secrets the kind names by a plain string field (e.g. a pull Secret). Default none."""
        return ()

    @property
    def model_entries(self) -> tuple[tuple[str, ModelConfig], ...]:
        """Every model the workload serves, with its config path relative to the workload (``model``,
        ``models[1].model``…); the first is the primary one."""
        raise NotImplementedError(f"{type(self).__name__} must list its models")


class SingleModelWorkload(WorkloadBase):
    """A workload that serves one model (``model``)."""

    model: ModelConfig
    """The model served (catalog id or inline architecture) and where its weights come from."""

    @property
    def model_entries(self) -> tuple[tuple[str, ModelConfig], ...]:
        return (("model", self.model),)


class VllmWorkloadConfig(SingleModelWorkload):
    """One model served by vLLM: a Deployment of single-node servers (one pod per replica)."""

    kind: Literal["vllm"] = "vllm"
    """``vllm`` (the default): one vLLM server per replica, all of its tensor/pipeline ranks on one node."""
    engine: VllmEngineConfig = VllmEngineConfig()
    """vLLM settings."""
    aibrix: AibrixConfig | None = None
    """Serve LoRA adapters through AIBrix (its control plane declared in ``cluster.aibrix``): the pods are
    labelled for AIBrix's router and adapter controller, vLLM loads adapters at runtime, one ModelAdapter per
    adapter. The served model name is then the workload's name (AIBrix routes by it). Default off."""

    @property
    def nodes(self) -> int:
        """Nodes one replica spans. 1 for ``vllm``."""
        return 1

    @property
    def ranks(self) -> int:
        """Tensor × pipeline ranks of one replica (GPUs, or NeuronCores)."""
        return self.engine.tensor_parallel_size * self.engine.pipeline_parallel_size

    @property
    def ranks_per_pod(self) -> int:
        """Ranks one pod holds (all of them, on one node)."""
        return self.ranks // self.nodes

    def image(self, accelerator: AcceleratorKind) -> str:
        """``engine.image``, else the catalog's vLLM image for the pool's accelerator (GPU or Neuron)."""
        if self.engine.image:
            return self.engine.image
        return ENGINE_IMAGES["vllm-neuron" if accelerator is AcceleratorKind.NEURON else "vllm-gpu"]

    def flags_version(self, accelerator: AcceleratorKind) -> str | None:
        """The vLLM release the engine flags are checked against (None: unchecked, no flag list)."""
        return flags_version_of(self.image(accelerator))

    @model_validator(mode="after")
    def _aibrix(self) -> VllmWorkloadConfig:
        if self.aibrix is None:
            return self
        if self.aibrix.autoscaler is not None and self.autoscaling is not None:
            raise PydanticCustomError(
                "aibrix_autoscaling",
                "two autoscalers would fight over replicas — use aibrix.autoscaler or autoscaling, not both",
                {"field": "autoscaling"},
            )
        if self.model.served_name is not None and self.model.served_name != self.name:
            raise PydanticCustomError(
                "aibrix_served_name",
                "AIBrix routes by the label model.aibrix.ai/name, which must equal the Service name and "
                "--served-model-name: the served name is the workload's name {name} — remove model.served_name",
                {"name": repr(self.name), "field": "model.served_name"},
            )
        return self

    def check_in(self, index: int, accelerator: AcceleratorKind) -> None:
        """``extra_args`` against the flags of the default image of the pool (an explicit ``engine.image`` is
        checked by the engine model itself), and none of the flags inferstack sets for Mistral-format models."""
        if not self.engine.extra_args:
            return
        version = None if self.engine.image else self.flags_version(accelerator)
        if version is not None:
            check_extra_args(self.engine.extra_args, version, prefix=f"workloads[{index}].engine.")
        if self.model.arch.mistral_format:
            for position, arg in enumerate(self.engine.extra_args):
                flag = arg.split("=", 1)[0]
                if flag in MISTRAL_FORMAT_FLAGS:
                    raise PydanticCustomError(
                        "managed_flag",
                        "{flag} is set by inferstack for Mistral-format checkpoints ({model}) — remove it",
                        {
                            "flag": flag,
                            "model": self.model.id,
                            "field": f"workloads[{index}].engine.extra_args[{position}]",
                        },
                    )
