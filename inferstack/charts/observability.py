"""ObservabilityChart: the Grafana dashboards (in Prometheus' namespace) and each workload's PrometheusRule, for
the kinds whose metrics inferstack knows (:attr:`inferstack.config.kinds.WorkloadKind.metrics`)."""

from __future__ import annotations

from collections.abc import Sequence

import cdk8s
from constructs import Construct

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.kubernetes import PROMETHEUS_NAMESPACE
from inferstack.catalog.metrics import DCGM, NIM, RAY_VLLM, VLLM, EngineMetrics
from inferstack.config.alerts import AlertTargets
from inferstack.config.kinds import kind_of
from inferstack.constructs.monitoring import WORKLOAD_SERIES_LABEL
from inferstack.constructs.observability import (
    Dashboard,
    DashboardProps,
    ServedWorkload,
    ServingTargets,
)
from inferstack.plan import ResolvedWorkload

#: (uid, title, engine) of each serving dashboard.
DASHBOARDS: tuple[tuple[str, str, EngineMetrics], ...] = (
    ("vllm", "inferstack · vLLM", VLLM),
    ("ray-serve-llm", "inferstack · Ray Serve LLM", RAY_VLLM),
    ("nim", "inferstack · NVIDIA NIM", NIM),
)
GPU_DASHBOARD = ("gpus", "inferstack · GPUs (DCGM)")


def _targets(targets: AlertTargets) -> ServingTargets:
    return ServingTargets(**targets.model_dump())


def _selector(workload: ResolvedWorkload, metrics: EngineMetrics) -> dict[str, str]:
    return {"namespace": workload.namespace, series_label(metrics): workload.name}


def series_label(metrics: EngineMetrics) -> str:
    """The label of ``metrics``' series that names the workload: the PodMonitor's copy of ``app.kubernetes.io/name``;
    NIM's ``service`` (the operator's ServiceMonitor scrapes the Service named after the NIMService)."""
    return "service" if metrics is NIM else WORKLOAD_SERIES_LABEL


def served_workload(workload: ResolvedWorkload) -> ServedWorkload | None:
    """``workload`` as the dashboards and alerts see it, or None when its metrics are unknown or monitoring is off."""
    metrics = kind_of(workload.kind).metrics
    if metrics is None or not workload.config.monitoring:
        return None
    return ServedWorkload(
        name=workload.name,
        namespace=workload.namespace,
        metrics=metrics,
        selector=_selector(workload, metrics),
        gpus=workload.pool.accelerator is AcceleratorKind.NVIDIA,
        targets=_targets(workload.alerts),
    )


def served_workloads(workloads: Sequence[ResolvedWorkload]) -> list[ServedWorkload]:
    """The ``workloads`` with monitoring on whose engine's series inferstack knows."""
    return [w for w in map(served_workload, workloads) if w is not None]


class ObservabilityChart(cdk8s.Chart):
    """One dashboard per engine family present and one for the GPUs, a row per workload (in Prometheus'
    namespace, where Grafana runs). Each workload's alerts come with its own chart (:class:`WorkloadChart`)."""

    def __init__(
        self, scope: Construct, construct_id: str, workloads: Sequence[ServedWorkload], targets: AlertTargets
    ) -> None:
        super().__init__(scope, construct_id, disable_resource_name_hashes=True)
        lines = _targets(targets)
        for uid, title, metrics in DASHBOARDS:
            family = [w for w in workloads if w.metrics is metrics]
            if family:
                props = DashboardProps(
                    uid=uid,
                    title=title,
                    namespace=PROMETHEUS_NAMESPACE,
                    metrics=metrics,
                    series_label=series_label(metrics),
                    workloads=[w.name for w in family],
                    targets=lines,
                    gpus=any(w.gpus for w in family),
                )
                Dashboard(self, f"dashboard-{uid}", props)
        gpus = [w for w in workloads if w.gpus]
        if gpus:
            uid, title = GPU_DASHBOARD
            props = DashboardProps(
                uid=uid,
                title=title,
                namespace=PROMETHEUS_NAMESPACE,
                metrics=DCGM,
                series_label=WORKLOAD_SERIES_LABEL,
                workloads=[w.name for w in gpus],
                targets=lines,
                gpu_only=True,
            )
            Dashboard(self, f"dashboard-{uid}", props)
