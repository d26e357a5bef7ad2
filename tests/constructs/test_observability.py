"""Dashboards and alerts refuse series their engine does not export; the PrometheusRule check; alert targets."""

from __future__ import annotations

from dataclasses import replace

import cdk8s
import pytest

from inferstack.catalog.metrics import VLLM
from inferstack.config.loader import parse_config
from inferstack.constructs.observability import (
    Dashboard,
    DashboardProps,
    ServedWorkload,
    ServingAlerts,
    prometheus_rule_problems,
)
from inferstack.constructs.validation import PropError
from inferstack.plan import resolve

WORKLOAD = ServedWorkload(name="qwen", namespace="llm", metrics=VLLM, selector={"namespace": "llm", "x": "qwen"})
#: vLLM's pre-0.12 name, gone at 0.19 (PR 29330): a dashboard or alert reading it would show nothing.
OLD = replace(VLLM, kv_usage="vllm:gpu_cache_usage_perc")


def test_a_dashboard_reading_a_series_the_engine_lacks_is_refused():
    props = DashboardProps(uid="v", title="t", namespace="monitoring", metrics=OLD, series_label="x", workloads=["a"])
    with pytest.raises(PropError, match="vllm:gpu_cache_usage_perc"):
        Dashboard(cdk8s.Chart(cdk8s.App(), "c"), "d", props)


def test_an_alert_reading_a_series_the_engine_lacks_is_refused():
    with pytest.raises(PropError, match="vllm:gpu_cache_usage_perc"):
        ServingAlerts(cdk8s.Chart(cdk8s.App(), "c"), "a", replace(WORKLOAD, metrics=OLD))


def test_prometheus_rule_problems():
    good = ServingAlerts(cdk8s.Chart(cdk8s.App(), "c"), "a", WORKLOAD).to_json()
    assert prometheus_rule_problems(good) == []
    bad = {**good, "spec": {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "x", "for": "ten"}]}]}}
    assert any("duration" in p for p in prometheus_rule_problems(bad))
    both = {**good, "spec": {"groups": [{"name": "g", "rules": [{"alert": "A", "record": "r", "expr": "x"}]}]}}
    assert any("exactly one" in p for p in prometheus_rule_problems(both))
    extra = {**good, "spec": {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "x", "severity": "x"}]}]}}
    assert any("unknown fields" in p for p in prometheus_rule_problems(extra))


POOLS = {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]}


def test_a_workload_overrides_the_platform_targets():
    data = {
        "compute": POOLS,
        "observability": {"alerts": {"ttft_seconds": 1.0}},
        "workloads": [
            {"name": "a", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}},
            {"name": "b", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}, "alerts": {"ttft_seconds": 0.2}},
        ],
    }
    a, b = resolve(parse_config(data)).workloads
    assert a.alerts.ttft_seconds == 1.0 and b.alerts.ttft_seconds == 0.2


def test_an_inverted_gpu_band_names_the_field():
    from inferstack.config.errors import ConfigError

    data = {"observability": {"alerts": {"gpu_utilization_min": 0.9, "gpu_utilization_max": 0.5}}}
    with pytest.raises(ConfigError, match=r"observability\.alerts\.gpu_utilization_min"):
        parse_config(data)
