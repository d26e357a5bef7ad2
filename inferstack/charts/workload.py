"""WorkloadChart: everything one served model needs in Kubernetes — service accounts, model volume, model-sync
Job (and, with an engine, its server). NamespacesChart: the namespaces workloads live in."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import cdk8s
from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.kubernetes import POOL_LABEL, SYSTEM_POOL
from inferstack.config.workloads import ModelSourceType, WorkloadConfig
from inferstack.constructs.model_source import ModelLoading, ModelSourceProps, SourceKind, model_loading
from inferstack.constructs.model_sync import ModelSyncJob, ModelSyncJobProps
from inferstack.constructs.volumes import FsxModelVolume, FsxModelVolumeProps, S3ModelVolume, S3ModelVolumeProps

BUCKET_SOURCES = (ModelSourceType.S3, ModelSourceType.S3_MOUNT, ModelSourceType.FSX)


def sync_service_account(workload: WorkloadConfig) -> str:
    return f"{workload.name}-model-sync"


def server_service_account(workload: WorkloadConfig) -> str:
    return workload.service_account or workload.name


def needs_sync(workload: WorkloadConfig) -> bool:
    return workload.sync_model and workload.model.source.type in BUCKET_SOURCES


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
    mount_cache_gib: int = 10


def fsx_model_path(workload: WorkloadConfig, refs: StorageRefs) -> str:
    """Where the model's bucket prefix appears inside the file system (the data repository association maps
    ``fsx_import_prefix`` to ``fsx_path``)."""
    relative = workload.model.bucket_prefix[len(refs.fsx_import_prefix) :]
    return f"{refs.fsx_path.rstrip('/')}/{relative}".rstrip("/")


class NamespacesChart(cdk8s.Chart):
    """One Namespace per distinct workload namespace, labelled for Pod Security admission (baseline)."""

    def __init__(self, scope: Construct, construct_id: str, namespaces: Iterable[str]) -> None:
        super().__init__(scope, construct_id, disable_resource_name_hashes=True)
        for name in sorted(set(namespaces)):
            k8s.KubeNamespace(
                self,
                name,
                metadata=k8s.ObjectMeta(
                    name=name,
                    labels={
                        "pod-security.kubernetes.io/enforce": "baseline",
                        "pod-security.kubernetes.io/warn": "restricted",
                    },
                ),
            )


class WorkloadChart(cdk8s.Chart):
    """Service accounts, model volume and model-sync Job of one workload. :attr:`loading` is what its server
    pods add to load the model."""

    def __init__(self, scope: Construct, construct_id: str, workload: WorkloadConfig, refs: StorageRefs) -> None:
        super().__init__(scope, construct_id, disable_resource_name_hashes=True, namespace=workload.namespace)
        self.workload = workload
        model, source = workload.model, workload.model.source
        labels = {"app.kubernetes.io/name": workload.name, "app.kubernetes.io/part-of": "inferstack"}
        k8s.KubeServiceAccount(
            self,
            "server-sa",
            metadata=k8s.ObjectMeta(name=server_service_account(workload), namespace=workload.namespace, labels=labels),
            automount_service_account_token=False,
        )
        claim = None
        if source.type is ModelSourceType.S3_MOUNT:
            claim = S3ModelVolume(
                self,
                "model-volume",
                S3ModelVolumeProps(
                    name=f"{workload.name}-model",
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
                "model-volume",
                FsxModelVolumeProps(
                    name=f"{workload.name}-model",
                    namespace=workload.namespace,
                    file_system_id=refs.fsx_id or "",
                    dns_name=refs.fsx_dns_name or "",
                    mount_name=refs.fsx_mount_name or "",
                ),
            ).claim_name
        token = (model.hf_token_secret.name, model.hf_token_secret.key) if model.hf_token_secret else None
        self.loading: ModelLoading = model_loading(
            ModelSourceProps(
                kind=SourceKind(source.type.value),
                model_id=model.id,
                revision=model.revision,
                bucket=refs.bucket,
                prefix=model.bucket_prefix,
                region=refs.region,
                claim_name=claim,
                fsx_path=fsx_model_path(workload, refs) if source.type is ModelSourceType.FSX else None,
                image_path=source.path,
                streamer_concurrency=source.streamer_concurrency,
                hf_token_secret=token,
                hf_cache_gib=source.cache_size_gib,
            )
        )
        if needs_sync(workload) and refs.bucket:
            k8s.KubeServiceAccount(
                self,
                "sync-sa",
                metadata=k8s.ObjectMeta(
                    name=sync_service_account(workload), namespace=workload.namespace, labels=labels
                ),
                automount_service_account_token=False,
            )
            ModelSyncJob(
                self,
                "model-sync",
                ModelSyncJobProps(
                    name=f"{workload.name}-model-sync",
                    namespace=workload.namespace,
                    service_account=sync_service_account(workload),
                    bucket=refs.bucket,
                    prefix=model.bucket_prefix,
                    region=refs.region,
                    model_id=model.id,
                    revision=model.revision,
                    hf_token_secret=token,
                    node_selector={POOL_LABEL: SYSTEM_POOL},
                ),
            )
