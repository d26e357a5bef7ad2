"""Kind ``nim``: an NVIDIA NIM served through the NIM operator — a ``NIMCache`` (the model's engine profiles
downloaded once from NGC or Hugging Face into a PersistentVolumeClaim) and a ``NIMService`` (the NIM image serving
from that cache). The NGC API key and the nvcr.io pull secret are Secrets the platform team creates; inferstack only
names them (../shared/facts/serving-apis.md §1.2)."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.kubernetes import MODEL_CACHE_STORAGE_CLASS
from inferstack.config.base import StrictModel
from inferstack.config.types import KubernetesName
from inferstack.config.workloads import ModelSource, SingleModelWorkload

#: The key the operator reads from the NGC API key Secret (common_types.go ``NGCAPIKey``; fixed, not configurable).
NGC_API_KEY = "NGC_API_KEY"
#: The key the operator reads from a Hugging Face token Secret (``HFToken``).
HF_TOKEN_KEY = "HF_TOKEN"  # noqa: S105 - a Secret key name, not a secret
#: Longest workload name: the operator names the Deployment, Service, HPA and ServiceMonitor after the NIMService,
#: and the pods add ``-<10>-<5>``.
MAX_NAME_LENGTH = 47
_REPOSITORY = re.compile(r"^[a-z0-9.-]+(:[0-9]+)?/[a-z0-9._/-]+$")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
_PROFILE_ID = re.compile(r"^[a-f0-9]{64}$")


class NimImage(StrictModel):
    """The NIM container (``NIMService.spec.image``; also the NIMCache model puller)."""

    repository: str
    """e.g. ``nvcr.io/nim/meta/llama-3.1-70b-instruct``."""
    tag: str
    """A pinned release, e.g. ``1.8.4`` — never ``latest``."""

    @field_validator("repository")
    @classmethod
    def _repository(cls, value: str) -> str:
        if not _REPOSITORY.match(value):
            raise PydanticCustomError(
                "nim_repository", "not an image repository — registry/path without a tag, e.g. nvcr.io/nim/meta/x"
            )
        return value

    @field_validator("tag")
    @classmethod
    def _tag(cls, value: str) -> str:
        if not _TAG.match(value) or value == "latest":
            raise PydanticCustomError("nim_tag", "not a pinned tag — a release such as 1.8.4 (latest moves)")
        return value

    @property
    def reference(self) -> str:
        return f"{self.repository}:{self.tag}"


class NimEngine(StrEnum):
    """The engine a NIM profile runs (``NIMCache.spec.source.ngc.model.engine``)."""

    TENSORRT_LLM = "tensorrt_llm"
    VLLM = "vllm"


class NimPrecision(StrEnum):
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"


class NimQos(StrEnum):
    THROUGHPUT = "throughput"
    LATENCY = "latency"


class NimProfileConfig(StrictModel):
    """Which of the NIM's engine profiles the cache downloads: by selectors, or by explicit profile ids."""

    engine: NimEngine | None = None
    """Default: any engine."""
    precision: NimPrecision | None = None
    """Default: any precision."""
    tensor_parallelism: int | None = Field(default=None, ge=1, le=64)
    """GPUs of the profile. Default: the workload's ``gpus`` (a profile of other TP would not use them)."""
    qos_profile: NimQos | None = None
    """Default: any."""
    gpu_product: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9_-]*$")
    """NIM's GPU name (e.g. ``h100``, ``l40s``); a lower-case substring match (``h100`` also matches ``h100_nvl``
    profiles: nimparser.go). Default: any GPU."""
    gpu_device_ids: tuple[str, ...] = Field(default=(), max_length=8)
    """PCI device ids of the GPU (the profiles' ``gpu_device`` tag, e.g. ``2330`` for H100 SXM), with
    ``gpu_product``: narrows the match to one GPU variant. Default: none."""
    lora: bool = False
    """Select LoRA profiles. Default false — rendered, so LoRA variants are not cached beside the base profile
    (the v2 manifest parser filters them only when the selector says)."""
    ids: tuple[str, ...] = ()
    """Explicit profile ids (64 hex characters, from ``list-model-profiles``); the selectors then do not apply."""

    @field_validator("ids")
    @classmethod
    def _ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for item in value:
            if not _PROFILE_ID.match(item):
                raise PydanticCustomError(
                    "nim_profile_id", "{id} is not a NIM profile id — 64 hex characters", {"id": repr(item)}
                )
        return value

    @field_validator("gpu_device_ids")
    @classmethod
    def _device_ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for item in value:
            if not re.fullmatch(r"[0-9a-f]{4}", item):
                raise PydanticCustomError(
                    "nim_device_id", "{id} is not a PCI device id — 4 hex digits", {"id": repr(item)}
                )
        return value

    @model_validator(mode="after")
    def _exclusive(self) -> NimProfileConfig:
        selectors = [
            f for f in ("engine", "precision", "tensor_parallelism", "qos_profile", "gpu_product") if getattr(self, f)
        ]
        if self.gpu_device_ids and self.gpu_product is None:
            raise PydanticCustomError(
                "nim_device_ids", "gpu_device_ids narrow gpu_product — set gpu_product too", {"field": "gpu_product"}
            )
        if self.ids and selectors:
            raise PydanticCustomError(
                "nim_profile_ids",
                "ids select the profiles themselves; the operator ignores {fields} next to them — remove one",
                {"fields": ", ".join(selectors), "field": selectors[0]},
            )
        return self


