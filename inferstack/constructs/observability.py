"""Grafana dashboards (ConfigMaps the kube-prometheus-stack Grafana sidecar loads) and PrometheusRule alerts for
serving engines, built from the series the pinned engine exports (:mod:`inferstack.catalog.metrics`).

Every query selects one workload: vLLM and Ray pods by the ``app_kubernetes_io_name`` label the PodMonitor copies
from the pod (``podTargetLabels``), NIM by the ``service`` label of the operator's ServiceMonitor, GPUs by the
``exported_pod`` of the DCGM exporter's series.

Grafana's sidecar (kube-prometheus-stack 88.5.3 values: ``grafana.sidecar.dashboards`` label ``grafana_dashboard:
"1"``, ``searchNamespace: ALL``) loads every ConfigMap so labelled. The PrometheusRule follows the
``monitoring.coreos.com/v1`` CRD (prometheus-operator: ``spec.groups[].name`` and ``rules[].expr`` required, one of
``alert`` / ``record``, durations ``^(0|([0-9]+(ms|s|m|h|d|w|y))+)$``); that CRD is not vendored here, so
:func:`check_rule_groups` checks those constraints itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import cdk8s
from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.metrics import GPU_SERIES, EngineMetrics
from inferstack.constructs import validation as check
from inferstack.constructs.promql import metric_names

DASHBOARD_LABEL = {"grafana_dashboard": "1"}
_DURATION = re.compile(r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$")
#: Rate window of every query.
WINDOW = "5m"


@dataclass(frozen=True, kw_only=True)
class ServingTargets:
    """The targets seed 001 names for a serving engine (units in the names)."""

    ttft_seconds: float = 0.5
    """p95 time to first token above which ``InferstackTimeToFirstTokenHigh`` fires (after 10 minutes); the TTFT
    panel's red line, seconds. Default 0.5."""
    inter_token_seconds: float = 0.05
    """p95 inter-token latency above which ``InferstackInterTokenLatencyHigh`` fires (after 10 minutes); the panel's
    red line, seconds. Default 0.05."""
    kv_cache_max: float = 0.9
    """KV-cache usage (0–1, the fullest pod) above which ``InferstackKvCacheNearlyFull`` fires (after 10 minutes);
    the panel's red line. Default 0.9."""
    queue_max: int = 100
    """Waiting requests (summed over the pods) above which ``InferstackQueueDeep`` fires (after 5 minutes); the queue
    panel's red line. Default 100."""
    gpu_utilization_min: float = 0.80
    """Mean GPU utilisation (0–1) below which ``InferstackGpuUnderused`` fires (after 30 minutes). Default 0.8."""
    gpu_utilization_max: float = 0.95
    """Mean GPU utilisation (0–1) above which ``InferstackGpuSaturated`` fires (after 15 minutes); the utilisation
    panel's red line. Default 0.95."""


@dataclass(frozen=True, kw_only=True)
class ServedWorkload:
    """One workload on the dashboards: whose series, and how to select them."""

    name: str
    """The workload's name: its alerts' ``inferstack_workload`` label and summaries, the PrometheusRule
    ``<name>-serving``, the ``app.kubernetes.io/name`` its GPU series are matched on."""
    namespace: str | None
    """None: any namespace (a dashboard's template workload)."""
    metrics: EngineMetrics
    """The engine's series (names, release) the queries read; an alert reading any other series is refused."""
    selector: Mapping[str, str]
    """Label matchers of its engine series (exact values)."""
    gpus: bool = True
    """It runs on NVIDIA GPUs (a DCGM row)."""
    targets: ServingTargets = field(default_factory=ServingTargets)
    """The targets of its alerts and panels' red lines. Default :class:`ServingTargets` defaults."""


def _matchers(selector: Mapping[str, str], extra: str = "") -> str:
    parts = [f'{key}="{value}"' for key, value in sorted(selector.items())]
    return "{" + ",".join(parts + ([extra] if extra else [])) + "}"


def _quantile(q: float, histogram: str, selector: str) -> str:
    return f"histogram_quantile({q}, sum by (le) (rate({histogram}_bucket{selector}[{WINDOW}])))"


#: The pod label kube-state-metrics exports on ``kube_pod_labels`` (allow-listed in its values:
#: ``metricLabelsAllowlist: pods=[app.kubernetes.io/name]``, stacks/observability.py).
POD_NAME_LABEL_SERIES = "label_app_kubernetes_io_name"


