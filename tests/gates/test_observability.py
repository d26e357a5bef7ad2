"""GATE: every dashboard panel and every alert of every synthesized app reads only series its engine (at the pinned
release) or the DCGM exporter exports, and selects the workload by a label its pods really carry."""

from __future__ import annotations

import json

import pytest

from inferstack.catalog.metrics import DCGM, GPU_SERIES, NIM, RAY_VLLM, VLLM
from inferstack.catalog.routing import READY_PODS
from inferstack.config.kinds import kind_of
from inferstack.constructs.monitoring import POD_TARGET_LABELS
from inferstack.constructs.observability import WORKLOAD_VARIABLE
from inferstack.constructs.promql import metric_names
from inferstack.gates.pods import all_pod_templates
from inferstack.plan import resolve

ENGINE_OF_DASHBOARD = {"vllm": VLLM, "ray-serve-llm": RAY_VLLM, "nim": NIM, "gpus": DCGM}


def _dashboards(objects):
    for obj in objects:
        if obj["kind"] == "ConfigMap" and obj["metadata"].get("labels", {}).get("grafana_dashboard") == "1":
            ((key, text),) = obj["data"].items()
            yield obj, key.removesuffix(".json"), json.loads(text)


def _served(config):
    return [w for w in resolve(config).workloads if kind_of(w.kind).metrics is not None and w.config.monitoring]


def test_every_panel_reads_series_of_its_engine(any_app):
    objects = any_app.kubernetes_objects()
    served = _served(any_app.config)
    found = list(_dashboards(objects))
    assert bool(found) == bool(served)
    for obj, uid, board in found:
        assert obj["metadata"]["namespace"] == "monitoring"
        known = ENGINE_OF_DASHBOARD[uid].series() | GPU_SERIES
        targets = [t for panel in board["panels"] for t in panel.get("targets", ())]
        assert targets, uid
        for target in targets:
            assert metric_names(target["expr"]) <= known, (uid, target["expr"])
            assert metric_names(target["expr"]), (uid, target["expr"])


def test_one_row_per_workload(any_app):
    served = _served(any_app.config)
    for _, uid, board in _dashboards(any_app.kubernetes_objects()):
        (variable,) = [v for v in board["templating"]["list"] if v["name"] == WORKLOAD_VARIABLE]
        engine = ENGINE_OF_DASHBOARD[uid]
        expected = sorted(
            {
                w.name
                for w in served
                if (uid == "gpus" and w.pool.accelerator.value == "nvidia") or kind_of(w.kind).metrics is engine
            }
        )
        assert variable["query"].split(",") == expected
        (row,) = [p for p in board["panels"] if p["type"] == "row"]
        assert row["repeat"] == WORKLOAD_VARIABLE


def test_every_alert_reads_series_of_its_engine_and_selects_its_pods(any_app):
    objects = any_app.kubernetes_objects()
    served = {(w.namespace, w.name): w for w in _served(any_app.config)}
    platform = resolve(any_app.config)
    routers = {(w.namespace, r.name): r for w in platform.workloads if (r := w.router) is not None}
    rules = [o for o in objects if o["kind"] == "PrometheusRule"]
    for rule in [r for r in rules if (r["metadata"]["namespace"], r["metadata"]["name"]) in routers]:
        rules.remove(rule)  # a router's: its picker's gauge of the replicas it reads, for its own pool
        router = routers[(rule["metadata"]["namespace"], rule["metadata"]["name"])]
        for alert in rule["spec"]["groups"][0]["rules"]:
            assert metric_names(alert["expr"]) == {READY_PODS}
            assert f'name="{router.name}"' in alert["expr"], alert["expr"]
    assert {(r["metadata"]["namespace"], r["metadata"]["name"].removesuffix("-serving")) for r in rules} == set(served)
    for rule in rules:
        workload = served[(rule["metadata"]["namespace"], rule["metadata"]["name"].removesuffix("-serving"))]
        metrics = kind_of(workload.kind).metrics
        assert metrics is not None
        known = metrics.series() | GPU_SERIES
        alerts = rule["spec"]["groups"][0]["rules"]
        names = {a["alert"] for a in alerts}
        assert {"InferstackTimeToFirstTokenHigh", "InferstackInterTokenLatencyHigh", "InferstackKvCacheNearlyFull",
                "InferstackQueueDeep"} <= names  # fmt: skip
        for alert in alerts:
            assert metric_names(alert["expr"]) <= known, alert["expr"]
            assert f'"{workload.name}' in alert["expr"], alert["expr"]


