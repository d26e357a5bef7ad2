"""Static PersistentVolume + PersistentVolumeClaim pairs for model storage, bound to each other by name."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cdk8s_plus_36 import k8s
from constructs import Construct

#: Nominal capacity of static volumes: neither Mountpoint nor static FSx or EFS volumes enforce it, Kubernetes
#: needs one.
NOMINAL_CAPACITY = "1200Gi"


def _bind(
    scope: Construct,
    name: str,
    namespace: str,
    csi: k8s.CsiPersistentVolumeSource,
    mount_options: Sequence[str] = (),
    access_mode: str = "ReadOnlyMany",
) -> tuple[str, str]:
    """A PV reserved for one PVC (``claimRef``) and that PVC naming the PV (``volumeName``): they bind to each
    other and nothing else. ``persistentVolumeReclaimPolicy: Retain`` — deleting the claim never touches data."""
    pv_name = f"{namespace}-{name}"
    k8s.KubePersistentVolume(
        scope,
        "pv",
        metadata=k8s.ObjectMeta(name=pv_name),
        spec=k8s.PersistentVolumeSpec(
            capacity={"storage": k8s.Quantity.from_string(NOMINAL_CAPACITY)},
            access_modes=[access_mode],
            persistent_volume_reclaim_policy="Retain",
            storage_class_name="",
            claim_ref=k8s.ObjectReference(namespace=namespace, name=name),
            mount_options=list(mount_options) or None,
            csi=csi,
        ),
    )
    k8s.KubePersistentVolumeClaim(
        scope,
        "pvc",
        metadata=k8s.ObjectMeta(name=name, namespace=namespace),
        spec=k8s.PersistentVolumeClaimSpec(
            access_modes=[access_mode],
            storage_class_name="",
            volume_name=pv_name,
            resources=k8s.VolumeResourceRequirements(requests={"storage": k8s.Quantity.from_string(NOMINAL_CAPACITY)}),
        ),
    )
    return pv_name, name


@dataclass(frozen=True, kw_only=True)
class S3ModelVolumeProps:
    """A bucket prefix mounted read-only with Mountpoint for S3 (``s3.csi.aws.com``)."""

    name: str
    """PVC name (the PV is ``<namespace>-<name>``)."""
    namespace: str
    """Namespace of the PVC (the cluster-scoped PV is ``<namespace>-<name>``)."""
    bucket: str
    """The bucket Mountpoint mounts (the ``bucketName`` volume attribute)."""
    prefix: str
    """Mounted as the volume root (``--prefix``), ending with '/'."""
    region: str
    """The bucket's region (Mountpoint's ``region`` mount option)."""
    cache_size_gib: int = 10
    """Local ``emptyDir`` cache per Mountpoint pod, GiB. Default 10."""


class S3ModelVolume(Construct):
    """PV + PVC for a model prefix: ReadOnlyMany, metadata cached for 5 minutes (weights are immutable; a finite
    TTL lets pods waiting for the model-sync Job see its marker appear)."""

    def __init__(self, scope: Construct, construct_id: str, props: S3ModelVolumeProps) -> None:
        super().__init__(scope, construct_id)
        csi = k8s.CsiPersistentVolumeSource(
            driver="s3.csi.aws.com",
            volume_handle=f"s3-{props.namespace}-{props.name}",
            read_only=True,
            volume_attributes={
                "bucketName": props.bucket,
                "cache": "emptyDir",
                "cacheEmptyDirSizeLimit": f"{props.cache_size_gib}Gi",
            },
        )
        options = [f"prefix {props.prefix}", f"region {props.region}", "metadata-ttl 300", "read-only"]
        self.pv_name, self.claim_name = _bind(self, props.name, props.namespace, csi, options)


@dataclass(frozen=True, kw_only=True)
class FsxModelVolumeProps:
    """An FSx for Lustre file system mounted read-only (``fsx.csi.aws.com``, static provisioning)."""

    name: str
    """PVC name (the PV is ``<namespace>-<name>``)."""
    namespace: str
    """Namespace of the PVC (the cluster-scoped PV is ``<namespace>-<name>``)."""
    file_system_id: str
    """The FSx for Lustre file system id (``fs-…``): the PV's ``volumeHandle``."""
    dns_name: str
    """The file system's DNS name (the ``dnsname`` volume attribute)."""
    mount_name: str
    """The file system's Lustre mount name (the ``mountname`` volume attribute)."""


class FsxModelVolume(Construct):
    """PV + PVC for an FSx for Lustre file system, ReadOnlyMany."""

    def __init__(self, scope: Construct, construct_id: str, props: FsxModelVolumeProps) -> None:
        super().__init__(scope, construct_id)
        csi = k8s.CsiPersistentVolumeSource(
            driver="fsx.csi.aws.com",
            volume_handle=props.file_system_id,
            read_only=True,
            volume_attributes={"dnsname": props.dns_name, "mountname": props.mount_name},
        )
        self.pv_name, self.claim_name = _bind(self, props.name, props.namespace, csi, ("flock",))


@dataclass(frozen=True, kw_only=True)
class EfsModelVolumeProps:
    """A directory of an EFS file system mounted read-only (``efs.csi.aws.com``, static provisioning)."""

    name: str
    """PVC name (the PV is ``<namespace>-<name>``)."""
    namespace: str
    """Namespace of the PVC (the cluster-scoped PV is ``<namespace>-<name>``)."""
    file_system_id: str
    """The EFS file system id (``fs-…``)."""
    path: str
    """The directory the volume is (absolute, in the file system): the pods see it as the volume's root."""


#: Access modes the EFS CSI driver publishes (kubernetes-sigs/aws-efs-csi-driver v3.4.1 ``pkg/driver/node.go:43-46``
#: ``volumeCapAccessModes``: SINGLE_NODE_WRITER and MULTI_NODE_MULTI_WRITER only — a ReadOnlyMany volume,
#: MULTI_NODE_READER_ONLY, fails NodePublishVolume "Volume capability not supported"). Read-only is the pods'
#: ``readOnly`` claim, which the driver mounts ``ro`` (``node.go:196-198``).
EFS_ACCESS_MODE = "ReadWriteMany"


class EfsModelVolume(Construct):
    """PV + PVC for a directory of an EFS file system, ReadWriteMany (the only shared mode the driver takes) and
    read-only in every pod. ``volumeHandle: <fs-id>:<path>`` — the driver's format from before S3 Files support,
    without the ``efs:`` type prefix, so older drivers on a cluster that runs its own read it too (v3.4.1
    ``node.go:551-577``); the driver mounts ``<fs-id>:<path>`` with ``tls``, its default (``node.go:101-176``).
    ``Retain``: deleting the claim leaves the files."""

    def __init__(self, scope: Construct, construct_id: str, props: EfsModelVolumeProps) -> None:
        super().__init__(scope, construct_id)
        csi = k8s.CsiPersistentVolumeSource(
            driver="efs.csi.aws.com", volume_handle=f"{props.file_system_id}:{props.path}", read_only=True
        )
        self.pv_name, self.claim_name = _bind(self, props.name, props.namespace, csi, access_mode=EFS_ACCESS_MODE)
