"""What a serving pod asks the scheduler for, and what a node of a pool can give: the shared model of the
scheduling rules and the VllmServer construct (both derive requests from here, so they cannot disagree)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from inferstack.catalog.instances import INSTANCE_TYPES, AcceleratorKind, InstanceType
from inferstack.catalog.kubernetes import (
    ACCELERATOR_LABEL,
    ACCELERATOR_RESOURCE,
    ACCELERATOR_TAINT_EFFECT,
    ACCELERATOR_TAINT_KEY,
    ACCELERATOR_TAINT_VALUE,
    EFA_LABEL,
    EFA_RESOURCE,
    GPU_OPERATOR_OPERANDS_LABEL,
    POOL_LABEL,
)
from inferstack.config.compute import AcceleratedNodeGroupConfig, KarpenterPoolConfig, Taint
from inferstack.config.model import InferstackConfig
from inferstack.config.workloads import ModelConfig, ModelSourceType, WorkloadBase

#: CPU the kubelet reservation and node DaemonSets (CNI, kube-proxy, device plugins, DCGM, NFD) take, vCPU.
NODE_CPU_OVERHEAD = 1.0
#: Memory they take: fixed part (GiB) and the kubelet's share of the node.
NODE_MEMORY_OVERHEAD_GIB = 1.5
NODE_MEMORY_OVERHEAD_FRACTION = 0.05

#: Conservative sustained read rates per source, GiB/s (model load before the engine is ready).
LOAD_GIB_PER_SECOND = {
    ModelSourceType.S3: 1.0,  # Run:ai streamer, 16 concurrent ranged reads
    ModelSourceType.S3_MOUNT: 0.4,  # Mountpoint, first read through FUSE
    ModelSourceType.FSX: 1.0,  # Lustre, PERSISTENT_2
    ModelSourceType.IMAGE: 2.0,  # local disk after the image pull
    ModelSourceType.HF: 0.1,  # internet download through NAT
    # EFS, the slower of its modes: bursting file systems under 1 TiB burst at 100 MiB/s (elastic ones read faster
    # per client; its per-client limit is not confirmed offline) — per pod: pods starting together on one bursting
    # file system share its rate, which the safety factor covers for about two
    ModelSourceType.EFS: 0.1,
}
#: Engine start besides reading weights: CUDA graphs, profiling, warm-up (GPU); graph load (Neuron, pre-compiled).
ENGINE_START_SECONDS = {AcceleratorKind.NVIDIA: 180, AcceleratorKind.NEURON: 600, AcceleratorKind.NONE: 120}
#: A multi-node group besides: every pod of the group scheduled and pulled, the workers joined to the leader's
#: store, NCCL communicators set up across nodes, seconds.
GROUP_START_SECONDS = 180
STARTUP_SAFETY = 2.0


def allocatable_cpu(instance: InstanceType) -> float:
    return instance.vcpu - NODE_CPU_OVERHEAD


def allocatable_memory_gib(instance: InstanceType) -> float:
    return instance.memory_gib * (1 - NODE_MEMORY_OVERHEAD_FRACTION) - NODE_MEMORY_OVERHEAD_GIB


def largest_system_node(config: InferstackConfig) -> InstanceType:
    """The system node group's instance type with the most allocatable CPU (then memory): what a pod placed on the
    system nodes (a Ray head, a router) must fit."""
    system = [INSTANCE_TYPES[t] for t in config.cluster.system_nodes.instance_types]
    return max(system, key=lambda t: (allocatable_cpu(t), allocatable_memory_gib(t)))


def pool_instances(pool: AcceleratedNodeGroupConfig | KarpenterPoolConfig) -> list[InstanceType]:
    if isinstance(pool, KarpenterPoolConfig):
        return pool.instances
    return [pool.instance]


def pool_labels(pool: AcceleratedNodeGroupConfig | KarpenterPoolConfig) -> dict[str, str]:
    """The labels a pool's nodes carry (what serving pods' nodeSelectors match): the pool name, the pool's own
    ``labels``, the accelerator kind on accelerated pools and ``efa: true`` on EFA pools; on Bottlerocket NVIDIA
    nodes, which run the OS's own device plugin, the label that keeps the GPU operator's operands off. The node
    group, the Karpenter NodePool and the scheduling rules all read this."""
    labels = {POOL_LABEL: pool.name, **pool.labels}
    if pool.accelerator is not AcceleratorKind.NONE:
        labels[ACCELERATOR_LABEL] = pool.accelerator.value
    if pool.accelerator is AcceleratorKind.NVIDIA and pool.boots_bottlerocket:
        labels[GPU_OPERATOR_OPERANDS_LABEL] = "false"
    if pool.efa:
        labels[EFA_LABEL] = "true"
    return labels


def pool_node_taints(pool: AcceleratedNodeGroupConfig | KarpenterPoolConfig) -> tuple[Taint, ...]:
    """The taints a pool's nodes carry, in order: the accelerator taint (``<resource>=true:NoSchedule``) on
    accelerated pools first, then the pool's own ``taints``. The node group, the Karpenter NodePool and the
    scheduling rules all read this."""
    own = tuple(pool.taints)
    if pool.accelerator is AcceleratorKind.NONE:
        return own
    accelerator = Taint(
        key=ACCELERATOR_TAINT_KEY[pool.accelerator], value=ACCELERATOR_TAINT_VALUE, effect=ACCELERATOR_TAINT_EFFECT
    )
    return (accelerator, *own)


def pool_taints(pool: AcceleratedNodeGroupConfig | KarpenterPoolConfig) -> set[tuple[str, str]]:
    """``(key, effect)`` of every taint of :func:`pool_node_taints` a pod must tolerate to run on the pool
    (``PreferNoSchedule`` never blocks scheduling)."""
    return {(t.key, t.effect) for t in pool_node_taints(pool) if t.effect != "PreferNoSchedule"}


@dataclass(frozen=True, kw_only=True)
class PodPlan:
    """Resources, placement and probes of one serving pod."""

    accelerator: AcceleratorKind
    accelerators: int
    """Devices requested (GPUs, or Neuron devices) — requests equal limits."""
    neuron_cores: int
    cpu: float
    memory_gib: float
    cpu_limit: float | None = None
    """vCPU limit (``resources.cpu_limit``); None: no CPU limit."""
    memory_limit_gib: float = 0
    """Memory limit, GiB: ``resources.memory_limit_gib``, else the request. 0: none planned (a hand-made plan)."""
    efa: int
    node_selector: dict[str, str]
    tolerations: frozenset[tuple[str, str]]
    """``(key, effect)`` pairs."""
    startup_seconds: int
    """What the startup probe allows: ``startup_timeout_seconds`` if set, else :attr:`estimated_startup_seconds`."""
    estimated_startup_seconds: int
    """The estimate of model load + engine start (× safety)."""
    limits: dict[str, str] = field(default_factory=dict)
    requests: dict[str, str] = field(default_factory=dict)

    @property
    def accelerator_resource(self) -> str | None:
        return ACCELERATOR_RESOURCE.get(self.accelerator)


def accelerators_for(ranks: int, accelerator: AcceleratorKind, cores_per_device: int) -> int:
    """Devices a pod of ``ranks`` ranks needs: one GPU per rank, or the ranks' NeuronCores in whole Neuron devices."""
    if accelerator is AcceleratorKind.NEURON:
        return math.ceil(ranks / max(cores_per_device, 1))
    return ranks if accelerator is AcceleratorKind.NVIDIA else 0


