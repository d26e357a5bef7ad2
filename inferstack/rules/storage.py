"""Model storage rules: every model source has its backend (bucket, FSx, EFS), FSx is in the zone of the GPUs that
read it, the prefix a workload reads is one its storage holds, gated models come with a token."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.compute import AcceleratedNodeGroupConfig, KarpenterPoolConfig
from inferstack.config.model import InferstackConfig
from inferstack.config.storage import FsxDeploymentType
from inferstack.config.workloads import ModelConfig, ModelSourceType, WorkloadBase
from inferstack.plan.caches import hub_cache
from inferstack.plan.placement import NEURON_COMPILE_SCRATCH_GIB, neuron_model_volume_gib
from inferstack.rules.base import Finding, Rule, Severity

BACKEND = "MODEL-SOURCE-BACKEND"
FSX_AZ = "FSX-AZ"
PREFIX = "MODEL-PREFIX"
HF_TOKEN = "HF-TOKEN"  # noqa: S105 - a rule id, not a secret
DISK = "MODEL-DISK"
FSX_EXISTING_SYNC = "FSX-EXISTING-SYNC"
FSX_SCRATCH_SYNC = "FSX-SCRATCH-SYNC"
#: Node disk not available to pods, GiB: the OS, kubelet and container images (the vLLM image alone unpacks to
#: ~20 GiB). An estimate; with kubelet's default eviction at 10 % free nodefs, see :func:`usable_disk_gib`.
NODE_DISK_RESERVED_GIB = 40
#: Headroom of a download cache over the checkpoint (tokenizer, config, partial files), fraction.
CACHE_HEADROOM = 0.05
_BUCKET_SOURCES = (ModelSourceType.S3, ModelSourceType.S3_MOUNT)


def _workloads(config: InferstackConfig) -> Iterator[tuple[str, WorkloadBase]]:
    for index, workload in enumerate(config.workloads):
        yield f"workloads[{index}]", workload


def _models(config: InferstackConfig) -> Iterator[tuple[str, str, WorkloadBase, ModelConfig]]:
    """``(workload path, model path, workload, model)`` of every model of every workload."""
    for path, workload in _workloads(config):
        for relative, model in workload.model_entries:
            yield path, f"{path}.{relative}", workload, model


def check_backend(config: InferstackConfig) -> Iterator[Finding]:
    """``s3``/``s3_mount`` need the model bucket; ``fsx`` needs ``storage.fsx``; ``efs`` needs ``storage.efs``."""
    for path, mpath, workload, model in _models(config):
        kind = model.source.type
        if kind in _BUCKET_SOURCES and config.storage.model_bucket is None:
            yield Finding(
                rule=BACKEND,
                path=f"{mpath}.source.type",
                message=f"source {kind.value} reads the model bucket, but storage.model_bucket is null",
                fix="restore storage.model_bucket (or set existing_bucket_name), or use an hf/image source",
            )
        if kind is ModelSourceType.FSX and config.storage.fsx is None:
            yield Finding(
                rule=BACKEND,
                path=f"{mpath}.source.type",
                message="source fsx needs an FSx for Lustre file system, but storage.fsx is not set",
                fix="add storage.fsx (in the GPU pool's zone) or use source type s3 / s3_mount",
            )
        if kind is ModelSourceType.EFS and config.storage.efs is None:
            yield Finding(
                rule=BACKEND,
                path=f"{mpath}.source.type",
                message=f"source efs reads {model.source.path} of an EFS file system, but storage.efs is not set",
                fix="add storage.efs (storage.efs.existing: {file_system_id, security_group_id} for the file system "
                "holding the model)",
            )
        if kind is ModelSourceType.FSX and config.storage.model_bucket is None and workload.sync_model:
            yield Finding(
                rule=BACKEND,
                path=f"{path}.sync_model",
                message="the model-sync Job fills FSx through the model bucket, which is not configured",
                fix="restore storage.model_bucket or set sync_model: false and load the file system yourself",
            )


def check_fsx_zone(config: InferstackConfig) -> Iterator[Finding]:
    """FSx must sit in the zone of the pool whose pods mount it (Lustre is zonal; cross-AZ is slow and billed)."""
    fsx = config.storage.fsx
    if fsx is None:
        return
    fsx_zone = config.zone_index(fsx.availability_zone)
    for path, workload in _workloads(config):
        if all(model.source.type is not ModelSourceType.FSX for _, model in workload.model_entries):
            continue
        pool = config.pool(workload.pool)
        if pool.availability_zone is None:
            yield Finding(
                rule=FSX_AZ,
                path=f"{path}.pool",
                message=f"pool {pool.name!r} spans every zone, but FSx lives in zone {fsx_zone}",
                fix=f"pin the pool to the file system's zone (availability_zone: {fsx_zone})",
            )
        elif config.zone_index(pool.availability_zone) != fsx_zone:
            yield Finding(
                rule=FSX_AZ,
                path=f"{path}.pool",
                message=f"pool {pool.name!r} is in zone {config.zone_index(pool.availability_zone)} but "
                f"FSx is in zone {fsx_zone}",
                fix="move storage.fsx.availability_zone or the pool so both share one zone",
            )


def check_prefix(config: InferstackConfig) -> Iterator[Finding]:
    """An ``fsx`` workload can read only what the file system links from the bucket (``fsx.import_prefix``)."""
    fsx = config.storage.fsx
    if fsx is None:
        return
    for _, mpath, _, model in _models(config):
        prefix = model.bucket_prefix
        if model.source.type is ModelSourceType.FSX and not prefix.startswith(fsx.import_prefix):
            yield Finding(
                rule=PREFIX,
                path=f"{mpath}.source.prefix",
                message=f"{prefix} is outside {fsx.import_prefix}, the only prefix FSx imports, so the "
                "model would not exist in the file system",
                fix=f"put the model under {fsx.import_prefix} or change storage.fsx.import_prefix",
            )


def check_token(config: InferstackConfig) -> Iterator[Finding]:
    """A gated model downloaded from Hugging Face (hf source or the model-sync Job) needs a token."""
    for _, mpath, workload, model in _models(config):
        downloads = model.source.type is ModelSourceType.HF or (
            workload.sync_model and model.source.type in (*_BUCKET_SOURCES, ModelSourceType.FSX)
        )
        if downloads and model.arch.gated and model.hf_token_secret is None:
            yield Finding(
                rule=HF_TOKEN,
                path=f"{mpath}.hf_token_secret",
                message=f"{model.id} is gated on Hugging Face; downloading it without a token fails (401)",
                fix="create a Secret with a token of an account that accepted the licence and set "
                "hf_token_secret: {name: hf-token, key: token}",
            )


def node_disk_gib(pool: AcceleratedNodeGroupConfig | KarpenterPoolConfig) -> int:
    """The disk holding the pods' emptyDirs and images, GiB: the root volume, or with ``instance_store_policy:
    RAID0`` the instance-store array of the pool's smallest type (Karpenter moves the kubelet's and containerd's
    data there)."""
    if isinstance(pool, KarpenterPoolConfig):
        if pool.instance_store_policy is not None and all(t.nvme_gb for t in pool.instances):
            return int(min(t.nvme_gb for t in pool.instances) * 1e9 / 2**30)
        return pool.effective_root_volume_gib
    return pool.disk_size_gib


def _disk_field(pool: AcceleratedNodeGroupConfig | KarpenterPoolConfig) -> str:
    """The field that sizes :func:`node_disk_gib`."""
    if not isinstance(pool, KarpenterPoolConfig):
        return "disk_size_gib"
    return "instance types (a larger instance store)" if pool.instance_store_policy else "root_volume_gib"


def usable_disk_gib(pool: AcceleratedNodeGroupConfig | KarpenterPoolConfig) -> float:
    """What pods can fill before kubelet evicts them: 90 % of the disk minus :data:`NODE_DISK_RESERVED_GIB`."""
    return node_disk_gib(pool) * 0.9 - NODE_DISK_RESERVED_GIB


def check_disk(config: InferstackConfig) -> Iterator[Finding]:
    """What a workload writes to its node's disk fits: an ``hf`` download (the cache volume must hold the
    checkpoint, the disk the cache), and on Neuron the local copy of the weights beside the compile Job's scratch."""
    for path, workload in _workloads(config):
        pool = config.pool(workload.pool)
        if pool.accelerator is AcceleratorKind.NEURON:
            yield from _neuron_disk(path, workload.model_entries[0][1], pool)
    for _, mpath, workload, model in _models(config):
        source = model.source
        pool = config.pool(workload.pool)
        if source.type is not ModelSourceType.HF or (model is workload.model_entries[0][1] and hub_cache(workload)):
            continue  # not downloaded, or into a persistent Hub cache (CACHE-HUB-SIZE), not the node's disk
        weights = model.arch.weights_gib
        needed = weights * (1 + CACHE_HEADROOM)
        if source.cache_size_gib < needed:
            yield Finding(
                rule=DISK,
                path=f"{mpath}.source.cache_size_gib",
                message=f"{source.cache_size_gib} GiB cannot hold the {weights:.0f} GiB checkpoint of "
                f"{model.id}; the download fails when the volume is full and kubelet evicts the pod",
                fix=f"set cache_size_gib ≥ {int(needed) + 1}, or load from the bucket (type s3 / s3_mount / fsx)",
            )
        usable = usable_disk_gib(pool)
        if max(source.cache_size_gib, needed) > usable:
            field = _disk_field(pool)
            disk = node_disk_gib(pool)
            minimum = int((max(source.cache_size_gib, needed) + NODE_DISK_RESERVED_GIB) / 0.9) + 1
            yield Finding(
                rule=DISK,
                path=f"{mpath}.source.cache_size_gib",
                message=f"{max(source.cache_size_gib, int(needed))} GiB of download cache does not fit the "
                f"{disk} GiB node disk of pool {pool.name!r} (≈{usable:.0f} GiB usable by pods)",
                fix=f"raise the pool's {field} to ≥ {minimum}, "
                "or load from the bucket (type s3 / s3_mount / fsx) instead of downloading at start",
            )


