"""Rules of a workload's persistent ``caches`` (:mod:`inferstack.config.caches`):

* CACHE-KIND — a cache the workload's kind has no place for (no compile-cache directory, no ``HF_HOME`` download),
  or a compile cache on Neuron, whose compiled model persists in the model bucket already;
* CACHE-HUB-SOURCE — a Hub cache while the model is not downloaded from the Hub (nothing would fill it), or beside
  the source's ``cache_size_gib`` (the emptyDir it replaces);
* CACHE-HUB-SIZE — a Hub cache smaller than the checkpoint it downloads (the download fails when it is full);
* CACHE-SHARED — a ReadWriteOnce cache of a workload that runs more than one pod, or whose operator rolls its pods
  out (a new pod before the old one stops): pods on other nodes cannot attach it and stay ContainerCreating
  (``Multi-Attach error``);
* CACHE-EFS — a cache on ``inferstack-efs`` without ``storage.efs`` (no file system, no class: the claim stays
  Pending);
* CACHE-ZONE (warning) — a ReadWriteOnce cache of a workload whose pool spans zones: the volume binds in the zone of
  the first pod, and every later pod can only run there (``inferstack-efs``, regional, is ReadWriteMany only).
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.kubernetes import EFS_STORAGE_CLASS
from inferstack.config.caches import CacheAccessMode, CacheName, CacheVolumeConfig
from inferstack.config.kinds import KINDS, kind_of
from inferstack.config.model import InferstackConfig
from inferstack.config.workloads import ModelSourceType, WorkloadBase
from inferstack.plan.caches import compile_cache, hub_cache
from inferstack.rules.base import Finding, Rule, Severity
from inferstack.rules.storage import CACHE_HEADROOM

KIND = "CACHE-KIND"
HUB_SOURCE = "CACHE-HUB-SOURCE"
HUB_SIZE = "CACHE-HUB-SIZE"
SHARED = "CACHE-SHARED"
ZONE = "CACHE-ZONE"
EFS = "CACHE-EFS"


def _cached(config: InferstackConfig) -> Iterator[tuple[str, WorkloadBase]]:
    """``(path, workload)`` of every workload with a cache."""
    for index, workload in enumerate(config.workloads):
        if not workload.caches.empty:
            yield f"workloads[{index}]", workload


def _used(config: InferstackConfig, workload: WorkloadBase) -> list[tuple[CacheName, CacheVolumeConfig]]:
    """The caches ``workload``'s kind puts to use (:mod:`inferstack.plan.caches`): the rules below judge only those
    (CACHE-KIND and CACHE-HUB-SOURCE refuse the others, and their volumes are never rendered)."""
    accelerator = config.pool(workload.pool).accelerator
    used = ((CacheName.COMPILE, compile_cache(workload, accelerator)), (CacheName.HUGGINGFACE, hub_cache(workload)))
    return [(name, volume) for name, volume in used if volume is not None]


def _kinds_with(cache: CacheName) -> str:
    """The registered kinds that mount ``cache``, for a fix text."""
    names = [k.name for k in KINDS.values() if (k.compile_cache if cache is CacheName.COMPILE else k.hub_cache)]
    return ", ".join(names) or "none"


def check_kind(config: InferstackConfig) -> Iterator[Finding]:
    """CACHE-KIND: each cache is one the workload's kind mounts on its pool's accelerator."""
    for path, workload in _cached(config):
        kind = kind_of(workload)
        if workload.caches.compile is not None:
            if kind.compile_cache is None:
                yield Finding(
                    rule=KIND,
                    path=f"{path}.caches.compile",
                    message=f"kind {workload.kind} has no compile cache inferstack can mount",
                    fix=f"remove caches.compile (kinds with one: {_kinds_with(CacheName.COMPILE)})",
                )
            elif config.pool(workload.pool).accelerator is AcceleratorKind.NEURON:
                yield Finding(
                    rule=KIND,
                    path=f"{path}.caches.compile",
                    message=f"pool {workload.pool!r} is Neuron: the compile Job stores the compiled model beside the "
                    "weights in the model bucket, and every pod loads it from there — a compile cache would stay "
                    "empty",
                    fix="remove caches.compile",
                )
        if workload.caches.huggingface is not None and not kind.hub_cache:
            yield Finding(
                rule=KIND,
                path=f"{path}.caches.huggingface",
                message=f"kind {workload.kind} does not download its model into a Hugging Face cache inferstack "
                "can mount",
                fix=f"remove caches.huggingface (kinds with one: {_kinds_with(CacheName.HUGGINGFACE)})",
            )


def check_hub_source(config: InferstackConfig) -> Iterator[Finding]:
    """CACHE-HUB-SOURCE: a Hub cache caches the primary model's Hub download, and replaces the emptyDir the source's
    ``cache_size_gib`` sizes."""
    for path, workload in _cached(config):
        if workload.caches.huggingface is None or not kind_of(workload).hub_cache:
            continue
        relative, model = workload.model_entries[0]
        if model.source.type is ModelSourceType.HF and "cache_size_gib" in model.source.model_fields_set:
            yield Finding(
                rule=HUB_SOURCE,
                path=f"{path}.{relative}.source.cache_size_gib",
                message="sizes the emptyDir the download goes to without a Hub cache, and caches.huggingface "
                "replaces it",
                fix="remove cache_size_gib (caches.huggingface.size_gib sizes the cache)",
            )
        if model.source.type is not ModelSourceType.HF:
            yield Finding(
                rule=HUB_SOURCE,
                path=f"{path}.caches.huggingface",
                message=f"{path}.{relative}.source.type is {model.source.type.value}: the engine reads the model "
                "from there, and nothing downloads into the Hub cache",
                fix="remove caches.huggingface, or download from the Hub (source.type: hf)",
            )


def check_hub_size(config: InferstackConfig) -> Iterator[Finding]:
    """CACHE-HUB-SIZE: a Hub cache holds the checkpoint (+5 %); not on EFS, which grows as needed."""
    for path, workload in _cached(config):
        cache = hub_cache(workload)
        if cache is None or cache.storage_class == EFS_STORAGE_CLASS:
            continue
        _, model = workload.model_entries[0]
        weights = model.arch.weights_gib
        needed = weights * (1 + CACHE_HEADROOM)
        if cache.size_gib < needed:
            yield Finding(
                rule=HUB_SIZE,
                path=f"{path}.caches.huggingface.size_gib",
                message=f"{cache.size_gib} GiB cannot hold the {weights:.0f} GiB checkpoint of {model.id}: the "
                "download fails when the volume is full",
                fix=f"set size_gib ≥ {int(needed) + 1} (the cache keeps each revision it downloaded: twice that "
                "leaves room for a model or revision change)",
            )


def _pods_at_once(workload: WorkloadBase) -> str | None:
    """Why ``workload`` may run more than one serving pod holding the cache, or None."""
    if kind_of(workload).operator_service_ports:
        return (
            f"the {workload.kind} operator makes its pods and rolls them out itself (inferstack cannot make it stop "
            "the old pod first)"
        )
    scaling = workload.autoscaling
    if scaling is not None and scaling.max_replicas > 1:
        return f"autoscaling scales it to {scaling.max_replicas} replicas"
    if workload.replicas > 1:
        return f"it runs {workload.replicas} replicas"
    aibrix = getattr(workload, "aibrix", None)
    if aibrix is not None and getattr(aibrix, "autoscaler", None) is not None:
        return "AIBrix's PodAutoscaler scales its replicas"
    return None


def _once(config: InferstackConfig, workload: WorkloadBase) -> Iterator[tuple[CacheName, CacheVolumeConfig]]:
    """The ReadWriteOnce caches ``workload`` puts to use."""
    for name, volume in _used(config, workload):
        if volume.access_mode is CacheAccessMode.READ_WRITE_ONCE:
            yield name, volume


def check_shared(config: InferstackConfig) -> Iterator[Finding]:
    """CACHE-SHARED: a ReadWriteOnce cache serves one pod of a Deployment inferstack makes."""
    for path, workload in _cached(config):
        why = _pods_at_once(workload)
        if why is None:
            continue
        shared = f"storage_class: {EFS_STORAGE_CLASS} (with storage.efs) and access_mode: ReadWriteMany"
        operator = bool(kind_of(workload).operator_service_ports)
        for name, volume in _once(config, workload):
            yield Finding(
                rule=SHARED,
                path=f"{path}.caches.{name.value}.access_mode",
                message=f"ReadWriteOnce ({volume.storage_class}): one node attaches the volume, but {why} — pods on "
                "other nodes stay ContainerCreating (Multi-Attach error)",
                fix=f"give the cache {shared}"
                if operator
                else f"run one replica (replicas: 1, no autoscaling), or give the cache {shared}",
            )


def check_efs(config: InferstackConfig) -> Iterator[Finding]:
    """CACHE-EFS: a cache on ``inferstack-efs`` has the file system and class ``storage.efs`` creates."""
    if config.storage.efs is not None:
        return
    for path, workload in _cached(config):
        for name, volume in _used(config, workload):
            if volume.storage_class == EFS_STORAGE_CLASS:
                yield Finding(
                    rule=EFS,
                    path=f"{path}.caches.{name.value}.storage_class",
                    message=f"{EFS_STORAGE_CLASS} is the class of the EFS file system storage.efs creates, and "
                    "storage.efs is not set: the claim would stay Pending",
                    fix="add storage.efs: {} (inferstack creates the file system, its CSI driver and the class), or "
                    "name a class the cluster has",
                )


def check_zone(config: InferstackConfig) -> Iterator[Finding]:
    """CACHE-ZONE (warning): a ReadWriteOnce cache's zone is chosen (its pool is pinned to one), not incidental."""
    if config.network.az_count < 2:
        return
    for path, workload in _cached(config):
        pool = config.pool(workload.pool)
        if pool.availability_zone is not None:
            continue
        for name, _ in _once(config, workload):  # inferstack-efs is ReadWriteMany (and regional) only
            yield Finding(
                rule=ZONE,
                path=f"{path}.caches.{name.value}",
                message=f"pool {pool.name!r} spans {config.network.az_count} zones and a ReadWriteOnce volume binds "
                "in one: the first pod's zone, chosen by where capacity happened to be — from then on the pod runs "
                "only there, and stays Pending when that zone has no capacity for the pool's instances",
                fix="pin the pool to one zone (availability_zone), or use a ReadWriteMany (regional) storage_class",
                severity=Severity.WARNING,
            )


RULES = (
    Rule(id=KIND, title="A cache is one its kind puts to use", check=check_kind),
    Rule(id=HUB_SOURCE, title="A Hub cache caches a Hub download", check=check_hub_source),
    Rule(id=HUB_SIZE, title="A Hub cache holds the checkpoint", check=check_hub_size),
    Rule(id=SHARED, title="A ReadWriteOnce cache serves one pod", check=check_shared),
    Rule(id=EFS, title="An EFS cache has its file system", check=check_efs),
    Rule(id=ZONE, title="A ReadWriteOnce cache's zone is chosen", check=check_zone),
)
