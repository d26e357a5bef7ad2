"""A workload's ``caches`` as PersistentVolumeClaims, and what its serving pod does with them: the compile cache
mounted at the directory its kind declares (:attr:`~inferstack.config.kinds.WorkloadKind.compile_cache`), the Hub
cache handed to the model source as ``HF_HOME``'s volume, and pods replaced by stopping the old one first when a
cache is ReadWriteOnce.

A claim inferstack removes from the manifest (the cache taken out of the config) is deleted; its volume is not
when the class retains it (``inferstack-model-cache`` does).
"""

from __future__ import annotations

from dataclasses import dataclass

from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.caches import CacheAccessMode, CacheName
from inferstack.config.kinds import kind_of
from inferstack.config.workloads import WorkloadBase
from inferstack.constructs.pod.mounts import Mount
from inferstack.plan.caches import compile_cache, hub_cache

#: The claim of each cache is ``<workload>-<suffix>``.
CLAIM_SUFFIX = {CacheName.COMPILE: "compile-cache", CacheName.HUGGINGFACE: "hf-cache"}


@dataclass(frozen=True, kw_only=True)
class CacheVolumes:
    """What a workload's serving pod takes from its caches."""

    compile_mount: Mount | None = None
    """The compile cache's claim, mounted at the kind's compile-cache directory. None: no compile cache."""
    compile_claim: str | None = None
    """The compile cache's claim (for a kind whose operator mounts it, e.g. Dynamo's ``compilationCache``). None:
    no compile cache."""
    hub_claim: str | None = None
    """The claim the ``hf`` model source downloads into. None: an emptyDir."""
    recreate: bool = False
    """A cache is ReadWriteOnce: replace pods by stopping the old one first."""


def claim_name(workload: str, cache: CacheName) -> str:
    """The PersistentVolumeClaim of ``workload``'s ``cache``."""
    return f"{workload}-{CLAIM_SUFFIX[cache]}"


def cache_volumes(scope: Construct, workload: WorkloadBase, accelerator: AcceleratorKind) -> CacheVolumes:
    """The claims of the caches ``workload``'s kind puts to use on ``accelerator`` (:mod:`inferstack.plan.caches`),
    in ``scope``, and how its serving pod uses them. A cache it has no place for renders nothing (the rules
    CACHE-KIND and CACHE-HUB-SOURCE refuse it)."""
    kind = kind_of(workload)
    compile_mount, compile_claim, hub_claim, recreate = None, None, None, False
    used = {CacheName.COMPILE: compile_cache(workload, accelerator), CacheName.HUGGINGFACE: hub_cache(workload)}
    for name, volume in used.items():
        if volume is None:
            continue
        claim = claim_name(workload.name, name)
        k8s.KubePersistentVolumeClaim(
            scope,
            CLAIM_SUFFIX[name],
            metadata=k8s.ObjectMeta(
                name=claim,
                namespace=workload.namespace,
                labels={
                    "app.kubernetes.io/name": workload.name,
                    "app.kubernetes.io/component": CLAIM_SUFFIX[name],
                    "app.kubernetes.io/part-of": "inferstack",
                },
            ),
            spec=k8s.PersistentVolumeClaimSpec(
                access_modes=[volume.access_mode.value],
                storage_class_name=volume.storage_class,
                resources=k8s.VolumeResourceRequirements(
                    requests={"storage": k8s.Quantity.from_string(f"{volume.size_gib}Gi")}
                ),
            ),
        )
        recreate = recreate or volume.access_mode is CacheAccessMode.READ_WRITE_ONCE
        if name is CacheName.COMPILE:
            assert kind.compile_cache is not None
            source = k8s.PersistentVolumeClaimVolumeSource(claim_name=claim)
            compile_mount = Mount(
                path=kind.compile_cache, volume=k8s.Volume(name="compile-cache", persistent_volume_claim=source)
            )
            compile_claim = claim
        else:
            hub_claim = claim
    return CacheVolumes(
        compile_mount=compile_mount, compile_claim=compile_claim, hub_claim=hub_claim, recreate=recreate
    )