def host_instance(instances: list[InstanceType], accelerators: int) -> InstanceType | None:
    """The smallest instance of the pool that holds ``accelerators`` devices (by devices, then vCPU)."""
    fitting = [t for t in instances if t.accelerator_count >= accelerators]
    return min(fitting, key=lambda t: (t.accelerator_count, t.vcpu, t.name)) if fitting else None


def startup_seconds(model: ModelConfig, accelerator: AcceleratorKind, nodes: int = 1) -> int:
    """Estimated time from container start to ready, times a safety factor, in whole minutes. A group of ``nodes``
    pods then forms the group. Every node reads the whole checkpoint, not its pipeline stage's share: vLLM 0.19's
    safetensors iterator reads every tensor of every file on every rank (model_loader/weight_utils.py
    ``safetensors_weights_iterator``; only expert-parallel experts are skipped)."""
    load = model.arch.weights_gib / LOAD_GIB_PER_SECOND[model.source.type]
    group = GROUP_START_SECONDS if nodes > 1 else 0
    return int(math.ceil((load + ENGINE_START_SECONDS[accelerator] + group) * STARTUP_SAFETY / 60) * 60)


def pod_plan(
    config: InferstackConfig,
    workload: WorkloadBase,
    *,
    ranks: int,
    nodes: int = 1,
    min_memory_gib: float = 0,
    model: ModelConfig | None = None,
    startup_estimate_seconds: int | None = None,
) -> PodPlan:
    """The pod ``workload`` runs as on its pool, holding ``ranks`` ranks (GPUs, or NeuronCores), in a group of
    ``nodes`` pods per replica (1: a single-node server). ``min_memory_gib``: a floor under the derived memory
    request (e.g. an engine's CPU KV cache). Default 0. ``model``: the model whose load the startup estimate
    covers. Default: the workload's primary model. ``startup_estimate_seconds``: the estimate itself, for an engine
    that loads no bucket model (Ollama). Default: estimated from the model."""
    pool = config.pool(workload.pool)
    instances = pool_instances(pool)
    accelerator = pool.accelerator
    cores = instances[0].neuron_cores_per_device if accelerator is AcceleratorKind.NEURON else 0
    devices = accelerators_for(ranks, accelerator, cores)
    candidates = [t for t in instances if t.efa_supported] if workload.efa else instances
    host = (
        host_instance(candidates, devices)
        or host_instance(instances, devices)
        or max(instances, key=lambda t: t.accelerator_count)
    )
    share = devices / host.accelerator_count if host.accelerator_count else 1.0
    resources = workload.resources
    cpu = resources.cpu or max(1.0, math.floor(allocatable_cpu(host) * share))
    memory = resources.memory_gib or max(2.0, math.floor(allocatable_memory_gib(host) * share * 0.9))
    if resources.memory_gib is None:
        memory = max(memory, min_memory_gib)
    # EFA: the pod's share of the node's devices, as of its GPUs (a 4-GPU pod on p5.48xlarge: 16 of 32), so pods
    # that hold part of a node's GPUs (prefill and decode at TP 4) can share it; at least one, so a pool without
    # EFA cannot match.
    efa = max(math.floor(host.max_efa_interfaces * min(share, 1.0)), 1) if workload.efa else 0
    selector = {POOL_LABEL: pool.name}
    tolerations = frozenset(pool_taints(pool))
    memory_limit = resources.memory_limit_gib if resources.memory_limit_gib is not None else memory
    requests = {"cpu": _cpu(cpu), "memory": f"{memory:g}Gi"}
    limits = {"memory": f"{memory_limit:g}Gi"}
    if resources.cpu_limit is not None:
        limits["cpu"] = _cpu(resources.cpu_limit)
    resource = ACCELERATOR_RESOURCE.get(accelerator)
    if resource and devices:
        requests[resource] = limits[resource] = str(devices)
    if efa:
        requests[EFA_RESOURCE] = limits[EFA_RESOURCE] = str(efa)
    estimate = startup_estimate_seconds or startup_seconds(model or workload.model_entries[0][1], accelerator, nodes)
    return PodPlan(
        accelerator=accelerator,
        accelerators=devices,
        neuron_cores=devices * cores,
        cpu=cpu,
        memory_gib=memory,
        cpu_limit=resources.cpu_limit,
        memory_limit_gib=memory_limit,
        efa=efa,
        node_selector=selector,
        tolerations=tolerations,
        startup_seconds=workload.startup_timeout_seconds or estimate,
        estimated_startup_seconds=estimate,
        requests=requests,
        limits=limits,
    )


