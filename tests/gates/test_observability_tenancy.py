"""GATE (issue 24 §8): Prometheus loads monitors and rules only from the namespaces inferstack serves in or owns,
and Grafana loads dashboards only from its own namespace — a tenant of any other namespace can neither add scrape
jobs and alerts nor replace a dashboard by its uid. Every monitor and rule the cluster runs (ours, the Helm
releases', the operators') sits in a namespace Prometheus loads."""

from __future__ import annotations

import json

import pytest

from inferstack.catalog.kubernetes import PROMETHEUS_NAMESPACE
from inferstack.cli import HELM_TYPE
from inferstack.stacks.observability import NAMESPACE_NAME_LABEL, NAMESPACE_SELECTORS
from tests.gates.cluster_view import CHARTS_SRC, NO_CHARTS, cluster_view

pytestmark = pytest.mark.skipif(not CHARTS_SRC.is_dir(), reason=NO_CHARTS)

MONITORING_KINDS = {"PodMonitor", "ServiceMonitor", "PrometheusRule", "Probe", "ScrapeConfig"}


def _values(app) -> dict | None:
    for template in app.templates.values():
        for resource in template.get("Resources", {}).values():
            props = resource.get("Properties", {})
            if resource.get("Type") == HELM_TYPE and props.get("Chart") == "kube-prometheus-stack":
                values = props["Values"]
                text = (
                    values
                    if isinstance(values, str)
                    else "".join(part if isinstance(part, str) else '"<token>"' for part in values["Fn::Join"][1])
                )
                return json.loads(text)
    return None


def test_prometheus_and_grafana_load_only_the_platforms_namespaces(any_app):
    values = _values(any_app)
    if values is None:
        pytest.skip("this example installs no kube-prometheus-stack")
    spec = values["prometheus"]["prometheusSpec"]
    selectors = [spec[name] for name in NAMESPACE_SELECTORS]
    assert all(s == selectors[0] for s in selectors)
    (expression,) = selectors[0]["matchExpressions"]
    assert expression["key"] == NAMESPACE_NAME_LABEL and expression["operator"] == "In"
    allowed = set(expression["values"])
    assert "default" not in allowed and "tenant-a" not in allowed
    assert {w.namespace for w in any_app.config.workloads} | {PROMETHEUS_NAMESPACE} <= allowed
    assert values["grafana"]["sidecar"]["dashboards"]["searchNamespace"] == PROMETHEUS_NAMESPACE

    objects = cluster_view(any_app).everything
    monitors = {
        (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"])
        for o in objects
        if o.get("kind") in MONITORING_KINDS
    }
    assert monitors, "the example runs monitors"
    assert sorted(m for m in monitors if m[1] not in allowed) == []
    dashboards = [
        o
        for o in objects
        if o.get("kind") == "ConfigMap" and "grafana_dashboard" in (o["metadata"].get("labels") or {})
    ]
    assert all(d["metadata"].get("namespace") == PROMETHEUS_NAMESPACE for d in dashboards)