def test_the_series_label_is_copied_from_pods_that_carry_it(any_app):
    """app_kubernetes_io_name exists only because each PodMonitor copies the pod label, and the pods it selects
    carry that label with the workload's name."""
    objects = any_app.kubernetes_objects()
    pods = list(all_pod_templates(objects))
    for monitor in (o for o in objects if o["kind"] == "PodMonitor"):
        assert monitor["spec"]["podTargetLabels"] == list(POD_TARGET_LABELS)
        name = monitor["metadata"]["labels"]["app.kubernetes.io/name"]
        selected = monitor["spec"]["selector"]["matchLabels"]
        matching = [p for p in pods if all(p.labels.get(k) == v for k, v in selected.items())]
        for pod in matching:
            assert pod.labels.get("app.kubernetes.io/name") == name


def test_default_thresholds_are_seed_001s(default_app):
    (rule,) = [o for o in default_app.kubernetes_objects() if o["kind"] == "PrometheusRule"]
    exprs = {a["alert"]: a["expr"] for a in rule["spec"]["groups"][0]["rules"]}
    assert exprs["InferstackTimeToFirstTokenHigh"].endswith("> 0.5")
    assert exprs["InferstackInterTokenLatencyHigh"].endswith("> 0.05")
    assert exprs["InferstackKvCacheNearlyFull"].endswith("> 0.9")
    assert exprs["InferstackQueueDeep"].endswith("> 100")
    assert exprs["InferstackGpuUnderused"].endswith("< 0.8")
    assert exprs["InferstackGpuSaturated"].endswith("> 0.95")


def test_prometheus_selects_every_rule_and_grafana_is_on(default_app):
    (chart,) = [
        r for r in default_app.resources("workloads", "Custom::AWSCDK-EKS-HelmChart").values()
        if r["Properties"]["Chart"] == "kube-prometheus-stack"
    ]  # fmt: skip
    values = json.loads(chart["Properties"]["Values"])
    assert values["prometheus"]["prometheusSpec"]["ruleSelectorNilUsesHelmValues"] is False
    assert values["grafana"]["enabled"] is True


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        ('histogram_quantile(0.95, sum by (le) (rate(vllm:ttft_bucket{a="b"}[5m])))', {"vllm:ttft_bucket"}),
        ("sum(rate(x_total[5m])) by (le) / on (pod) group_left y", {"x_total", "y"}),
        ('max(up{job="a"}) > 0.9 and absent(z)', {"up", "z"}),
        ('avg(m{p=~"a-.+"}) / 100 < 0.8', {"m"}),
    ],
)
def test_promql_metric_names(expr, names):
    assert metric_names(expr) == names


@pytest.mark.parametrize("expr", ["sum(rate(x[5m])", 'x{a="b}', "x]"])
def test_promql_unbalanced_is_refused(expr):
    with pytest.raises(ValueError):
        metric_names(expr)


def test_metric_names_come_from_the_promql_syntax_tree():
    """constructs/promql.py reads the selectors promql-parser finds: inside functions, ranges and subqueries, by
    ``__name__`` matcher, never a function, label or keyword; bad PromQL is an error."""
    from inferstack.constructs.promql import metric_names

    expr = 'sum by (pod) (rate(vllm:num_requests_running{job="x"}[5m])) / on(pod) group_left(l) kube_pod_labels'
    assert metric_names(expr) == {"vllm:num_requests_running", "kube_pod_labels"}
    assert metric_names('max_over_time({__name__="DCGM_FI_DEV_GPU_UTIL"}[10m:1m]) > bool 0.9') == {
        "DCGM_FI_DEV_GPU_UTIL"
    }
    with pytest.raises(ValueError, match="not PromQL"):
        metric_names("sum(rate(x[5m])")