def _neuron_disk(
    path: str, model: ModelConfig, pool: AcceleratedNodeGroupConfig | KarpenterPoolConfig
) -> Iterator[Finding]:
    """The compile Job holds a copy of the weights and its scratch on one node (the server holds the copy too)."""
    needed = neuron_model_volume_gib(model) + NEURON_COMPILE_SCRATCH_GIB
    usable = usable_disk_gib(pool)
    if needed > usable:
        field = _disk_field(pool)
        minimum = int((needed + NODE_DISK_RESERVED_GIB) / 0.9) + 1
        yield Finding(
            rule=DISK,
            path=f"{path}.pool",
            message=f"the Neuron compile Job needs {needed} GiB on the node (the weights of {model.id} "
            f"and {NEURON_COMPILE_SCRATCH_GIB} GiB of compiler scratch); pool {pool.name!r} has a "
            f"{node_disk_gib(pool)} GiB node disk (≈{usable:.0f} GiB usable by pods)",
            fix=f"raise the pool's {field} to ≥ {minimum}",
        )


def _synced_to_fsx(config: InferstackConfig) -> Iterator[tuple[str, ModelConfig]]:
    """``(workload path, model)`` of each ``fsx`` model whose workload syncs it into the bucket first."""
    for path, _, workload, model in _models(config):
        if model.source.type is ModelSourceType.FSX and getattr(workload, "sync_model", False):
            yield path, model


