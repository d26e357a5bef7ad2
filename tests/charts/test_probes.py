"""``workloads[].probes`` (issue 26 §2.6): GIVEN probe timing and shape on every workload of every kind's examples
that renders probes, WHEN rendered, THEN every probe of every pod serving it — as it runs (our templates, KServe's
predictor and the NIM operator's pods) — has that timing and shape, the startup probe keeps its budget, and the kinds
whose operators probe the pods (Ray Serve, Dynamo) refuse it at the field."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import yaml

from inferstack.config import ConfigError, parse_config
from inferstack.config.kinds import KINDS
from tests.charts.conftest import render
from tests.charts.test_pod_customization import running_pods, serving
from tests.synth import ROOT

#: Kinds whose operators probe the pods (they refuse ``probes``).
OPERATOR_PROBED = ("ray_serve", "dynamo")
EXAMPLES = sorted({e for name, kind in KINDS.items() if name not in OPERATOR_PROBED for e in kind.examples})
PROBES = {
    "readiness": {"period_seconds": 7, "timeout_seconds": 3, "failure_threshold": 5, "initial_delay_seconds": 2},
    "liveness": {"period_seconds": 31, "timeout_seconds": 9, "failure_threshold": 6},
    "startup": {"period_seconds": 20, "timeout_seconds": 4},
}
FIELDS = {"readinessProbe": "readiness", "livenessProbe": "liveness", "startupProbe": "startup"}
TIMED = ("periodSeconds", "timeoutSeconds", "failureThreshold", "initialDelaySeconds")
#: The probes a kind renders, where not all three: a KServe predictor's model container (readiness; in Standard mode
#: also startup — the example runs Knative, whose progress deadline bounds the start), a NIMService (startup; the NIM
#: operator's defaults otherwise).
RENDERED = {"kserve": ("readiness",), "nim": ("startup",)}


def config_with(example: str, probes: Mapping[str, Any], kinds: tuple[str, ...] | None = None) -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "examples" / example).read_text())
    for workload in data["workloads"]:
        kind = workload.get("kind", "vllm")
        if kinds is None or kind in kinds:
            rendered = RENDERED.get(kind, tuple(FIELDS.values())) if kinds is not None else tuple(FIELDS.values())
            workload["probes"] = {
                k: copy.deepcopy(v) for k, v in probes.items() if k not in FIELDS.values() or k in rendered
            }
    return data


def probes_of(objects: list[dict[str, Any]], workload: str) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """``(where, field, probe)`` of every probe on a pod serving ``workload`` as it runs."""
    for where, pod in running_pods(objects):
        if serving(where, pod, workload):
            for container in pod["spec"]["containers"]:
                for field in FIELDS:
                    if field in container:
                        yield f"{where} {container['name']}", field, container[field]


@pytest.fixture(scope="module")
def rendered(plain_examples) -> dict[str, tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]]:
    """example → (its data with probes, rendered with them, rendered without)."""
    found = {}
    for example in EXAMPLES:
        kinds = tuple(n for n in KINDS if n not in OPERATOR_PROBED)
        data = config_with(example, PROBES, kinds)
        found[example] = (data, render(data), plain_examples[example])
    return found


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_probe_of_a_serving_pod_has_the_configured_timing_and_shape(rendered, example):
    data, objects, plain = rendered[example]
    for workload in (w for w in data["workloads"] if "probes" in w):
        tuned = list(probes_of(objects, workload["name"]))
        before = {(where, field): probe for where, field, probe in probes_of(plain, workload["name"])}
        assert tuned and len(tuned) == len(before), (example, workload["name"])
        for where, field, probe in tuned:
            original = before[(where, field)]
            assert {k: v for k, v in probe.items() if k not in TIMED} == {
                k: v for k, v in original.items() if k not in TIMED
            }, where  # the handler (path, port) as rendered
            if field == "startupProbe":
                assert probe["periodSeconds"] == 20 and probe["timeoutSeconds"] == 4, where
                budget = original.get("periodSeconds", 10) * original.get("failureThreshold", 3)
                assert budget <= probe["periodSeconds"] * probe["failureThreshold"] < budget + 20, where
            else:
                timing = PROBES[FIELDS[field]]
                assert probe["periodSeconds"] == timing["period_seconds"], where
                assert probe["timeoutSeconds"] == timing["timeout_seconds"], where
                assert probe["failureThreshold"] == timing["failure_threshold"], where
                assert probe.get("initialDelaySeconds") == timing.get("initial_delay_seconds"), where


def test_a_tcp_probe_opens_the_same_port():
    objects = render(config_with("vllm-gpu-tp4.yaml", {"handler": "tcp"}))
    plain = render(yaml.safe_load((ROOT / "examples" / "vllm-gpu-tp4.yaml").read_text()))
    before = {(w, f): p for w, f, p in probes_of(plain, "llama-70b")}
    for where, field, probe in probes_of(objects, "llama-70b"):
        assert "httpGet" not in probe and probe["tcpSocket"] == {"port": before[(where, field)]["httpGet"]["port"]}


def test_without_probes_nothing_changes():
    plain = render(yaml.safe_load((ROOT / "examples" / "tgi.yaml").read_text()))
    assert render(config_with("tgi.yaml", {})) == plain


@pytest.mark.parametrize("example", ["ray-llm-multi-model.yaml", "dynamo-disagg-efa.yaml"])
def test_kinds_whose_operator_probes_the_pods_refuse_probes(example):
    with pytest.raises(ConfigError) as raised:
        parse_config(config_with(example, {"readiness": {"period_seconds": 5}}))
    assert "workloads[0].probes" in str(raised.value) and "probes" in str(raised.value)


def test_a_probe_the_kind_does_not_render_is_a_named_error():
    """A KServe predictor has readiness and startup probes, no liveness: tuning one is an error, not invented."""
    with pytest.raises(ConfigError) as raised:
        render(config_with("kserve-scale-to-zero.yaml", {"liveness": {"period_seconds": 30}}))
    assert "workloads[0].probes.liveness" in str(raised.value) and "renders no such probe" in str(raised.value)


def test_tcp_with_https_is_refused_at_the_field():
    with pytest.raises(ConfigError) as raised:
        parse_config(config_with("tgi.yaml", {"handler": "tcp", "scheme": "HTTPS"}))
    assert "workloads[0].probes" in str(raised.value) and "needs handler http" in str(raised.value)


def test_https_probes_keep_the_path_and_port():
    data = config_with("tgi.yaml", {"scheme": "HTTPS"})
    data["workloads"][0]["monitoring"] = False
    objects = render(data)
    plain = render(yaml.safe_load((ROOT / "examples" / "tgi.yaml").read_text()))
    before = {(w, f): p for w, f, p in probes_of(plain, "tgi-llama")}
    tuned = list(probes_of(objects, "tgi-llama"))
    assert tuned
    for where, field, probe in tuned:
        assert probe["httpGet"] == {**before[(where, field)]["httpGet"], "scheme": "HTTPS"}


def test_https_probes_are_refused_while_something_calls_the_pods_over_http():
    """The PodMonitor, the autoscaler's metric and the benchmark call the pods over HTTP: HTTPS would break them."""
    with pytest.raises(ConfigError) as raised:
        parse_config(config_with("tgi.yaml", {"scheme": "HTTPS"}))
    assert "workloads[0].probes.scheme" in str(raised.value) and "monitoring" in str(raised.value)