class NimCacheSource(StrEnum):
    NGC = "ngc"
    """From NGC with the NGC API key. Default."""
    HF = "hf"
    """From Hugging Face (a multi-LLM NIM image pulls ``model.id``) with the model's ``hf_token_secret``."""


class AccessMode(StrEnum):
    READ_WRITE_ONCE = "ReadWriteOnce"
    READ_WRITE_MANY = "ReadWriteMany"


class NimCacheConfig(StrictModel):
    """The NIMCache: where the profiles are downloaded, and its volume."""

    source: NimCacheSource = NimCacheSource.NGC
    """Default ``ngc``."""
    profile: NimProfileConfig = NimProfileConfig()
    """Profiles to download. Default: those of ``gpus`` tensor parallelism."""
    size_gib: int | None = Field(default=None, ge=32, le=65536)
    """PVC size, GiB (≥ 32: the default class provisions 16,000 IOPS, at most 500 per GiB). Default: 1.5 × the
    model's 16-bit weights + 20 (room for one profile's engine and tokenizer; not confirmed against NIM's
    manifests (?)), at least 32."""
    storage_class: KubernetesName = MODEL_CACHE_STORAGE_CLASS
    """StorageClass of the cache PVC. Default ``inferstack-model-cache`` (EBS gp3 at 16,000 IOPS / 1,000 MiB/s,
    encrypted, retained; created with the NIM operator), bound in the zone where the cache Job runs — a node of
    the workload's pool."""
    access_mode: AccessMode = AccessMode.READ_WRITE_ONCE
    """Default ``ReadWriteOnce`` (EBS): every replica then runs on the node that mounts it — more than one replica
    needs a ``ReadWriteMany`` class (EFS, FSx)."""
    cpu: float = Field(default=4, gt=0, le=64)
    """vCPUs of the caching Job (requests = limits). Default 4."""
    memory_gib: float = Field(default=16, gt=0, le=512)
    """Memory of the caching Job, GiB. Default 16."""
    hf_endpoint: str = Field(default="https://huggingface.co", pattern=r"^https://[A-Za-z0-9.-]+(:[0-9]+)?(/.*)?$")
    """``hf`` source: the Hub endpoint. Default ``https://huggingface.co``."""


class NgcCredentials(StrictModel):
    """Secrets in the workload's namespace, created outside inferstack (never in the config)."""

    api_key_secret: KubernetesName | None = None
    """Opaque Secret with the NGC API key under key ``NGC_API_KEY`` (``kubectl create secret generic <name>
    --from-literal=NGC_API_KEY=…``). Required for NGC images and ``ngc`` caches."""
    pull_secret: KubernetesName | None = None
    """``kubernetes.io/dockerconfigjson`` Secret for ``nvcr.io`` (user ``$oauthtoken``, password the API key).
    Required for ``nvcr.io`` images."""