def check_scratch_sync(config: InferstackConfig) -> Iterator[Finding]:
    """A ``SCRATCH_2`` file system imports the bucket once, when it is created (``ImportPath`` without
    ``AutoImportPolicy``; stacks/storage.py links a data repository association with auto-import to
    ``PERSISTENT_2`` only): a model the sync Job copies into the bucket afterwards never appears in it."""
    fsx = config.storage.fsx
    if fsx is None or fsx.deployment_type is not FsxDeploymentType.SCRATCH_2:
        return
    for path, model in _synced_to_fsx(config):
        yield Finding(
            rule=FSX_SCRATCH_SYNC,
            path=f"{path}.sync_model",
            message=f"{model.id} is synced into the bucket, but storage.fsx is SCRATCH_2, which imports the bucket "
            "only when the file system is created: the synced model never appears on FSx",
            fix="use storage.fsx.deployment_type: PERSISTENT_2 (a data repository association with automatic "
            "import), or copy the weights into the bucket before the file system is created and set "
            "sync_model: false",
        )


def check_existing_sync(config: InferstackConfig) -> Iterator[Finding]:
    """On a file system you run (``storage.fsx.existing``) inferstack links no data repository association: a model
    the sync Job copies into the bucket reaches it only through one of yours."""
    fsx = config.storage.fsx
    if fsx is None or fsx.existing is None:
        return
    for path, model in _synced_to_fsx(config):
        yield Finding(
            rule=FSX_EXISTING_SYNC,
            path=f"{path}.sync_model",
            message=f"{model.id} is synced into the bucket under {fsx.import_prefix}, but on the existing file "
            f"system {fsx.existing.file_system_id} inferstack links no data repository association: it appears "
            f"under {fsx.file_system_path} only if yours links that prefix there with automatic import",
            fix="acknowledge with your file system's association named, or put the weights on the file system "
            "yourself and set sync_model: false",
            severity=Severity.WARNING,
        )


RULES = (
    Rule(id=BACKEND, title="Every model source has its storage backend", check=check_backend, acknowledgeable=False),
    Rule(id=FSX_AZ, title="FSx in the zone of the pools that mount it", check=check_fsx_zone),
    Rule(id=PREFIX, title="Workloads read prefixes their storage holds", check=check_prefix),
    Rule(id=HF_TOKEN, title="Gated models come with a Hugging Face token", check=check_token),
    Rule(id=DISK, title="Models downloaded at start fit the cache volume and the node's disk", check=check_disk),
    Rule(id=FSX_SCRATCH_SYNC, title="Synced models reach FSx only with automatic import", check=check_scratch_sync),
    Rule(
        id=FSX_EXISTING_SYNC,
        title="Synced models reach an existing FSx only through its own data repository association",
        check=check_existing_sync,
    ),
)