def test_tcp_on_a_probe_without_a_port_is_a_named_error():
    """A Knative predictor's probe names no port (Knative fills in the container's for httpGet only)."""
    with pytest.raises(ConfigError) as raised:
        render(config_with("kserve-scale-to-zero.yaml", {"handler": "tcp"}))
    assert "workloads[0].probes.handler" in str(raised.value) and "names no port" in str(raised.value)


#: An exec probe every Python-based engine image can run (the program's presence is the user's to vouch for).
COMMAND = ["python3", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1:8000/health', timeout=4)"]


@pytest.mark.parametrize("example", EXAMPLES)
def test_an_exec_probe_replaces_the_handler_of_every_probe_as_it_runs(example):
    """Every probe of every pod serving the workloads — the NIM operator's pod and the KServe predictor (Knative
    runs a user exec readiness probe on the container, its queue-proxy a TCP one) included — runs the command, with
    the timing inferstack rendered and at least a 5 s timeout."""
    data = config_with(example, {"handler": "exec", "command": COMMAND})
    objects, plain = render(data), render(yaml.safe_load((ROOT / "examples" / example).read_text()))
    for workload in (w for w in data["workloads"] if "probes" in w):
        before = {(where, field): probe for where, field, probe in probes_of(plain, workload["name"])}
        tuned = list(probes_of(objects, workload["name"]))
        assert tuned and len(tuned) == len(before), (example, workload["name"])
        for where, field, probe in tuned:
            assert probe["exec"] == {"command": COMMAND} and not {"httpGet", "tcpSocket"} & set(probe), where
            timing = {k: v for k, v in before[(where, field)].items() if k in TIMED}
            timing["timeoutSeconds"] = max(5, timing.get("timeoutSeconds", 1))
            assert {k: v for k, v in probe.items() if k in TIMED} == timing, where


def test_a_timeout_set_for_an_exec_probe_wins():
    probes = {"handler": "exec", "command": COMMAND, "readiness": {"timeout_seconds": 2}}
    objects = render(config_with("tgi.yaml", probes))
    timeouts = {field: p["timeoutSeconds"] for _, field, p in probes_of(objects, "tgi-llama")}
    assert timeouts["readinessProbe"] == 2 and timeouts["livenessProbe"] >= 5


@pytest.mark.parametrize(
    ("probes", "named"),
    [
        ({"handler": "exec"}, "give it"),
        ({"command": COMMAND}, "set handler: exec or remove it"),
        ({"handler": "exec", "command": COMMAND, "scheme": "HTTPS"}, "needs handler http"),
        ({"handler": "exec", "command": ["python3", ""]}, "command[1] has 0 characters"),
    ],
)
def test_an_exec_probe_is_whole_or_refused(probes, named):
    with pytest.raises(ConfigError) as raised:
        parse_config(config_with("tgi.yaml", probes))
    assert "workloads[0].probes" in str(raised.value) and named in str(raised.value)
