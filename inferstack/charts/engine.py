"""What every single-node engine chart (Triton, SGLang, TGI, Ollama) takes from the plan: the server pod's identity,
resources, placement, startup budget and replicas, and the primary model's volumes and sync wait."""

from __future__ import annotations

from inferstack.charts.workload import StorageRefs, WorkloadChart, pod_placement
from inferstack.config.engine import AutoscalingConfig
from inferstack.config.workloads import ModelConfig, ModelSourceType
from inferstack.constructs.engine import EnginePlacement
from inferstack.constructs.pod import Autoscaling
from inferstack.constructs.pod.mounts import Mount
from inferstack.constructs.vllm import SERVING_PRIORITY_CLASS
from inferstack.plan import ResolvedWorkload


def engine_placement(chart: WorkloadChart, resolved: ResolvedWorkload, refs: StorageRefs) -> EnginePlacement:
    """The server role's pod as :class:`EnginePlacement`: serving priority, the model's volumes and mounts (none
    without a bucket model) and the compile cache's, the wait for its sync Job."""
    workload, role, pod = resolved.config, resolved.server, resolved.server.pod
    loading = chart.loading
    return EnginePlacement(
        name=workload.name,
        namespace=workload.namespace,
        service_account=role.service_account,
        requests=pod.requests,
        limits=pod.limits,
        placement=pod_placement(pod, priority_class=SERVING_PRIORITY_CLASS),
        startup_seconds=pod.startup_seconds,
        replicas=workload.replicas,
        shm_gib=workload.resources.shm_gib,
        monitoring=workload.monitoring,
        mounts=[*(loading.mounts if loading else ()), *chart_cache_mounts(chart)],
        init_containers=chart.wait_for_model(resolved, refs) if resolved.models else (),
    )


def chart_cache_mounts(chart: WorkloadChart) -> list[Mount]:
    """The serving container's cache mounts besides the model's: the compile cache, when the workload has one."""
    mount = chart.caches.compile_mount
    return [mount] if mount is not None else []


def autoscaling_props(scaling: AutoscalingConfig | None) -> Autoscaling | None:
    """``workloads[].autoscaling`` as the serving pod's :class:`Autoscaling` (None without it)."""
    if scaling is None:
        return None
    return Autoscaling(
        kind=scaling.kind.value,
        min_replicas=scaling.min_replicas,
        max_replicas=scaling.max_replicas,
        target_waiting_requests=scaling.target_waiting_requests,
        prometheus_url=scaling.prometheus_url,
    )


def hub_env(model: ModelConfig) -> dict[str, str]:
    """``HF_HUB_OFFLINE=1`` unless the engine downloads from the Hub (mounted and image sources are complete)."""
    return {} if model.source.type is ModelSourceType.HF else {"HF_HUB_OFFLINE": "1"}


def optional_flags(values: dict[str, object]) -> list[str]:
    """``flag value`` pairs of the values that are set (floats without trailing zeros), in the given order."""
    args: list[str] = []
    for flag, value in values.items():
        if value is not None:
            args += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    return args
