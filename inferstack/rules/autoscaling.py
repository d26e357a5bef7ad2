"""Autoscaling rules: an autoscaler inferstack renders must be able to act.

* AUTOSCALING-ZERO — KEDA scales on the engine's queue gauge (vLLM's ``vllm:num_requests_waiting``, SGLang's
  ``sglang:num_queue_reqs``, TGI's ``tgi_queue_size``), which only running pods report; at zero replicas the query
  is empty and KEDA never scales up again.
* AUTOSCALING-HPA-ADAPTER — an HPA on that pods metric (``vllm_num_requests_waiting``, ``sglang_num_queue_reqs``,
  ``tgi_queue_size``) needs a custom-metrics adapter serving it (inferstack installs none): without one the HPA
  reports ``FailedGetPodsMetric`` and never scales.
* AUTOSCALING-METRICS — both scale on what Prometheus scrapes from the workload's PodMonitor: with
  ``monitoring: false`` (or no Prometheus at the default URL) there is no metric to scale on.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.catalog.kubernetes import PROMETHEUS_URL
from inferstack.catalog.metrics import SGLANG_QUEUE, TGI_QUEUE
from inferstack.config.engine import AutoscalerKind
from inferstack.config.model import InferstackConfig
from inferstack.rules.base import Finding, Rule

#: The queue gauge each autoscalable kind scales on (what the engine exports; inferstack.catalog.metrics).
QUEUE_METRICS = {"vllm": "vllm:num_requests_waiting", "sglang": SGLANG_QUEUE, "tgi": TGI_QUEUE}

ZERO = "AUTOSCALING-ZERO"
HPA_ADAPTER = "AUTOSCALING-HPA-ADAPTER"
METRICS = "AUTOSCALING-METRICS"


def check_zero(config: InferstackConfig) -> Iterator[Finding]:
    for index, workload in enumerate(config.workloads):
        scaling = workload.autoscaling
        if scaling is not None and scaling.kind is AutoscalerKind.KEDA and scaling.min_replicas == 0:
            yield Finding(
                rule=ZERO,
                path=f"workloads[{index}].autoscaling.min_replicas",
                message=f"0 — KEDA scales on {QUEUE_METRICS.get(workload.kind, 'the engine queue')}, which only "
                "running pods report; at zero replicas the metric is gone and nothing ever scales the workload up "
                "again",
                fix="use min_replicas: 1 or more (scale-to-zero needs a request-driven activator, e.g. KServe with "
                "Knative)",
            )


def check_hpa_adapter(config: InferstackConfig) -> Iterator[Finding]:
    if config.observability.custom_metrics_adapter:
        return
    for index, workload in enumerate(config.workloads):
        scaling = workload.autoscaling
        if scaling is not None and scaling.kind is AutoscalerKind.HPA:
            yield Finding(
                rule=HPA_ADAPTER,
                path=f"workloads[{index}].autoscaling.kind",
                message="hpa — the HPA reads the pods metric "
                f"{QUEUE_METRICS.get(workload.kind, 'of the engine queue').replace(':', '_')} from the custom metrics "
                "API, and no custom-metrics adapter is declared; the HPA would never scale",
                fix="use kind: keda (queries Prometheus directly), or install an adapter that serves the metric and "
                "set observability.custom_metrics_adapter: true",
            )


def check_metrics(config: InferstackConfig) -> Iterator[Finding]:
    observability = config.observability
    for index, workload in enumerate(config.workloads):
        scaling = workload.autoscaling
        if scaling is None:
            continue
        path = f"workloads[{index}]"
        if not workload.monitoring:
            yield Finding(
                rule=METRICS,
                path=f"{path}.monitoring",
                message=f"false — the autoscaler scales on {QUEUE_METRICS.get(workload.kind, 'the engine queue')}, "
                "which nothing scrapes without the workload's PodMonitor",
                fix="set monitoring: true, or remove autoscaling",
            )
        elif (
            scaling.kind is AutoscalerKind.KEDA
            and not observability.install_prometheus_stack
            and scaling.prometheus_url == PROMETHEUS_URL
        ):
            yield Finding(
                rule=METRICS,
                path=f"{path}.autoscaling.prometheus_url",
                message=f"{scaling.prometheus_url} is the Prometheus inferstack installs, but "
                "observability.install_prometheus_stack is false",
                fix="point prometheus_url at your cluster's Prometheus, or set install_prometheus_stack: true",
            )


RULES = (
    Rule(id=ZERO, title="KEDA never scales a workload to zero replicas on its own metrics", check=check_zero),
    Rule(id=HPA_ADAPTER, title="An HPA has a custom-metrics adapter to read from", check=check_hpa_adapter),
    Rule(id=METRICS, title="Autoscaled workloads are scraped by a Prometheus", check=check_metrics),
)
