"""``caches`` of a workload: persistent volumes for what its engine rebuilds at every start otherwise — the
kernels and graphs it compiles (``compile``) and the Hugging Face Hub download of an ``hf`` model
(``huggingface``). Without them both live in emptyDirs, lost whenever a pod is replaced.

Each cache is one PersistentVolumeClaim of the workload (``<name>-compile-cache``, ``<name>-hf-cache``), bound where
its first pod lands. The default StorageClasses are EBS: ``inferstack-gp3`` for a compile cache (gp3's baseline
3,000 IOPS: kernels are small files read once), ``inferstack-model-cache`` for a Hub cache (16,000 IOPS and 1,000
MiB/s for the weights read at every start). EBS is ReadWriteOnce (one node attaches it; pods are then replaced by
stopping the old one first) and zonal (the pods follow the volume's zone). ``inferstack-efs`` (``storage.efs``) is
ReadWriteMany and regional: several replicas share one cache.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from inferstack.catalog.kubernetes import EFS_STORAGE_CLASS, GP3_STORAGE_CLASS, MODEL_CACHE_STORAGE_CLASS
from inferstack.config.base import StrictModel
from inferstack.config.types import KubernetesName

#: Smallest volume of the ``inferstack-model-cache`` class: it provisions 16,000 IOPS and EBS allows at most 500
#: IOPS per GiB of gp3 (AWS "Amazon EBS General Purpose SSD volumes"), GiB.
MODEL_CACHE_MIN_GIB = 32
#: inferstack's EBS classes: one node attaches a volume of them (ReadWriteOnce).
EBS_CLASSES = (MODEL_CACHE_STORAGE_CLASS, GP3_STORAGE_CLASS)


class CacheAccessMode(StrEnum):
    """How many nodes mount a cache volume at once."""

    READ_WRITE_ONCE = "ReadWriteOnce"
    """One node mounts the volume (EBS). Default on EBS classes."""
    READ_WRITE_MANY = "ReadWriteMany"
    """Pods on many nodes mount it (EFS, FSx for Lustre, NFS classes)."""


class CacheName(StrEnum):
    """The caches a workload may keep (``caches.<name>``)."""

    COMPILE = "compile"
    HUGGINGFACE = "huggingface"


class CacheVolumeConfig(StrictModel):
    """One persistent cache volume."""

    size_gib: int = Field(ge=1, le=65536)
    """Capacity requested, GiB (≥ 32 on ``inferstack-model-cache``; EFS grows as needed and ignores it). Required."""
    storage_class: KubernetesName = MODEL_CACHE_STORAGE_CLASS
    """StorageClass of the claim: ``inferstack-model-cache``, ``inferstack-gp3`` (EBS, retained, bound in the zone of
    the first pod), ``inferstack-efs`` (with ``storage.efs``) or a class the cluster has. Default: the cache's
    (see :class:`WorkloadCachesConfig`)."""
    access_mode: CacheAccessMode = CacheAccessMode.READ_WRITE_ONCE
    """``ReadWriteOnce`` (one replica: pods are replaced by stopping the old one first, a new pod cannot attach the
    volume while the old one holds it) or ``ReadWriteMany`` (replicas share the cache; ``inferstack-efs`` or a class
    of yours that offers it). Default ``ReadWriteOnce``."""

    @model_validator(mode="after")
    def _class_limits(self) -> CacheVolumeConfig:
        if self.storage_class == MODEL_CACHE_STORAGE_CLASS and self.size_gib < MODEL_CACHE_MIN_GIB:
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
        if self.storage_class in EBS_CLASSES and self.access_mode is CacheAccessMode.READ_WRITE_MANY:
            raise PydanticCustomError(
                "cache_access",
                "{cls} is EBS, which one node attaches at a time (ReadWriteOnce) — use ReadWriteOnce, or "
                "storage_class: {efs} (with storage.efs) for a cache replicas share",
                {"cls": self.storage_class, "efs": EFS_STORAGE_CLASS, "field": "access_mode"},
            )
        if self.storage_class == EFS_STORAGE_CLASS and self.access_mode is CacheAccessMode.READ_WRITE_ONCE:
            raise PydanticCustomError(
                "cache_access",
                "{efs} is EFS, which every node mounts (ReadWriteMany): set access_mode: ReadWriteMany",
                {"efs": EFS_STORAGE_CLASS, "field": "access_mode"},
            )
        return self


class CompileCacheConfig(CacheVolumeConfig):
    """The compile cache's volume."""

    storage_class: KubernetesName = GP3_STORAGE_CLASS
    """StorageClass of the claim. Default ``inferstack-gp3`` (EBS gp3 at its baseline 3,000 IOPS / 125 MiB/s,
    encrypted, retained, bound in the zone of the first pod; inferstack creates it). ``inferstack-model-cache``,
    ``inferstack-efs`` (with ``storage.efs``) or a class the cluster has."""


class HubCacheConfig(CacheVolumeConfig):
    """The Hugging Face Hub cache's volume."""

    storage_class: KubernetesName = MODEL_CACHE_STORAGE_CLASS
    """StorageClass of the claim. Default ``inferstack-model-cache`` (EBS gp3 at 16,000 IOPS / 1,000 MiB/s for the
    weights read at every start, encrypted, retained, bound in the zone of the first pod; inferstack creates it).
    ``inferstack-gp3``, ``inferstack-efs`` (with ``storage.efs``) or a class the cluster has."""


class WorkloadCachesConfig(StrictModel):
    """The persistent caches of a workload's serving pods. Default none: the engine's caches live in the pod."""

    compile: CompileCacheConfig | None = None
    """Kernels and graphs the engine compiles at start (vLLM: torch.compile, Inductor, Triton, CUDA, FlashInfer —
    everything under its cache root; SGLang: ``SGLANG_CACHE_DIR``, where 0.5.19 points Triton, Inductor, DeepGEMM,
    FlashInfer and CUDA's JIT caches; Dynamo: its workers' ``VLLM_CACHE_ROOT``, mounted by the operator through
    ``compilationCache``). A restart then loads what an earlier start compiled. ``vllm`` on GPUs, ``sglang`` and
    ``dynamo`` (ReadWriteMany: its operator rolls the workers out) only: on Neuron the compiled model persists in
    the model bucket already (its compile Job). Default none."""
    huggingface: HubCacheConfig | None = None
    """The Hugging Face Hub cache (``HF_HOME``) an ``hf`` model source downloads into, instead of an emptyDir: a
    restart finds the weights there (the engine still asks the Hub for the revision, then reads its files from the
    cache). At least the checkpoint's size; the cache keeps every revision it downloaded, so a model or revision
    change needs room for both (EBS claims grow in place: raise ``size_gib``). ``vllm``, ``sglang`` and ``tgi``
    with ``model.source.type: hf``. Default none."""

    def items(self) -> tuple[tuple[CacheName, CacheVolumeConfig], ...]:
        """The caches set, by name, in a fixed order (compile, huggingface)."""
        named = ((CacheName.COMPILE, self.compile), (CacheName.HUGGINGFACE, self.huggingface))
        return tuple((name, volume) for name, volume in named if volume is not None)

    @property
    def empty(self) -> bool:
        """No cache set."""
        return not self.items()
