"""``caches`` of a workload: persistent volumes for what its engine rebuilds at every start otherwise — the
kernels and graphs it compiles (``compile``) and the Hugging Face Hub download of an ``hf`` model
(``huggingface``). Without them both live in emptyDirs, lost whenever a pod is replaced.

Each cache is one PersistentVolumeClaim of the workload (``<name>-compile-cache``, ``<name>-hf-cache``), bound where
its first pod lands. The default StorageClass, ``inferstack-model-cache``, is EBS gp3: ReadWriteOnce (one node
attaches it; pods are then replaced by stopping the old one first) and zonal (the pods follow the volume's zone). A
ReadWriteMany class of your own (the EFS CSI driver's, for example) lets several replicas share one cache.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from inferstack.catalog.kubernetes import MODEL_CACHE_STORAGE_CLASS
from inferstack.config.base import StrictModel
from inferstack.config.types import KubernetesName

#: Smallest volume of the ``inferstack-model-cache`` class: it provisions 16,000 IOPS and EBS allows at most 500
#: IOPS per GiB of gp3 (AWS "Amazon EBS General Purpose SSD volumes"), GiB.
MODEL_CACHE_MIN_GIB = 32


class CacheAccessMode(StrEnum):
    READ_WRITE_ONCE = "ReadWriteOnce"
    """One node mounts the volume (EBS). Default."""
    READ_WRITE_MANY = "ReadWriteMany"
    """Pods on many nodes mount it (EFS, FSx for Lustre, NFS classes)."""


class CacheName(StrEnum):
    COMPILE = "compile"
    HUGGINGFACE = "huggingface"


class CacheVolumeConfig(StrictModel):
    """One persistent cache volume."""

    size_gib: int = Field(ge=1, le=65536)
    """Capacity requested, GiB (≥ 32 on ``inferstack-model-cache``). Required."""
    storage_class: KubernetesName = MODEL_CACHE_STORAGE_CLASS
    """StorageClass of the claim. Default ``inferstack-model-cache`` (EBS gp3, 16,000 IOPS / 1,000 MiB/s, encrypted,
    retained, bound in the zone of the first pod; inferstack creates it). Another class must exist on the cluster."""
    access_mode: CacheAccessMode = CacheAccessMode.READ_WRITE_ONCE
    """``ReadWriteOnce`` (one replica: pods are replaced by stopping the old one first, a new pod cannot attach the
    volume while the old one holds it) or ``ReadWriteMany`` (replicas share the cache; needs a class that offers it).
    Default ``ReadWriteOnce``."""

    @model_validator(mode="after")
    def _model_cache_class(self) -> CacheVolumeConfig:
        if self.storage_class != MODEL_CACHE_STORAGE_CLASS:
            return self
        if self.size_gib < MODEL_CACHE_MIN_GIB:
            raise PydanticCustomError(
                "cache_size",
                "{size} GiB — {cls} provisions 16,000 IOPS and EBS allows 500 IOPS per GiB: at least {min} GiB",
                {
                    "size": self.size_gib,
                    "cls": MODEL_CACHE_STORAGE_CLASS,
                    "min": MODEL_CACHE_MIN_GIB,
                    "field": "size_gib",
                },
            )
        if self.access_mode is CacheAccessMode.READ_WRITE_MANY:
            raise PydanticCustomError(
                "cache_access",
                "{cls} is EBS, which one node attaches at a time (ReadWriteOnce) — use ReadWriteOnce, or a "
                "ReadWriteMany class of your own (e.g. the EFS CSI driver's) in storage_class",
                {"cls": MODEL_CACHE_STORAGE_CLASS, "field": "access_mode"},
            )
        return self


class WorkloadCachesConfig(StrictModel):
    """The persistent caches of a workload's serving pods. Default none: the engine's caches live in the pod."""

    compile: CacheVolumeConfig | None = None
    """Kernels and graphs the engine compiles at start (vLLM: torch.compile, Inductor, Triton, CUDA, FlashInfer —
    everything under its cache root; SGLang: ``SGLANG_CACHE_DIR``, where 0.5.19 points Triton, Inductor, DeepGEMM,
    FlashInfer and CUDA's JIT caches; Dynamo: its workers' ``VLLM_CACHE_ROOT``, mounted by the operator through
    ``compilationCache``). A restart then loads what an earlier start compiled. ``vllm`` on GPUs, ``sglang`` and
    ``dynamo`` (ReadWriteMany: its operator rolls the workers out) only: on Neuron the compiled model persists in
    the model bucket already (its compile Job). Default none."""
    huggingface: CacheVolumeConfig | None = None
    """The Hugging Face Hub cache (``HF_HOME``) an ``hf`` model source downloads into, instead of an emptyDir: a
    restart finds the weights there (the engine still asks the Hub for the revision, then reads its files from the
    cache). At least the checkpoint's size. ``vllm``, ``sglang`` and ``tgi`` with ``model.source.type: hf``.
    Default none."""

    def items(self) -> tuple[tuple[CacheName, CacheVolumeConfig], ...]:
        """The caches set, by name, in a fixed order (compile, huggingface)."""
        named = ((CacheName.COMPILE, self.compile), (CacheName.HUGGINGFACE, self.huggingface))
        return tuple((name, volume) for name, volume in named if volume is not None)

    @property
    def empty(self) -> bool:
        """No cache set."""
        return not self.items()