def gpu_series(workload: ServedWorkload, metric: str) -> str:
    """DCGM ``metric`` of the GPUs the workload's own pods hold: the series (whose pod arrives as ``exported_pod``)
    kept where kube-state-metrics' ``kube_pod_labels`` says that pod carries ``app.kubernetes.io/name: <name>`` — a
    pod-name pattern would also match ``<name>-bench`` and another workload ``<name>-70b``."""
    op = "=~" if workload.namespace is None else "="
    matchers = [f'{POD_NAME_LABEL_SERIES}{op}"{workload.name}"']
    if workload.namespace is not None:
        matchers.append(f'namespace="{workload.namespace}"')
    pods = f"kube_pod_labels{{{','.join(matchers)}}}"
    pods = f'label_replace(label_replace({pods}, "exported_pod", "$1", "pod", "(.+)"), '
    pods += '"exported_namespace", "$1", "namespace", "(.+)")'
    return f"({metric} and on (exported_namespace, exported_pod) {pods})"


class ServingQueries:
    """The PromQL of one workload's panels and alerts."""

    def __init__(self, workload: ServedWorkload) -> None:
        self.workload, self.m = workload, workload.metrics
        self.sel = _matchers(workload.selector)

    def ttft(self, q: float) -> str:
        assert self.m.ttft
        return _quantile(q, self.m.ttft, self.sel)

    def inter_token(self, q: float) -> str:
        assert self.m.inter_token
        return _quantile(q, self.m.inter_token, self.sel)

    def e2e(self, q: float) -> str:
        assert self.m.e2e
        return _quantile(q, self.m.e2e, self.sel)

    def kv_usage(self) -> str:
        return f"max({self.m.kv_usage}{self.sel})"

    def queue(self) -> str:
        return f"sum({self.m.queue}{self.sel})"

    def running(self) -> str:
        return f"sum({self.m.running}{self.sel})"

    def tokens(self, counter: str | None) -> str:
        return f"sum(rate({counter}{self.sel}[{WINDOW}]))"

    def requests(self) -> str:
        grouping = f" by ({self.m.request_label})" if self.m.request_label else ""
        return f"sum{grouping} (rate({self.m.requests}{self.sel}[{WINDOW}]))"

    def gpu_utilization(self) -> str:
        """Mean GPU utilisation of the workload's GPUs, 0–1 (DCGM reports percent)."""
        return f"avg({gpu_series(self.workload, 'DCGM_FI_DEV_GPU_UTIL')}) / 100"


# --------------------------------------------------------------------------------------------------- dashboards


@dataclass(frozen=True)
class Panel:
    title: str
    """Title shown on the Grafana panel."""
    exprs: Sequence[tuple[str, str]]
    """(PromQL, legend)."""
    unit: str = "short"
    """Grafana unit of the values (``s``, ``percentunit``, ``reqps``, ``decmbytes``, ``watt``…). Default ``short``."""
    threshold: float | None = None
    """A red line at the target. Default none."""
    maximum: float | None = None
    """Fixes the axis to 0–``maximum`` (1 for a 0–1 fraction). Default none: Grafana scales it."""


def gpu_panels(workload: ServedWorkload) -> list[Panel]:
    """Utilisation against its band, memory, power and tensor-core activity of the workload's GPUs."""
    q, t = ServingQueries(workload), workload.targets
    return [
        Panel("GPU utilisation", [(q.gpu_utilization(), "mean")], "percentunit", t.gpu_utilization_max, 1),
        Panel(
            "GPU memory used",
            [(f"sum by (exported_pod) {gpu_series(workload, 'DCGM_FI_DEV_FB_USED')}", "{{exported_pod}}")],
            "decmbytes",
        ),
        Panel("GPU power", [(f"sum{gpu_series(workload, 'DCGM_FI_DEV_POWER_USAGE')}", "watts")], "watt"),
        Panel(
            "Tensor cores active",
            [(f"avg{gpu_series(workload, 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE')}", "mean")],
            "percentunit",
            None,
            1,
        ),
    ]