def _cpu(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{int(value * 1000)}m"


def fits_node(plan: PodPlan, pool: AcceleratedNodeGroupConfig | KarpenterPoolConfig) -> tuple[bool, str]:
    """Whether some node of ``pool`` can run the pod; when not, why (the first reason that blocks it)."""
    labels = pool_labels(pool)
    missing = {k: v for k, v in plan.node_selector.items() if labels.get(k) != v}
    if missing:
        return False, f"its nodes lack the labels {missing}"
    untolerated = pool_taints(pool) - plan.tolerations
    if untolerated:
        return False, f"the pod does not tolerate taints {', '.join(f'{k}:{e}' for k, e in sorted(untolerated))}"
    if plan.accelerator is not pool.accelerator and plan.accelerators:
        return False, f"it offers {pool.accelerator.value} nodes, the pod needs {plan.accelerator.value}"
    instances = pool_instances(pool)
    best = max(instances, key=lambda t: t.accelerator_count)
    if plan.accelerators > best.accelerator_count:
        return False, (
            f"it offers at most {best.accelerator_count} {plan.accelerator_resource} per node "
            f"({best.name}), the pod requests {plan.accelerators}"
        )
    hosts = [t for t in instances if t.accelerator_count >= plan.accelerators]
    for instance in hosts:
        if (
            plan.cpu <= allocatable_cpu(instance)
            and plan.memory_gib <= allocatable_memory_gib(instance)
            and plan.efa <= instance.max_efa_interfaces
        ):
            return True, instance.name
    biggest = max(hosts, key=lambda t: (t.vcpu, t.memory_gib))
    if plan.efa > biggest.max_efa_interfaces:
        return False, f"its nodes have at most {biggest.max_efa_interfaces} EFA devices, the pod requests {plan.efa}"
    return False, (
        f"the pod requests {plan.cpu:g} vCPU / {plan.memory_gib:g} GiB; the largest node that holds its "
        f"accelerators ({biggest.name}) can give {allocatable_cpu(biggest):g} vCPU / "
        f"{allocatable_memory_gib(biggest):.0f} GiB"
    )


#: Compiler scratch of the Neuron compile Job (NxD Inference work dir + Neuron compile cache), GiB.
NEURON_COMPILE_SCRATCH_GIB = 200


def neuron_model_volume_gib(model: ModelConfig) -> int:
    """Local copy of the weights on a Neuron node (server and compile Job), GiB: weights + 30 % + 20."""
    return int(model.arch.weights_gib * 1.3) + 20
