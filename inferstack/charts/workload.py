"""WorkloadChart: everything one served model needs in Kubernetes — service accounts, model volume, model-sync
Job (and, with an engine, its server). NamespacesChart: the namespaces workloads live in."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import cdk8s
from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.kubernetes import NEURON_SCHEDULER, POOL_LABEL, SYSTEM_POOL
from inferstack.config.model import InferstackConfig
from inferstack.config.workloads import ModelSourceType, WorkloadConfig
from inferstack.constructs.batch import BATCH_PRIORITY_CLASS
from inferstack.constructs.model_source import ModelLoading, ModelSourceProps, SourceKind, model_loading
from inferstack.constructs.model_sync import SYNC_MARKER, ModelSyncJob, ModelSyncJobProps, wait_for_sync_container
from inferstack.constructs.neuron import (
    COMPILED_DIR,
    MODEL_DIR,
    NeuronCompileJob,
    NeuronCompileJobProps,
    artifacts_prefix,
    fetch_init_container,
    neuron_kv_cache,
)
from inferstack.constructs.vllm import SERVING_PRIORITY_CLASS, Autoscaling, EngineArgs, VllmServer, VllmServerProps
from inferstack.constructs.volumes import FsxModelVolume, FsxModelVolumeProps, S3ModelVolume, S3ModelVolumeProps
from inferstack.plan import ResolvedWorkload
from inferstack.plan.placement import NEURON_COMPILE_SCRATCH_GIB, neuron_model_volume_gib


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


#: Pod Security Standards level inferstack enforces on the namespaces it creates (warns at ``restricted``).
NAMESPACE_ENFORCE = "baseline"


def namespaces_to_create(config: InferstackConfig) -> list[str]:
    """Workload namespaces inferstack owns: all of them except the built-in ones and
    ``cluster.existing_namespaces`` (never relabel a namespace somebody else owns)."""
    existing = config.cluster.preexisting_namespaces
    return sorted({w.namespace for w in config.workloads} - existing)


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


class WorkloadChart(cdk8s.Chart):
    """Service accounts, model volume, model-sync Job, Neuron compile Job and the vLLM server of one workload."""

    def __init__(self, scope: Construct, construct_id: str, resolved: ResolvedWorkload, refs: StorageRefs) -> None:
        workload = resolved.config
        super().__init__(scope, construct_id, disable_resource_name_hashes=True, namespace=workload.namespace)
        self.resolved = resolved
        self.workload = workload
        model, source = workload.model, workload.model.source
        labels = {"app.kubernetes.io/name": workload.name, "app.kubernetes.io/part-of": "inferstack"}
        k8s.KubeServiceAccount(
            self,
            "server-sa",
            metadata=k8s.ObjectMeta(name=resolved.server.service_account, namespace=workload.namespace, labels=labels),
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
        if resolved.writes_bucket and refs.bucket:
            k8s.KubeServiceAccount(
                self,
                "sync-sa",
                metadata=k8s.ObjectMeta(
                    name=resolved.writer_service_account, namespace=workload.namespace, labels=labels
                ),
                automount_service_account_token=False,
            )
        if resolved.sync and refs.bucket:
            ModelSyncJob(
                self,
                "model-sync",
                ModelSyncJobProps(
                    name=f"{workload.name}-model-sync",
                    namespace=workload.namespace,
                    service_account=resolved.writer_service_account,
                    bucket=refs.bucket,
                    prefix=model.bucket_prefix,
                    region=refs.region,
                    model_id=model.id,
                    revision=model.revision,
                    hf_token_secret=token,
                    node_selector={POOL_LABEL: SYSTEM_POOL},
                    priority_class=BATCH_PRIORITY_CLASS,
                    exclude=resolved.sync_excludes,
                ),
            )
        self.server = self._server(resolved, refs)

    def _engine(self, workload: WorkloadConfig, neuron: bool) -> EngineArgs:
        engine, model = workload.engine, workload.model
        parser = None
        if engine.tool_calling is not None:
            parser = engine.tool_calling.parser or model.arch.tool_call_parser
        kv = (
            neuron_kv_cache(engine.max_model_len, engine.max_num_seqs, engine.enable_prefix_caching) if neuron else None
        )
        return EngineArgs(
            tensor_parallel_size=engine.tensor_parallel_size,
            pipeline_parallel_size=engine.pipeline_parallel_size,
            gpu_memory_utilization=engine.gpu_memory_utilization,
            max_model_len=engine.max_model_len,
            max_num_seqs=engine.max_num_seqs,
            max_num_batched_tokens=engine.max_num_batched_tokens,
            dtype=engine.dtype.value,
            quantization=engine.quantization.value if engine.quantization else None,
            kv_cache_dtype=engine.kv_cache_dtype.value,
            enable_prefix_caching=engine.enable_prefix_caching,
            enable_chunked_prefill=engine.enable_chunked_prefill,
            enforce_eager=engine.enforce_eager,
            tool_call_parser=parser,
            mistral_format=model.arch.mistral_format,
            lmcache=engine.lmcache is not None,
            block_size=kv.block_size if kv else None,
            num_gpu_blocks_override=kv.num_blocks if kv else None,
            extra=engine.extra_args,
        )

    def _server(self, resolved: ResolvedWorkload, refs: StorageRefs) -> VllmServer:
        workload = resolved.config
        engine, model = workload.engine, workload.model
        plan = resolved.server.pod
        neuron = plan.accelerator is AcceleratorKind.NEURON
        engine_args = self._engine(workload, neuron)
        env: dict[str, str] = {}
        if model.source.type is not ModelSourceType.HF:
            env["HF_HUB_OFFLINE"] = "1"
        if engine.lmcache is not None:
            env |= {
                "VLLM_ATTENTION_BACKEND": "FLASHINFER",
                "PYTHONHASHSEED": "0",
                "LMCACHE_LOCAL_CPU": "True",
                "LMCACHE_MAX_LOCAL_CPU_SIZE": f"{engine.lmcache.cpu_cache_gib:g}",
                "LMCACHE_CHUNK_SIZE": str(engine.lmcache.chunk_size),
            }
        loading, init, volumes = self.loading, [], []
        image = resolved.image
        if neuron and refs.bucket:
            artifacts = artifacts_prefix(model.bucket_prefix, engine_args, image)
            env |= {"NEURON_COMPILED_ARTIFACTS": COMPILED_DIR}
            loading = ModelLoading(
                model=MODEL_DIR,
                mounts=[
                    k8s.VolumeMount(name="model", mount_path=MODEL_DIR, read_only=True),
                    k8s.VolumeMount(name="compiled", mount_path=COMPILED_DIR, read_only=True),
                ],
            )
            size = neuron_model_volume_gib(workload)
            volumes = [
                k8s.Volume(
                    name="model", empty_dir=k8s.EmptyDirVolumeSource(size_limit=k8s.Quantity.from_string(f"{size}Gi"))
                ),
                k8s.Volume(name="compiled", empty_dir=k8s.EmptyDirVolumeSource()),
            ]
            init = [
                fetch_init_container(
                    bucket=refs.bucket, model_prefix=model.bucket_prefix, artifacts=artifacts, region=refs.region
                )
            ]
            NeuronCompileJob(
                self,
                "neuron-compile",
                NeuronCompileJobProps(
                    name=f"{workload.name}-neuron-compile",
                    namespace=workload.namespace,
                    service_account=resolved.writer_service_account,
                    image=image,
                    bucket=refs.bucket,
                    model_prefix=model.bucket_prefix,
                    artifacts_prefix=artifacts,
                    region=refs.region,
                    engine=engine_args,
                    requests=plan.requests,
                    limits=plan.limits,
                    node_selector=plan.node_selector,
                    tolerations=sorted(plan.tolerations),
                    model_gib=size,
                    scratch_gib=NEURON_COMPILE_SCRATCH_GIB,
                    env={"SYNC_MARKER": f"{model.bucket_prefix}{SYNC_MARKER}"} if resolved.sync else {},
                    priority_class=BATCH_PRIORITY_CLASS,
                    scheduler_name=NEURON_SCHEDULER,
                ),
            )
        elif resolved.sync and refs.bucket:
            # Hold the server until the model-sync Job has finished, instead of crash-looping on a partial model.
            mounted = model.source.type in (ModelSourceType.S3_MOUNT, ModelSourceType.FSX)
            init = [
                wait_for_sync_container(
                    bucket=refs.bucket,
                    prefix=model.bucket_prefix,
                    region=refs.region,
                    mounted_path=loading.model if mounted else None,
                    mounts=list(loading.mounts) if mounted else None,
                )
            ]
        scaling = workload.autoscaling
        return VllmServer(
            self,
            "server",
            VllmServerProps(
                name=workload.name,
                namespace=workload.namespace,
                image=image,
                model=loading,
                served_model_name=model.name,
                engine=engine_args,
                service_account=resolved.server.service_account,
                requests=plan.requests,
                limits=plan.limits,
                node_selector=plan.node_selector,
                tolerations=sorted(plan.tolerations),
                startup_seconds=plan.startup_seconds,
                replicas=workload.replicas,
                shm_gib=workload.resources.shm_gib,
                env=env,
                init_containers=init,
                extra_volumes=volumes,
                autoscaling=Autoscaling(
                    kind=scaling.kind.value,
                    min_replicas=scaling.min_replicas,
                    max_replicas=scaling.max_replicas,
                    target_waiting_requests=scaling.target_waiting_requests,
                    prometheus_url=scaling.prometheus_url,
                )
                if scaling
                else None,
                monitoring=workload.monitoring,
                priority_class=SERVING_PRIORITY_CLASS,
                scheduler_name=NEURON_SCHEDULER if neuron else None,
            ),
        )