def serving_panels(workload: ServedWorkload) -> list[Panel]:
    """Latency against its targets, KV cache and queue, throughput, outcomes — and the GPUs when it has any."""
    q, t, m = ServingQueries(workload), workload.targets, workload.metrics
    panels = [
        Panel(
            "Time to first token",
            [(q.ttft(0.5), "p50"), (q.ttft(0.95), "p95"), (q.ttft(0.99), "p99")],
            "s",
            t.ttft_seconds,
        ),
        Panel(
            "Inter-token latency",
            [(q.inter_token(0.5), "p50"), (q.inter_token(0.95), "p95")],
            "s",
            t.inter_token_seconds,
        ),
        Panel("End-to-end latency", [(q.e2e(0.5), "p50"), (q.e2e(0.95), "p95")], "s"),
        Panel("KV cache used", [(q.kv_usage(), "max over pods")], "percentunit", t.kv_cache_max, 1),
        Panel("Queue and batch", [(q.queue(), "waiting"), (q.running(), "running")], "short", t.queue_max),
        Panel(
            "Tokens per second",
            [(q.tokens(m.prompt_tokens), "prompt"), (q.tokens(m.generation_tokens), "generated")],
            "short",
        ),
        Panel("Finished requests per second", [(q.requests(), "{{%s}}" % (m.request_label or "requests"))], "reqps"),
    ]
    return panels + (gpu_panels(workload) if workload.gpus else [])


def panel_metrics(panel: Panel) -> frozenset[str]:
    return frozenset(name for expr, _ in panel.exprs for name in metric_names(expr))


def _panel_json(panel: Panel, panel_id: int, x: int, y: int) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [{"color": "green", "value": None}]
    if panel.threshold is not None:
        steps.append({"color": "red", "value": panel.threshold})
    defaults: dict[str, Any] = {
        "unit": panel.unit,
        "thresholds": {"mode": "absolute", "steps": steps},
        "custom": {"thresholdsStyle": {"mode": "line" if panel.threshold is not None else "off"}},
    }
    if panel.maximum is not None:
        defaults |= {"min": 0, "max": panel.maximum}
    return {
        "id": panel_id,
        "type": "timeseries",
        "title": panel.title,
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "gridPos": {"h": 8, "w": 8, "x": x, "y": y},
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {"legend": {"displayMode": "list", "placement": "bottom"}, "tooltip": {"mode": "multi"}},
        "targets": [
            {"refId": chr(65 + i), "expr": expr, "legendFormat": legend} for i, (expr, legend) in enumerate(panel.exprs)
        ],
    }


def panels_of(workload: ServedWorkload, gpu_only: bool) -> list[Panel]:
    return gpu_panels(workload) if gpu_only else serving_panels(workload)


#: The Grafana variable every dashboard repeats its row over.
WORKLOAD_VARIABLE = "workload"


def template_workload(metrics: EngineMetrics, label: str, targets: ServingTargets, gpus: bool) -> ServedWorkload:
    """The workload a dashboard's repeated row stands for: ``$workload`` in the series label ``label``."""
    return ServedWorkload(
        name=f"${WORKLOAD_VARIABLE}", namespace=None, metrics=metrics, selector={label: f"${WORKLOAD_VARIABLE}"},
        gpus=gpus, targets=targets,
    )  # fmt: skip


