"""The vLLM engines a config serves, and the memory plan of each: one computation that the plan (the
``max_model_len`` default), the serving rules and ``inferstack plan`` all read.

An engine is a ``vllm`` / ``vllm_multinode`` workload, one model (or one prefill/decode side) of a ``ray_serve``
app, a ``triton`` or ``kserve`` server, or one worker role of a ``dynamo`` graph. Its memory plan is for one rank on
the smallest instance of its pool that holds a pod's ranks (a GPU, or a NeuronCore's share of a Neuron device)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from inferstack.catalog.engine_flags import vllm_version_of_image
from inferstack.catalog.images import image_facts
from inferstack.catalog.instances import INSTANCE_TYPES, AcceleratorKind, InstanceType
from inferstack.catalog.versions import ENGINE_VLLM_VERSIONS, NEURON_SERVING_DEVICES
from inferstack.config.dynamo import DynamoWorkloadConfig
from inferstack.config.engine import DEFAULT_MAX_MODEL_LEN, VllmEngineConfig
from inferstack.config.kinds import kind_of
from inferstack.config.kserve import KServeWorkloadConfig
from inferstack.config.model import InferstackConfig
from inferstack.config.ray_serve import RayServeWorkloadConfig
from inferstack.config.triton import TritonWorkloadConfig
from inferstack.config.workloads import ModelConfig, VllmWorkloadConfig, WorkloadBase
from inferstack.sizing.model import SizingInput, SizingResult, size
from inferstack.sizing.neuron import NeuronSizingInput, compiled_kv_blocks, size_neuron


@dataclass(frozen=True)
class ServedEngine:
    """One vLLM engine: a ``vllm`` / ``vllm_multinode`` workload, one model (or one prefill/decode side) of a
    ``ray_serve`` app, or one worker role of a ``dynamo`` graph. Fix paths are ``<path>.engine.…``."""

    index: int
    """Of the workload in ``workloads``."""
    workload: WorkloadBase
    model: ModelConfig
    engine: VllmEngineConfig
    nodes: int = 1
    """Nodes one replica spans."""
    multinode: bool = False
    """The workload may move to kind ``vllm_multinode`` (a single-node ``vllm`` workload, or one already)."""
    accelerator: AcceleratorKind = AcceleratorKind.NVIDIA
    """Of the workload's pool. Default NVIDIA."""

    @property
    def pool(self) -> str:
        return self.workload.pool

    @property
    def workload_path(self) -> str:
        return f"workloads[{self.index}]"

    @property
    def ranks(self) -> int:
        return self.engine.tensor_parallel_size * self.engine.pipeline_parallel_size

    @property
    def ranks_per_pod(self) -> int:
        return self.ranks // self.nodes

    @property
    def max_model_len(self) -> int:
        """The engine's ``max_model_len``; :data:`DEFAULT_MAX_MODEL_LEN` (capped at the model's context) while
        the plan has not yet filled in the default (:func:`inferstack.plan.context.with_context_defaults`)."""
        if self.engine.max_model_len is not None:
            return self.engine.max_model_len
        return min(DEFAULT_MAX_MODEL_LEN, self.model.arch.max_context)


def engines(config: InferstackConfig) -> Iterator[tuple[str, ServedEngine]]:
    """``(path, engine)`` of every vLLM engine on an accelerated pool (``path`` + ``.engine`` is its settings) —
    multi-node ones on GPU pools only (MULTINODE-ACCELERATOR refuses the others)."""
    for index, workload in enumerate(config.workloads):
        accelerator = config.pool(workload.pool).accelerator
        if accelerator is AcceleratorKind.NONE:
            continue
        path = f"workloads[{index}]"
        if isinstance(workload, VllmWorkloadConfig):
            if workload.nodes > 1 and accelerator is not AcceleratorKind.NVIDIA:
                continue
            yield (
                path,
                ServedEngine(
                    index,
                    workload,
                    workload.model,
                    workload.engine,
                    workload.nodes,
                    multinode=True,
                    accelerator=accelerator,
                ),
            )
        elif isinstance(workload, RayServeWorkloadConfig):
            pd = workload.prefill_decode
            if pd is not None:
                model = workload.models[0].model
                for side, engine in (("prefill", pd.prefill.engine), ("decode", pd.decode.engine)):
                    yield (
                        f"{path}.prefill_decode.{side}",
                        ServedEngine(
                            index, workload, model, engine, workload.replica_pods(engine), accelerator=accelerator
                        ),
                    )
            else:
                for position, served in enumerate(workload.models):
                    yield (
                        f"{path}.models[{position}]",
                        ServedEngine(
                            index,
                            workload,
                            served.model,
                            served.engine,
                            workload.replica_pods(served.engine),
                            accelerator=accelerator,
                        ),
                    )
        elif isinstance(workload, TritonWorkloadConfig | KServeWorkloadConfig):
            yield path, ServedEngine(index, workload, workload.model, workload.engine, accelerator=accelerator)
        elif isinstance(workload, DynamoWorkloadConfig):
            for name, role in workload.roles.items():
                yield (
                    f"{path}.{workload.role_path(name)}",
                    ServedEngine(index, workload, workload.model, role.engine, accelerator=accelerator),
                )


