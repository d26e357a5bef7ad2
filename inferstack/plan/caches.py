"""Which of a workload's ``caches`` its kind puts to use: the compile cache where the kind declares a compile-cache
directory (and not on Neuron: the compiled model persists in the model bucket), the Hub cache where its model
source reads ``HF_HOME`` and the primary model downloads from the Hub. The charts render these and the rules judge
the rest (CACHE-KIND, CACHE-HUB-SOURCE)."""

from __future__ import annotations

from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.caches import CacheVolumeConfig
from inferstack.config.kinds import kind_of
from inferstack.config.workloads import ModelSourceType, WorkloadBase


def compile_cache(workload: WorkloadBase, accelerator: AcceleratorKind) -> CacheVolumeConfig | None:
    """``caches.compile`` when ``workload``'s kind mounts one on ``accelerator``, else None."""
    if kind_of(workload).compile_cache is None or accelerator is AcceleratorKind.NEURON:
        return None
    return workload.caches.compile


def hub_cache(workload: WorkloadBase) -> CacheVolumeConfig | None:
    """``caches.huggingface`` when ``workload``'s kind reads an ``hf`` model from ``HF_HOME`` and its primary model
    is one, else None."""
    entries = workload.model_entries
    if not kind_of(workload).hub_cache or not entries or entries[0][1].source.type is not ModelSourceType.HF:
        return None
    return workload.caches.huggingface