def dashboard_json(
    uid: str, title: str, workload: ServedWorkload, names: Sequence[str], gpu_only: bool = False
) -> dict[str, Any]:
    """A Grafana dashboard whose row repeats once per workload in ``names`` (the ``workload`` variable, all
    selected), three panels across — the JSON stays the same size however many workloads there are."""
    panels: list[dict[str, Any]] = [
        {
            "id": 1,
            "type": "row",
            "title": f"${WORKLOAD_VARIABLE}",
            "collapsed": False,
            "repeat": WORKLOAD_VARIABLE,
            "gridPos": {"h": 1, "w": 24, "x": 0, "y": 0},
            "panels": [],
        }
    ]
    for index, panel in enumerate(panels_of(workload, gpu_only)):
        panels.append(_panel_json(panel, index + 2, (index % 3) * 8, 1 + (index // 3) * 8))
    options = [{"text": name, "value": name, "selected": True} for name in names]
    variable = {
        "name": WORKLOAD_VARIABLE, "label": "Workload", "type": "custom", "multi": True, "includeAll": True,
        "query": ",".join(names), "options": options,
        "current": {"text": list(names), "value": list(names)},
    }  # fmt: skip
    datasource = {
        "name": "datasource", "type": "datasource", "query": "prometheus", "label": "Prometheus",
        "current": {"text": "Prometheus", "value": "prometheus"},
    }  # fmt: skip
    return {
        "uid": uid,
        "title": title,
        "tags": ["inferstack"],
        "timezone": "utc",
        "schemaVersion": 39,
        "refresh": "30s",
        "time": {"from": "now-3h", "to": "now"},
        "templating": {"list": [datasource, variable]},
        "panels": panels,
    }


@dataclass(frozen=True, kw_only=True)
class DashboardProps:
    uid: str
    """Grafana uid and ConfigMap name suffix (a DNS label)."""
    title: str
    """Title of the Grafana dashboard."""
    namespace: str
    """Where Grafana runs (its sidecar watches every namespace; this keeps them together)."""
    metrics: EngineMetrics
    """The engine whose series the panels read (DCGM's are always allowed)."""
    series_label: str
    """The label of the engine's series that names the workload (``app_kubernetes_io_name``; NIM: ``service``)."""
    workloads: Sequence[str]
    """Names of the workloads, one row each."""
    targets: ServingTargets = field(default_factory=ServingTargets)
    """The target lines drawn on the panels."""
    gpus: bool = True
    """With the GPU panels. Default True."""
    gpu_only: bool = False
    """Only the GPU panels (the DCGM dashboard). Default False."""


class Dashboard(Construct):
    """One dashboard as a ConfigMap ``inferstack-dashboard-<uid>`` labelled for Grafana's sidecar. Every panel's
    metrics must be series of the engine (or of DCGM): an unknown name is an error at construction."""

    def __init__(self, scope: Construct, construct_id: str, props: DashboardProps) -> None:
        super().__init__(scope, construct_id)
        owner = f"Dashboard {props.uid}"
        check.dns_label(owner, "uid", props.uid)
        if not props.workloads:
            raise check.PropError(f"{owner}: workloads — a dashboard needs at least one workload")
        workload = template_workload(props.metrics, props.series_label, props.targets, props.gpus or props.gpu_only)
        known = props.metrics.series() | GPU_SERIES
        for panel in panels_of(workload, props.gpu_only):
            unknown = sorted(panel_metrics(panel) - known)
            if unknown:
                raise check.PropError(
                    f"{owner}: panel {panel.title!r} reads {', '.join(unknown)}, not a series of "
                    f"{props.metrics.engine} {props.metrics.release}"
                )
        self.json = dashboard_json(props.uid, props.title, workload, sorted(set(props.workloads)), props.gpu_only)
        k8s.KubeConfigMap(
            self,
            "config-map",
            metadata=k8s.ObjectMeta(
                name=f"inferstack-dashboard-{props.uid}",
                namespace=props.namespace,
                labels={**DASHBOARD_LABEL, "app.kubernetes.io/part-of": "inferstack"},
            ),
            data={f"{props.uid}.json": json.dumps(self.json, sort_keys=True, separators=(",", ":"))},
        )


# ------------------------------------------------------------------------------------------------------- alerts


def serving_alerts(workload: ServedWorkload) -> list[dict[str, Any]]:
    """The targets as alerting rules (``for`` long enough to ride out a burst)."""
    q, t, name = ServingQueries(workload), workload.targets, workload.name
    labels = {"severity": "warning", "inferstack_workload": name, "namespace": workload.namespace or ""}

    def rule(alert: str, expr: str, wait: str, summary: str) -> dict[str, Any]:
        return {"alert": alert, "expr": expr, "for": wait, "labels": labels, "annotations": {"summary": summary}}

    rules = [
        rule("InferstackTimeToFirstTokenHigh", f"{q.ttft(0.95)} > {t.ttft_seconds:g}", "10m",
             f"{name}: p95 time to first token above {t.ttft_seconds:g} s"),
        rule("InferstackInterTokenLatencyHigh", f"{q.inter_token(0.95)} > {t.inter_token_seconds:g}", "10m",
             f"{name}: p95 inter-token latency above {t.inter_token_seconds:g} s"),
        rule("InferstackKvCacheNearlyFull", f"{q.kv_usage()} > {t.kv_cache_max:g}", "10m",
             f"{name}: KV cache above {t.kv_cache_max:.0%} — requests queue or get preempted"),
        rule("InferstackQueueDeep", f"{q.queue()} > {t.queue_max}", "5m",
             f"{name}: more than {t.queue_max} requests waiting — scale out"),
    ]  # fmt: skip
    if workload.gpus:
        rules += [
            rule("InferstackGpuUnderused", f"{q.gpu_utilization()} < {t.gpu_utilization_min:g}", "30m",
                 f"{name}: GPUs below {t.gpu_utilization_min:.0%} busy — fewer replicas or a smaller instance"),
            rule("InferstackGpuSaturated", f"{q.gpu_utilization()} > {t.gpu_utilization_max:g}", "15m",
                 f"{name}: GPUs above {t.gpu_utilization_max:.0%} busy — latency will climb"),
        ]  # fmt: skip
    return rules


_RULE_FIELDS = frozenset({"alert", "record", "expr", "for", "keep_firing_for", "labels", "annotations"})
_GROUP_FIELDS = frozenset({"name", "interval", "limit", "partial_response_strategy", "rules"})


def prometheus_rule_problems(obj: Mapping[str, Any]) -> list[str]:
    """What the PrometheusRule CRD (``monitoring.coreos.com/v1``) would refuse or prune in ``obj``: unknown fields
    (objects are closed), missing ``spec.groups[].name`` / ``rules[].expr``, non-string labels and annotations,
    bad durations, both or neither of ``alert`` / ``record``."""
    problems = []
    if set(obj) - {"apiVersion", "kind", "metadata", "spec"}:
        problems.append(f"unknown top-level fields {sorted(set(obj) - {'apiVersion', 'kind', 'metadata', 'spec'})}")
    spec = obj.get("spec") or {}
    if set(spec) - {"groups"}:
        problems.append(f"spec: unknown fields {sorted(set(spec) - {'groups'})}")
    for g, group in enumerate(spec.get("groups") or ()):
        if set(group) - _GROUP_FIELDS:
            problems.append(f"spec.groups[{g}]: unknown fields {sorted(set(group) - _GROUP_FIELDS)}")
        for r, rule in enumerate(group.get("rules") or ()):
            where = f"spec.groups[{g}].rules[{r}]"
            if set(rule) - _RULE_FIELDS:
                problems.append(f"{where}: unknown fields {sorted(set(rule) - _RULE_FIELDS)}")
            for key in ("labels", "annotations"):
                if not all(isinstance(v, str) for v in (rule.get(key) or {}).values()):
                    problems.append(f"{where}.{key}: values must be strings")
    try:
        check_rule_groups("PrometheusRule", spec.get("groups") or ())
    except check.PropError as error:
        problems.append(str(error))
    return problems


def check_rule_groups(owner: str, groups: Sequence[Mapping[str, Any]]) -> None:
    """What the PrometheusRule CRD requires of ``spec.groups``, plus balanced PromQL."""
    for g, group in enumerate(groups):
        if not group.get("name"):
            raise check.PropError(f"{owner}: groups[{g}].name — required, non-empty")
        for r, entry in enumerate(group.get("rules") or ()):
            where = f"groups[{g}].rules[{r}]"
            if ("alert" in entry) == ("record" in entry):
                raise check.PropError(f"{owner}: {where} — exactly one of alert and record")
            if not entry.get("expr"):
                raise check.PropError(f"{owner}: {where}.expr — required")
            metric_names(str(entry["expr"]))  # raises on unbalanced brackets or quotes
            if "for" in entry and not _DURATION.match(entry["for"]):
                raise check.PropError(f"{owner}: {where}.for {entry['for']!r} — a duration such as 10m")


class ServingAlerts(cdk8s.ApiObject):
    """A PrometheusRule ``<name>-serving`` in the workload's namespace with :func:`serving_alerts`. Every rule reads
    only series of the workload's engine (or DCGM)."""

    def __init__(self, scope: Construct, construct_id: str, workload: ServedWorkload) -> None:
        owner = f"PrometheusRule {workload.namespace}/{workload.name}-serving"
        rules = serving_alerts(workload)
        known = workload.metrics.series() | GPU_SERIES
        for entry in rules:
            unknown = sorted(metric_names(entry["expr"]) - known)
            if unknown:
                raise check.PropError(f"{owner}: {entry['alert']} reads {', '.join(unknown)}, not a known series")
        groups = [{"name": f"inferstack-{workload.name}", "rules": rules}]
        check_rule_groups(owner, groups)
        super().__init__(
            scope,
            construct_id,
            api_version="monitoring.coreos.com/v1",
            kind="PrometheusRule",
            metadata=cdk8s.ApiObjectMetadata(
                name=f"{workload.name}-serving",
                namespace=workload.namespace,
                labels={"app.kubernetes.io/part-of": "inferstack", "app.kubernetes.io/name": workload.name},
            ),
        )
        self.add_json_patch(cdk8s.JsonPatch.add("/spec", {"groups": groups}))
        problems = prometheus_rule_problems(self.to_json())
        if problems:
            raise check.PropError(f"{owner}: " + "; ".join(problems))
