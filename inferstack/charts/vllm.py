"""VllmChart: the ``vllm`` kind — one vLLM server per replica (:class:`~inferstack.constructs.vllm.VllmServer` on the
shared serving pod), on Neuron with the compile Job that stores the compiled model next to the weights."""

from __future__ import annotations

import dataclasses
from typing import Any

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.kubernetes import NEURON_SCHEDULER
from inferstack.charts.engine import autoscaling_props, chart_cache_mounts
from inferstack.charts.workload import StorageRefs, WorkloadChart, pod_placement
from inferstack.config.aibrix import AibrixConfig
from inferstack.config.engine import DEFAULT_MAX_MODEL_LEN, VllmEngineConfig, flags_version_of
from inferstack.config.workloads import ModelConfig, ModelSourceType, VllmWorkloadConfig
from inferstack.constructs.aibrix import AdapterSpec, AibrixObjects, AibrixObjectsProps, PodAutoscalerSpec
from inferstack.constructs.aibrix import pod_labels as aibrix_labels
from inferstack.constructs.batch import BATCH_PRIORITY_CLASS
from inferstack.constructs.model_source import ModelLoading
from inferstack.constructs.model_sync import SYNC_MARKER
from inferstack.constructs.neuron import (
    COMPILED_DIR,
    MODEL_DIR,
    NeuronCompileJob,
    NeuronCompileJobProps,
    artifacts_prefix,
    fetch_init_container,
    neuron_kv_cache,
)
from inferstack.constructs.pod.mounts import Mount, empty_dir
from inferstack.constructs.vllm import SERVING_PRIORITY_CLASS, EngineArgs, VllmServer, VllmServerProps
from inferstack.plan import ResolvedWorkload
from inferstack.plan.placement import NEURON_COMPILE_SCRATCH_GIB, neuron_model_volume_gib


def engine_args_of(workload: VllmWorkloadConfig, neuron: bool, image: str | None = None) -> EngineArgs:
    """The typed vLLM settings of ``workload`` as the construct's engine flags (on Neuron with the compiled KV
    layout: block size and block count), spelled for the vLLM release of ``image`` when its flag list is vendored."""
    return engine_args_for(workload.engine, workload.model, neuron, flags_version_of(image) if image else None)


def engine_args_for(
    engine: VllmEngineConfig, model: ModelConfig, neuron: bool = False, flags_version: str | None = None
) -> EngineArgs:
    """``engine`` (typed vLLM settings) of ``model`` as engine arguments; ``neuron``: with the compiled KV layout;
    ``flags_version``: the vLLM release whose boolean spellings to render (default: the ``--no-`` form)."""
    parser = None
    if engine.tool_calling is not None:
        parser = engine.tool_calling.parser or model.arch.tool_call_parser
    # The plan fills max_model_len in for every engine it sizes; an engine it does not size (on a CPU pool) gets
    # the fallback the sizing uses (ServedEngine.max_model_len).
    length = engine.max_model_len or min(DEFAULT_MAX_MODEL_LEN, model.arch.max_context)
    kv = neuron_kv_cache(length, engine.max_num_seqs, engine.enable_prefix_caching) if neuron else None
    return EngineArgs(
        tensor_parallel_size=engine.tensor_parallel_size,
        pipeline_parallel_size=engine.pipeline_parallel_size,
        gpu_memory_utilization=engine.gpu_memory_utilization,
        max_model_len=length,
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
        flags_version=flags_version,
    )


def engine_env(workload: VllmWorkloadConfig) -> dict[str, str]:
    """The engine environment the typed settings need: offline hub for bucket/image sources, LMCache settings."""
    return engine_env_for(workload.engine, workload.model)


def engine_env_for(engine: VllmEngineConfig, model: ModelConfig) -> dict[str, str]:
    """The environment ``engine`` of ``model`` needs: offline hub for bucket/image sources, LMCache settings."""
    env: dict[str, str] = {}
    if model.source.type is not ModelSourceType.HF:
        env["HF_HUB_OFFLINE"] = "1"
    if engine.lmcache is not None:
        # No VLLM_ATTENTION_BACKEND: vLLM removed it in 0.15 (PR #32812) and ignores it; LMCache needs no backend
        env |= {
            "PYTHONHASHSEED": "0",
            "LMCACHE_LOCAL_CPU": "True",
            "LMCACHE_MAX_LOCAL_CPU_SIZE": f"{engine.lmcache.cpu_cache_gib:g}",
            "LMCACHE_CHUNK_SIZE": str(engine.lmcache.chunk_size),
        }
    return env


def server_fields(resolved: ResolvedWorkload, *, scheduler_name: str | None = None) -> dict[str, Any]:
    """The server props every vLLM kind takes from its plan and config: names, identity, the serving pod's
    resources and placement (serving priority, ``scheduler_name``: default the default scheduler), startup budget,
    replicas, /dev/shm, monitoring."""
    workload, pod = resolved.config, resolved.server.pod
    assert isinstance(workload, VllmWorkloadConfig)
    return {
        "name": workload.name,
        "namespace": workload.namespace,
        "served_model_name": workload.model.name,
        "service_account": resolved.server.service_account,
        "requests": pod.requests,
        "limits": pod.limits,
        "placement": pod_placement(pod, priority_class=SERVING_PRIORITY_CLASS, scheduler_name=scheduler_name),
        "startup_seconds": pod.startup_seconds,
        "replicas": workload.replicas,
        "shm_gib": workload.resources.shm_gib,
        "monitoring": workload.monitoring,
    }


