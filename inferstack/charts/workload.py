"""WorkloadChart: what every workload kind needs in Kubernetes — service accounts, the model volume, the model-sync
Job, the per-workload ``overrides`` — with the kind's own objects added by its subclass (:meth:`WorkloadChart.serve`;
the vLLM kinds in :mod:`inferstack.charts.vllm` and :mod:`inferstack.charts.vllm_multinode`). NamespacesChart: the
namespaces workloads live in."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import cdk8s
from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.kubernetes import POOL_LABEL, SYSTEM_POOL
from inferstack.catalog.versions import DEFAULT_KUBERNETES_VERSION
from inferstack.charts.caches import CacheVolumes, cache_volumes
from inferstack.charts.observability import served_workload
from inferstack.charts.overrides import apply_overrides
from inferstack.charts.pod_customization import apply_pod_config
from inferstack.charts.probes import apply_probes
from inferstack.charts.routing import add_router
from inferstack.config.storage import FsxDeploymentType, StorageConfig
from inferstack.config.workloads import ModelConfig, ModelSourceType
from inferstack.constructs.batch import BATCH_PRIORITY_CLASS, content_name
from inferstack.constructs.bench import BenchJob, BenchJobProps, BenchLoad
from inferstack.constructs.model_source import ModelLoading, ModelSourceProps, SourceKind, model_loading
from inferstack.constructs.model_sync import ModelSyncJob, ModelSyncJobProps, wait_for_sync_container
from inferstack.constructs.observability import ServingAlerts
from inferstack.constructs.pod import PodPlacement
from inferstack.constructs.pod.mounts import volume_mounts
from inferstack.constructs.validation import PropError
from inferstack.constructs.volumes import (
    EfsModelVolume,
    EfsModelVolumeProps,
    FsxModelVolume,
    FsxModelVolumeProps,
    S3ModelVolume,
    S3ModelVolumeProps,
)
from inferstack.plan import PodPlan, ResolvedModel, ResolvedWorkload
from inferstack.plan.bench import ResolvedBench


@dataclass(frozen=True, kw_only=True)
class StorageRefs:
    """AWS-side storage values (usually CDK tokens) the Kubernetes objects refer to."""

    region: str
    bucket: str | None = None
    fsx_id: str | None = None
    fsx_dns_name: str | None = None
    fsx_mount_name: str | None = None
    fsx_import_prefix: str = "models/"
    fsx_path: str = "/models"
    efs_id: str | None = None
    """The EFS file system of ``storage.efs`` (the ``inferstack-efs`` StorageClass provisions access points in it;
    ``efs`` model sources mount a directory of it)."""
    mount_cache_gib: int = 10
    volume_identities: Mapping[str, str] = field(default_factory=dict)
    """What each mounted source's volumes depend on in the config, by source (``s3``, ``fsx``, ``efs``:
    :func:`storage_identities`): part of the model claims' names, so ``inferstack check`` and synth name them
    alike, whatever the tokens. Default none: the claims are named from the values above."""
    sync_image: str | None = None
    """The model-sync Jobs' image (the built container asset's URI, or ``storage.model_sync_image``); required
    where a model is synced."""
    sync_image_identity: str | None = None
    """What changes with ``sync_image`` when it is a token (the asset's content hash); see
    :attr:`~inferstack.constructs.model_sync.ModelSyncJobProps.image_identity`."""

    def volume_identity(self, source: str) -> str | None:
        """What names the model volumes of ``source`` (``s3``, ``fsx``, ``efs``): :attr:`volume_identities`, else
        the bucket's or file system's id above (a token, masked, names nothing)."""
        if source in self.volume_identities:
            return self.volume_identities[source]
        return {"s3": self.bucket, "fsx": self.fsx_id, "efs": self.efs_id}[source]


def model_claim(name: str, source: str, *identity: str | None) -> str:
    """The claim (and, with its namespace, the PV) of a mounted model: ``<name>-<source>-<8 hex>``
    (:func:`~inferstack.constructs.batch.content_name`: CDK tokens masked), the digest of what the volume mounts
    (``identity``: the bucket and prefix, the file system, the directory). A PV's source and a claim's access modes
    cannot change in place (the API server refuses the update), and a PV's mount options change without the pods
    noticing (a Mountpoint pod keeps the prefix it mounted — a new revision without a sync Job would leave the
    replicas on the old weights), so another bucket prefix, file system or directory is a new PV and claim, which
    the pods' template names: they roll over to it."""
    return content_name(f"{name}-{source}", name, *identity)


def storage_identities(storage: StorageConfig) -> dict[str, str]:
    """What the model volumes of each mounted source depend on in ``storage``: what, changed, replaces the bucket
    or the file system (and so the PV's source), and nothing that changes in place (an FSx's capacity or
    throughput, EFS's throughput mode, a security group), which would roll the pods for nothing.

    * ``s3``: the bucket's name as written, or the one inferstack creates;
    * ``fsx``: an existing file system's id, DNS and mount names; a created one's deployment type and zone
      (CloudFormation replaces it for either), and for SCRATCH_2 its import path too (the bucket and the import
      prefix: SCRATCH_2 imports through ``ImportPath``, which no update changes);
    * ``efs``: an existing file system's id, or the one inferstack creates."""
    bucket = storage.model_bucket
    named = bucket and (bucket.existing_bucket_name or bucket.bucket_name)
    s3 = f"bucket {named}" if named else ("storage.model_bucket" if bucket is not None else "no bucket")
    fsx, efs = storage.fsx, storage.efs
    if fsx is None:
        fsx_identity = ""
    elif fsx.existing is not None:
        fsx_identity = f"existing {fsx.existing.file_system_id} {fsx.existing.dns_name} {fsx.existing.mount_name}"
    else:
        fsx_identity = f"created {fsx.deployment_type.value} zone {fsx.availability_zone}"
        if fsx.deployment_type is FsxDeploymentType.SCRATCH_2:
            fsx_identity += f" import {s3}/{fsx.import_prefix}"
    if efs is None:
        efs_identity = ""
    else:
        efs_identity = f"existing {efs.existing.file_system_id}" if efs.existing is not None else "created"
    return {"s3": s3, "fsx": fsx_identity, "efs": efs_identity}


def config_refs(storage: StorageConfig) -> dict[str, Any]:
    """The :class:`StorageRefs` fields that come from the config alone (the Mountpoint cache, FSx's import prefix
    and path, the volumes' identities): synth (``stacks.workloads.storage_refs``) and ``inferstack check``
    (``cli.placeholder_refs``) both take them from here, so both render the same names and paths."""
    fsx = storage.fsx
    return {
        "mount_cache_gib": storage.mount_cache_gib,
        "fsx_import_prefix": fsx.import_prefix if fsx else "models/",
        "fsx_path": fsx.file_system_path if fsx else "/models",
        "volume_identities": storage_identities(storage),
    }


def fsx_model_path(model: ModelConfig, refs: StorageRefs) -> str:
    """Where the model's bucket prefix appears inside the file system (the data repository association maps
    ``fsx_import_prefix`` to ``fsx_path``)."""
    relative = model.bucket_prefix[len(refs.fsx_import_prefix) :]
    return f"{refs.fsx_path.rstrip('/')}/{relative}".rstrip("/")


def pod_placement(
    pod: PodPlan,
    *,
    priority_class: str | None = None,
    scheduler_name: str | None = None,
    affinity: Mapping[str, Any] | None = None,
) -> PodPlacement:
    """The planned pod's node selector and tolerations (sorted) as a :class:`PodPlacement`, with
    ``priority_class``, ``scheduler_name`` and ``affinity`` (default none)."""
    return PodPlacement(
        node_selector=pod.node_selector,
        tolerations=sorted(pod.tolerations),
        affinity=affinity,
        scheduler_name=scheduler_name,
        priority_class=priority_class,
    )


#: The system pool, where batch work (model sync, benchmarks) runs, at batch priority.
SYSTEM_BATCH_PLACEMENT = PodPlacement(node_selector={POOL_LABEL: SYSTEM_POOL}, priority_class=BATCH_PRIORITY_CLASS)


#: Pod Security Standards level inferstack enforces on the namespaces it creates (warns at ``restricted``).
NAMESPACE_ENFORCE = "baseline"


class NamespacesChart(cdk8s.Chart):
    """One Namespace per name, labelled for Pod Security admission (enforce baseline, warn restricted)."""

    def __init__(self, scope: Construct, construct_id: str, namespaces: Iterable[str]) -> None:
        super().__init__(scope, construct_id, disable_resource_name_hashes=True)
        for name in sorted(set(namespaces)):
            k8s.KubeNamespace(
                self,
                name,
                metadata=k8s.ObjectMeta(
                    name=name,
                    labels={
                        "pod-security.kubernetes.io/enforce": NAMESPACE_ENFORCE,
                        "pod-security.kubernetes.io/warn": "restricted",
                    },
                ),
            )


def engine_ranks(workload: object) -> int:
    """The vLLM ranks one replica runs (tensor × pipeline parallel; 1 for kinds without a vLLM engine)."""
    engine = getattr(workload, "engine", None)
    tp = getattr(engine, "tensor_parallel_size", 1)
    pp = getattr(engine, "pipeline_parallel_size", 1)
    return tp * pp if isinstance(tp, int) and isinstance(pp, int) else 1


class WorkloadChart(cdk8s.Chart):
    """Service accounts, model volume and model-sync Job of one workload, then its kind's objects
    (:meth:`serve`), then its ``pod`` labels, annotations and env on every pod serving it
    (:mod:`~inferstack.charts.pod_customization`) and ``probes`` (:mod:`~inferstack.charts.probes`), then its
    ``overrides`` (deep-merged, validated against each object's schema).

    :param kubernetes_version: the cluster's minor version, for validating overridden core objects. Default: the
        catalog's default.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        resolved: ResolvedWorkload,
        refs: StorageRefs,
        *,
        kubernetes_version: str = DEFAULT_KUBERNETES_VERSION,
    ) -> None:
        workload = resolved.config
        super().__init__(scope, construct_id, disable_resource_name_hashes=True, namespace=workload.namespace)
        self.resolved = resolved
        self.workload = workload
        labels = {"app.kubernetes.io/name": workload.name, "app.kubernetes.io/part-of": "inferstack"}
        accounts = sorted({r.service_account for r in resolved.roles.values() if r.creates_service_account})
        for account in accounts:  # construct ids as before multi-role kinds: the serving account is "server-sa"
            k8s.KubeServiceAccount(
                self,
                "server-sa" if account == resolved.server.service_account else f"{account}-sa",
                metadata=k8s.ObjectMeta(name=account, namespace=workload.namespace, labels=labels),
                automount_service_account_token=False,
            )
        #: The workload's persistent caches: their claims are rendered here, the kind's server mounts them.
        self.caches: CacheVolumes = cache_volumes(self, workload, resolved.pool.accelerator)
        #: How each model's weights are read (in the order of ``resolved.models``).
        self.loadings: list[ModelLoading] = [self._model(resolved, model, refs) for model in resolved.models]
        #: The primary model's (None when the workload has no bucket model: a NIM's cache holds it).
        self.loading: ModelLoading | None = self.loadings[0] if self.loadings else None
        if resolved.writes_bucket and refs.bucket:
            k8s.KubeServiceAccount(
                self,
                "sync-sa",
                metadata=k8s.ObjectMeta(
                    name=resolved.writer_service_account, namespace=workload.namespace, labels=labels
                ),
                automount_service_account_token=False,
            )
        for model in resolved.models:
            self._sync(resolved, model, refs)
        self.serve(resolved, refs)
        if resolved.router is not None:
            add_router(self, resolved.router)
        served = served_workload(resolved)
        if served is not None:
            ServingAlerts(self, "alerts", served)
        if resolved.bench is not None and refs.bucket:
            self._bench(resolved, resolved.bench, refs, labels)
        apply_pod_config(self, workload.name, workload.pod, f"{resolved.path}.pod")
        apply_probes(self, workload.name, workload.probes, f"{resolved.path}.probes")
        apply_overrides(
            self,
            workload.overrides,
            f"{resolved.path}.overrides",
            kubernetes_version,
            acknowledgements=workload.override_acknowledgements,
            router=resolved.router.name if resolved.router is not None else None,
        )

    def _bench(
        self, resolved: ResolvedWorkload, bench: ResolvedBench, refs: StorageRefs, labels: dict[str, str]
    ) -> None:
        k8s.KubeServiceAccount(
            self,
            "bench-sa",
            metadata=k8s.ObjectMeta(name=bench.service_account, namespace=resolved.namespace, labels=labels),
            automount_service_account_token=False,
        )
        load = bench.config
        BenchJob(
            self,
            "bench",
            BenchJobProps(
                name=resolved.name,
                namespace=resolved.namespace,
                base_url=bench.base_url,
                endpoint=bench.endpoint,
                model=bench.model,
                load=BenchLoad(
                    concurrency=load.concurrency,
                    input_tokens=load.input_tokens,
                    output_tokens=load.output_tokens,
                    num_prompts=load.num_prompts,
                    request_rate=load.request_rate,
                ),
                service_account=bench.service_account,
                bucket=str(refs.bucket),
                region=refs.region,
                model_prefix=bench.model_prefix,
                results_prefix=bench.results_prefix,
                tokenizer=bench.tokenizer,
                tokenizer_mode=bench.tokenizer_mode,
                hf_token_secret=bench.hf_token_secret,
                placement=SYSTEM_BATCH_PLACEMENT,
                timeout_seconds=load.timeout_minutes * 60,
            ),
        )

    def _model(self, resolved: ResolvedWorkload, resolved_model: ResolvedModel, refs: StorageRefs) -> ModelLoading:
        """The model's volume (Mountpoint / FSx / EFS PV+PVC); returns how the engine reads it."""
        workload, model, suffix = resolved.config, resolved_model.config, resolved_model.suffix
        source = model.source
        claim = None
        if source.type is ModelSourceType.S3_MOUNT:
            claim = S3ModelVolume(
                self,
                f"model-volume{suffix}",
                S3ModelVolumeProps(
                    name=model_claim(
                        f"{workload.name}-model{suffix}",
                        "s3",
                        refs.volume_identity("s3"),
                        model.bucket_prefix,
                        str(refs.mount_cache_gib),
                    ),
                    namespace=workload.namespace,
                    bucket=refs.bucket or "",
                    prefix=model.bucket_prefix,
                    region=refs.region,
                    cache_size_gib=refs.mount_cache_gib,
                ),
            ).claim_name
        elif source.type is ModelSourceType.FSX:
            claim = FsxModelVolume(
                self,
                f"model-volume{suffix}",
                FsxModelVolumeProps(
                    name=model_claim(f"{workload.name}-model{suffix}", "fsx", refs.volume_identity("fsx")),
                    namespace=workload.namespace,
                    file_system_id=refs.fsx_id or "",
                    dns_name=refs.fsx_dns_name or "",
                    mount_name=refs.fsx_mount_name or "",
                ),
            ).claim_name
        elif source.type is ModelSourceType.EFS:
            if refs.efs_id is None:
                raise PropError(
                    f"workload {workload.name!r}: an efs model source needs StorageRefs.efs_id (the file system of "
                    "storage.efs)"
                )
            claim = EfsModelVolume(
                self,
                f"model-volume{suffix}",
                EfsModelVolumeProps(
                    name=model_claim(f"{workload.name}-model{suffix}", "efs", refs.volume_identity("efs"), source.path),
                    namespace=workload.namespace,
                    file_system_id=refs.efs_id,
                    path=source.path or "",
                ),
            ).claim_name
        token = (model.hf_token_secret.name, model.hf_token_secret.key) if model.hf_token_secret else None
        loading = model_loading(
            ModelSourceProps(
                kind=SourceKind(source.type.value),
                model_id=model.id,
                revision=model.revision,
                bucket=refs.bucket,
                prefix=model.bucket_prefix,
                region=refs.region,
                claim_name=claim,
                fsx_path=fsx_model_path(model, refs) if source.type is ModelSourceType.FSX else None,
                image_path=source.path,
                streamer_concurrency=source.streamer_concurrency,
                streamer_distributed=engine_ranks(workload) > 1 and resolved.pool.accelerator is AcceleratorKind.NVIDIA,
                hf_token_secret=token,
                hf_cache_gib=source.cache_size_gib,
                hf_cache_claim=self.caches.hub_claim if not suffix else None,
                suffix=suffix,
            )
        )
        return loading

    def _sync(self, resolved: ResolvedWorkload, resolved_model: ResolvedModel, refs: StorageRefs) -> None:
        """The model's sync Job, when it is synced into the bucket."""
        workload, model, suffix = resolved.config, resolved_model.config, resolved_model.suffix
        token = (model.hf_token_secret.name, model.hf_token_secret.key) if model.hf_token_secret else None
        if resolved_model.sync and refs.bucket:
            if refs.sync_image is None:
                raise PropError(
                    f"workload {workload.name!r}: a synced model needs StorageRefs.sync_image (its Job's image)"
                )
            ModelSyncJob(
                self,
                f"model-sync{suffix}",
                ModelSyncJobProps(
                    name=f"{workload.name}-model-sync{suffix}",
                    namespace=workload.namespace,
                    service_account=resolved.writer_service_account,
                    bucket=refs.bucket,
                    prefix=model.bucket_prefix,
                    region=refs.region,
                    model_id=model.id,
                    image=refs.sync_image,
                    image_identity=refs.sync_image_identity,
                    revision=model.revision,
                    hf_token_secret=token,
                    placement=SYSTEM_BATCH_PLACEMENT,
                    exclude=resolved_model.sync_excludes,
                ),
            )

    def serve(self, resolved: ResolvedWorkload, refs: StorageRefs) -> None:
        """Add the kind's serving objects (a subclass's part). ``self.loading`` says how the weights are read."""
        raise NotImplementedError(f"{type(self).__name__} must add the workload's serving objects")

    def wait_for_model(self, resolved: ResolvedWorkload, refs: StorageRefs, index: int = 0) -> list[k8s.Container]:
        """An init container holding the server until the sync Job of model ``index`` (default the primary) has
        finished (instead of crash-looping on a partial model); none when it is not synced."""
        resolved_model = resolved.models[index]
        if not (resolved_model.sync and refs.bucket):
            return []
        model, loading = resolved_model.config, self.loadings[index]
        mounted = model.source.type in (ModelSourceType.S3_MOUNT, ModelSourceType.FSX)
        return [
            wait_for_sync_container(
                bucket=refs.bucket,
                prefix=model.bucket_prefix,
                region=refs.region,
                mounted_path=loading.model if mounted else None,
                mounts=volume_mounts(loading.mounts) if mounted else None,
                name="wait-for-model" if index == 0 else f"wait-for-model{resolved_model.suffix}",
            )
        ]