class NimWorkloadConfig(SingleModelWorkload):
    """One NIM: a NIMCache and a NIMService of ``replicas`` pods with ``gpus`` GPUs each."""

    kind: Literal["nim"] = "nim"  # type: ignore[assignment]
    """``nim``: the NIM operator's NIMCache + NIMService."""
    image: NimImage
    """The NIM image (pinned tag)."""
    gpus: int = Field(default=1, ge=1, le=16)
    """GPUs per pod (one node). Default 1."""
    ngc: NgcCredentials = NgcCredentials()
    """The NGC API key and pull Secrets (by name)."""
    cache: NimCacheConfig = NimCacheConfig()
    """The model cache. Default: NGC, the profiles of ``gpus`` TP, on ``inferstack-gp3``."""

    @field_validator("name")
    @classmethod
    def _name_length(cls, value: str) -> str:
        if len(value) > MAX_NAME_LENGTH:
            raise PydanticCustomError(
                "nim_name",
                "{length} characters — a nim workload name has at most {max}: the operator names its Deployment "
                "after it and the pods add 17 characters, within 63",
                {"length": len(value), "max": MAX_NAME_LENGTH},
            )
        return value

    @model_validator(mode="after")
    def _nim(self) -> NimWorkloadConfig:
        if self.model.source != ModelSource():
            raise PydanticCustomError(
                "nim_source",
                "a NIM downloads its model into the NIMCache (cache.source: ngc or hf) — remove model.source",
                {"field": "model.source"},
            )
        token = self.model.hf_token_secret
        if token is not None and token.key != HF_TOKEN_KEY:
            raise PydanticCustomError(
                "nim_hf_key",
                "{key} — the NIM operator reads the token from key HF_TOKEN of the Secret: set key: HF_TOKEN and "
                "store the token under that key",
                {"key": repr(token.key), "field": "model.hf_token_secret.key"},
            )
        if self.service_account is not None:
            raise PydanticCustomError(
                "nim_service_account",
                "the NIM operator creates the pods' ServiceAccount itself, named after the workload — remove "
                "service_account",
                {"field": "service_account"},
            )
        if self.replicas < 1:
            raise PydanticCustomError(
                "nim_replicas",
                "a NIMService runs at least 1 replica (NIM operator 3.0 CRD: minimum 1) — remove the workload to "
                "stop it",
                {"field": "replicas"},
            )
        if self.autoscaling is not None:
            raise PydanticCustomError(
                "nim_autoscaling",
                "not available for nim workloads: the operator's HPA scales on custom metrics, which need a metrics "
                "adapter inferstack does not install — set replicas",
                {"field": "autoscaling"},
            )
        return self

    def named_secrets(self) -> tuple[str, ...]:
        return tuple(n for n in (self.ngc.api_key_secret, self.ngc.pull_secret) if n)

    @property
    def model_entries(self) -> tuple:
        """None: the NIMCache holds the model, not the model bucket (no volume, no sync Job)."""
        return ()

    @property
    def profile_tensor_parallelism(self) -> int:
        """The TP of the profiles the cache selects: ``cache.profile.tensor_parallelism``, else ``gpus``."""
        return self.cache.profile.tensor_parallelism or self.gpus

    @property
    def cache_size_gib(self) -> int:
        """``cache.size_gib``, else 1.5 × the 16-bit weights + 20 GiB."""
        if self.cache.size_gib is not None:
            return self.cache.size_gib
        return max(32, int(self.model.arch.params * 2 / 2**30 * 1.5) + 20)

    def check_in(self, index: int, accelerator: AcceleratorKind) -> None:
        if accelerator is not AcceleratorKind.NVIDIA:
            raise PydanticCustomError(
                "nim_accelerator",
                "NIM runs on NVIDIA GPUs only — put the workload on a GPU pool",
                {"field": f"workloads[{index}].pool"},
            )