#: vLLM flags and environment for AIBrix's runtime LoRA loading (samples/adapter/base.yaml at AIBrix v0.7.0).
LORA_ENV = {"VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True"}


class VllmChart(WorkloadChart):
    """The ``vllm`` kind: the workload's storage plumbing plus its vLLM server (and Neuron compile Job)."""

    server: VllmServer

    def serve(self, resolved: ResolvedWorkload, refs: StorageRefs) -> None:
        workload = resolved.config
        assert isinstance(workload, VllmWorkloadConfig)
        model = workload.model
        plan = resolved.server.pod
        neuron = plan.accelerator is AcceleratorKind.NEURON
        image = resolved.image
        engine_args = engine_args_of(workload, neuron, image)
        env = engine_env(workload)
        loading, init = self.loading, []
        if neuron and refs.bucket:
            artifacts = artifacts_prefix(model.bucket_prefix, engine_args, image)
            env |= {"NEURON_COMPILED_ARTIFACTS": COMPILED_DIR}
            size = neuron_model_volume_gib(workload.model)
            # The fetch init container fills both emptyDirs; vLLM reads them.
            loading = ModelLoading(
                model=MODEL_DIR,
                mounts=[
                    Mount(path=MODEL_DIR, volume=empty_dir("model", size_gib=size), read_only=True),
                    Mount(path=COMPILED_DIR, volume=empty_dir("compiled"), read_only=True),
                ],
            )
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
                    # the serving pods' limits but the CPU quota: the compiler is CPU-bound, not a burst to tame
                    limits={k: v for k, v in plan.limits.items() if k != "cpu"},
                    placement=pod_placement(plan, priority_class=BATCH_PRIORITY_CLASS, scheduler_name=NEURON_SCHEDULER),
                    model_gib=size,
                    scratch_gib=NEURON_COMPILE_SCRATCH_GIB,
                    env={"SYNC_MARKER": f"{model.bucket_prefix}{SYNC_MARKER}"} if resolved.sync else {},
                ),
            )
        else:
            init = self.wait_for_model(resolved, refs)
        fields = server_fields(resolved, scheduler_name=NEURON_SCHEDULER if neuron else None)
        if workload.aibrix is not None:
            fields, engine_args, env = self._aibrix(workload, workload.aibrix, fields, engine_args, env)
        self.server = VllmServer(
            self,
            "server",
            VllmServerProps(
                **fields,
                image=image,
                model=loading,
                engine=engine_args,
                env=env,
                init_containers=init,
                extra_mounts=chart_cache_mounts(self),
                recreate=self.caches.recreate,
                autoscaling=autoscaling_props(workload.autoscaling),
            ),
        )

    def _aibrix(
        self,
        workload: VllmWorkloadConfig,
        aibrix: AibrixConfig,
        fields: dict[str, Any],
        engine_args: EngineArgs,
        env: dict[str, str],
    ) -> tuple[dict[str, Any], EngineArgs, dict[str, str]]:
        """The server under AIBrix: served as the workload's name (= its Service = the router's label), labelled
        for the router and adapter controller, LoRA loading on, adapters downloaded from the Hub (so the hub is not
        offline; the model's token reaches vLLM), ModelAdapters and the PodAutoscaler beside it."""
        lora = ["--enable-lora", "--max-loras", str(aibrix.max_loras), "--max-lora-rank", str(aibrix.max_lora_rank)]
        engine_args = dataclasses.replace(engine_args, extra=[*lora, *engine_args.extra])
        env = {**env, **LORA_ENV}
        if aibrix.adapters:
            env.pop("HF_HUB_OFFLINE", None)
        fields = {**fields, "served_model_name": workload.name, "labels": aibrix_labels(workload.name)}
        if aibrix.autoscaler is not None:
            fields["replicas"] = None  # the PodAutoscaler owns them
        token = workload.model.hf_token_secret
        if aibrix.adapters and token is not None and workload.model.source.type is not ModelSourceType.HF:
            fields["secret_env"] = {"HF_TOKEN": (token.name, token.key)}
        scaler = aibrix.autoscaler
        AibrixObjects(
            self,
            "aibrix",
            AibrixObjectsProps(
                name=workload.name,
                namespace=workload.namespace,
                model_name=workload.name,
                adapters=[
                    AdapterSpec(name=a.name, artifact=a.artifact, base_model=a.base_model) for a in aibrix.adapters
                ],
                autoscaler=PodAutoscalerSpec(
                    strategy=scaler.strategy.value,
                    min_replicas=scaler.min_replicas,
                    max_replicas=scaler.max_replicas,
                    metric=scaler.metric.value,
                    target=scaler.target,
                )
                if scaler
                else None,
                labels={"app.kubernetes.io/name": workload.name, "app.kubernetes.io/part-of": "inferstack"},
            ),
        )
        return fields, engine_args, env