def memory_per_rank_gib(instance: InstanceType) -> float:
    """Memory one TP rank sees: a GPU, or one NeuronCore's share of a Neuron device."""
    if instance.accelerator is AcceleratorKind.NEURON:
        return instance.accelerator_memory_gib / instance.neuron_cores_per_device
    return instance.accelerator_memory_gib


def ranks_per_node(instance: InstanceType) -> int:
    """TP ranks one node holds: its GPUs, or its NeuronCores."""
    if instance.accelerator is AcceleratorKind.NEURON:
        return instance.neuron_cores
    return instance.accelerator_count


def sizing_for(
    workload: ServedEngine, instance: InstanceType, tp: int | None = None, max_model_len: int | None = None
) -> SizingResult:
    """The memory plan of one rank of ``workload`` on ``instance`` (a GPU, or a NeuronCore: the Neuron model);
    ``tp`` / ``max_model_len`` instead of the engine's."""
    if instance.accelerator is AcceleratorKind.NEURON:
        return size_neuron(neuron_sizing_input(workload, instance, tp, max_model_len))
    return size(sizing_input(workload, instance, tp, max_model_len))


def neuron_sizing_input(
    workload: ServedEngine, instance: InstanceType, tp: int | None, max_model_len: int | None
) -> NeuronSizingInput:
    engine = workload.engine
    length = max_model_len or workload.max_model_len
    return NeuronSizingInput(
        model=workload.model.arch,
        core_memory_gib=memory_per_rank_gib(instance),
        tensor_parallel_size=tp or engine.tensor_parallel_size,
        max_model_len=length,
        max_num_seqs=engine.max_num_seqs,
        kv_blocks=compiled_kv_blocks(length, engine.max_num_seqs, engine.enable_prefix_caching),
        quantization=engine.quantization.value if engine.quantization else None,
        kv_cache_dtype=engine.kv_cache_dtype.value,
    )


def sizing_input(
    workload: ServedEngine, instance: InstanceType, tp: int | None = None, max_model_len: int | None = None
) -> SizingInput:
    engine = workload.engine
    length = max_model_len or workload.max_model_len
    return SizingInput(
        max_num_seqs=engine.max_num_seqs,
        enforce_eager=engine.enforce_eager,
        engine_version=engine_release(workload),
        model=workload.model.arch,
        accelerator_memory_gib=memory_per_rank_gib(instance),
        tensor_parallel_size=tp or engine.tensor_parallel_size,
        pipeline_parallel_size=engine.pipeline_parallel_size,
        gpu_memory_utilization=engine.gpu_memory_utilization,
        max_model_len=length,
        max_num_batched_tokens=min(engine.max_num_batched_tokens, length)
        if max_model_len
        else engine.max_num_batched_tokens,
        quantization=engine.quantization.value if engine.quantization else None,
        kv_cache_dtype=engine.kv_cache_dtype.value,
    )


def engine_release(workload: ServedEngine) -> str:
    """The vLLM release the engine runs (its sizing profile): read from a ``vllm`` workload's image tag, the catalog's
    for the other kinds' images, the pinned GPU engine's otherwise."""
    config = workload.workload
    engine_image = kind_of(config).engine_image
    if engine_image is not None:
        image = engine_image(config, workload.accelerator)
        facts = image_facts(image)
        found = facts.vllm_version if facts is not None else vllm_version_of_image(image)
        if found is not None:
            return found
        if facts is not None and facts.engine == "dynamo":
            return ENGINE_VLLM_VERSIONS["dynamo-vllm"]  # another 1.4 runtime: the catalog's is the nearest known
        if isinstance(config, RayServeWorkloadConfig):
            return ENGINE_VLLM_VERSIONS["ray-llm"]  # an image of its own: the pinned Ray's vLLM is the nearest known
    return ENGINE_VLLM_VERSIONS["vllm-gpu"]


def serving_instances(accelerator: AcceleratorKind) -> list[InstanceType]:
    """The catalog's instance types with ``accelerator`` that inferstack serves on (GPUs; for Neuron the devices of
    :data:`~inferstack.catalog.versions.NEURON_SERVING_DEVICES`): what a fix may name as "a bigger instance"."""
    return [
        t
        for t in INSTANCE_TYPES.values()
        if t.accelerator is accelerator
        and t.accelerator_count
        and (accelerator is not AcceleratorKind.NEURON or t.accelerator_model in NEURON_SERVING_DEVICES)
    ]
