"""NimChart: the ``nim`` kind — a NIMCache and a NIMService (:class:`~inferstack.constructs.nim.NimServer`) from the
plan: the caching Job on a node of the workload's pool (so the cache volume binds in a zone the pool has nodes in),
the server's GPUs, placement and startup budget, the NGC and pull Secrets by name."""

from __future__ import annotations

from typing import Any

from inferstack.charts.workload import StorageRefs, WorkloadChart, pod_placement
from inferstack.config.nim import NimCacheSource, NimWorkloadConfig
from inferstack.constructs.nim import NimCacheProps, NimServer, NimServerProps
from inferstack.constructs.validation import PropError
from inferstack.plan import ResolvedWorkload


def profile_selector(workload: NimWorkloadConfig) -> dict[str, Any]:
    """``NIMCache.spec.source.ngc.model``: explicit ``profiles``, or the selectors (``tensorParallelism`` a string,
    defaulting to the pod's GPUs)."""
    profile = workload.cache.profile
    if profile.ids:
        return {"profiles": list(profile.ids)}
    selector: dict[str, Any] = {"tensorParallelism": str(workload.profile_tensor_parallelism)}
    if profile.engine is not None:
        selector["engine"] = profile.engine.value
    if profile.precision is not None:
        selector["precision"] = profile.precision.value
    if profile.qos_profile is not None:
        selector["qosProfile"] = profile.qos_profile.value
    if profile.gpu_product is not None:
        gpu: dict[str, Any] = {"product": profile.gpu_product}
        if profile.gpu_device_ids:
            gpu["ids"] = list(profile.gpu_device_ids)
        selector["gpus"] = [gpu]
    selector["lora"] = profile.lora
    return selector


class NimChart(WorkloadChart):
    """The ``nim`` kind: the NIMCache and NIMService (no model volume or sync Job: the cache holds the model)."""

    server: NimServer

    def serve(self, resolved: ResolvedWorkload, refs: StorageRefs) -> None:
        workload = resolved.config
        assert isinstance(workload, NimWorkloadConfig)
        pod = resolved.server.pod
        ngc = workload.ngc
        if ngc.api_key_secret is None or ngc.pull_secret is None:  # rule NIM-NGC-SECRETS names the field
            raise PropError(f"{resolved.path}.ngc: api_key_secret and pull_secret are required (rule NIM-NGC-SECRETS)")
        cache = workload.cache
        hf = cache.source is NimCacheSource.HF
        if hf and workload.model.hf_token_secret is None:
            raise PropError(f"{resolved.path}.model.hf_token_secret: required for an hf cache (rule NIM-NGC-SECRETS)")
        organization, _, model_name = workload.model.id.partition("/")
        cpu = cache.cpu
        self.server = NimServer(
            self,
            "nim",
            NimServerProps(
                name=workload.name,
                namespace=workload.namespace,
                repository=workload.image.repository,
                tag=workload.image.tag,
                auth_secret=ngc.api_key_secret,
                pull_secrets=(ngc.pull_secret,),
                replicas=workload.replicas,
                requests=pod.requests,
                limits=pod.limits,
                placement=pod_placement(pod),
                startup_seconds=pod.startup_seconds,
                shm_gib=workload.resources.shm_gib,
                monitoring=workload.monitoring,
                profile=cache.profile.ids[0] if len(cache.profile.ids) == 1 else None,
                cache=NimCacheProps(
                    source=cache.source.value,
                    auth_secret=workload.model.hf_token_secret.name  # type: ignore[union-attr]
                    if hf
                    else ngc.api_key_secret,
                    pull_secret=ngc.pull_secret,
                    model_selector=profile_selector(workload) if not hf else {},
                    hf_endpoint=cache.hf_endpoint,
                    hf_namespace=organization if hf else None,
                    hf_model_name=model_name if hf else None,
                    hf_revision=workload.model.revision if hf else None,
                    size_gib=workload.cache_size_gib,
                    storage_class=cache.storage_class,
                    access_mode=cache.access_mode.value,
                    cpu=str(int(cpu)) if float(cpu).is_integer() else f"{int(cpu * 1000)}m",
                    memory=f"{cache.memory_gib:g}Gi",
                    placement=pod_placement(pod),
                ),
            ),
        )
