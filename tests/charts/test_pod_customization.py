"""``workloads[].pod`` (issue 26 §2.7): GIVEN labels, annotations and env on every workload of every kind's examples,
WHEN rendered, THEN every pod serving the workload — as it runs: our templates and the pods the operators make from
our objects (KServe, KubeRay, LWS, the NIM operator, Dynamo; :mod:`inferstack.gates.projections`) — carries them,
its Jobs do not, a key inferstack sets already is a named error, and a credential in ``env`` is SECRET-INLINE."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import yaml

from inferstack.catalog.crds import is_custom_resource, validate_custom_resource
from inferstack.config import ConfigError, parse_config
from inferstack.config.kinds import KINDS
from inferstack.constructs.pod.templates import POD_TEMPLATE_PATHS, walk_path
from inferstack.gates.projections import projected_pods
from inferstack.rules import evaluate
from tests.charts.conftest import render
from tests.synth import ROOT

EXAMPLES = sorted({example for kind in KINDS.values() for example in kind.examples})
LABELS = {"example.com/team": "search"}
ANNOTATIONS = {"example.com/owner": "search-oncall"}
ENV = {"OTEL_SERVICE_NAME": "chat", "TRACING_HEADER": {"secret": {"name": "tracing", "key": "header"}}}
ENTRIES = [
    {"name": "OTEL_SERVICE_NAME", "value": "chat"},
    {"name": "TRACING_HEADER", "valueFrom": {"secretKeyRef": {"name": "tracing", "key": "header"}}},
]
NOT_SERVING = ("model-sync", "neuron-compile", "bench", "postgres")


def with_pod(example: str, pod: Mapping[str, Any]) -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "examples" / example).read_text())
    for workload in data["workloads"]:
        workload["pod"] = copy.deepcopy(dict(pod))
    return data


@pytest.fixture(scope="module")
def rendered() -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
    pod = {"labels": LABELS, "annotations": ANNOTATIONS, "env": ENV}
    return {example: (data := with_pod(example, pod), render(data)) for example in EXAMPLES}


def running_pods(objects: list[dict[str, Any]]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(where, pod template or Pod)`` of every pod as the cluster runs it: the templates we render, and the pods the
    operators make from our custom resources."""
    for obj in objects:
        for dotted in POD_TEMPLATE_PATHS.get(obj["kind"], ()):
            for path, template in walk_path(obj, dotted):
                yield f"{obj['kind']}/{obj['metadata']['name']} {path}", template
    for pod in projected_pods(objects):
        yield f"Pod {pod['metadata']['annotations']['inferstack.io/projected-from']}", pod


def one_off(where: str, pod: Mapping[str, Any]) -> bool:
    """A workload's Job (model sync, Neuron compile, benchmark, a NIMCache's download) or a gateway's Postgres."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return labels.get("app.kubernetes.io/component") in NOT_SERVING or where.startswith("Pod NIMCache/")


def serving(where: str, pod: Mapping[str, Any], workload: str) -> bool:
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return labels.get("app.kubernetes.io/name") == workload and not one_off(where, pod)


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_pod_serving_a_workload_carries_its_pod_config(rendered, example):
    data, objects = rendered[example]
    pods = list(running_pods(objects))
    for workload in (w["name"] for w in data["workloads"]):
        mine = [(where, pod) for where, pod in pods if serving(where, pod, workload)]
        assert mine, f"{example}: no pod serves {workload}"
        for where, pod in mine:
            meta = pod.get("metadata") or {}
            assert LABELS.items() <= (meta.get("labels") or {}).items(), where
            assert ANNOTATIONS.items() <= (meta.get("annotations") or {}).items(), where
            engine = pod["spec"]["containers"][0]
            assert all(entry in (engine.get("env") or []) for entry in ENTRIES), (where, engine.get("name"))


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_custom_resources_stay_valid_against_their_crds(rendered, example):
    """The NIMService's spec.labels/annotations/env and the predictor's labels/annotations/env are fields their
    vendored CRDs define: what the operator is handed validates."""
    _, objects = rendered[example]
    for obj in objects:
        if is_custom_resource(obj["apiVersion"], obj["kind"]):
            assert validate_custom_resource(obj) == [], (obj["kind"], obj["metadata"]["name"])


@pytest.mark.parametrize("example", EXAMPLES)
def test_jobs_and_a_gateways_database_get_none_of_it(rendered, example):
    _, objects = rendered[example]
    for where, pod in running_pods(objects):
        labels = (pod.get("metadata") or {}).get("labels") or {}
        if one_off(where, pod):
            assert not LABELS.items() <= labels.items(), where
            assert all(e["name"] != "OTEL_SERVICE_NAME" for c in pod["spec"]["containers"] for e in c.get("env") or [])


def test_without_a_pod_config_nothing_changes(plain_examples):
    """The default (no ``pod``) renders exactly what it rendered before: no empty labels, annotations or env."""
    example = "vllm-gpu-tp4.yaml"
    plain = plain_examples[example]
    empty = render(with_pod(example, {}))
    assert plain == empty


@pytest.mark.parametrize(
    ("pod", "field", "words"),
    [
        ({"labels": {"app.kubernetes.io/name": "x"}}, "pod.labels", "the kubernetes.io domain"),
        ({"labels": {"topology.kubernetes.io/zone": "x"}}, "pod.labels", "the kubernetes.io domain"),
        ({"labels": {"ray.io/node-type": "x"}}, "pod.labels", "the ray.io domain"),
        ({"labels": {"app": "x"}}, "pod.labels", "the bare key 'app'"),
        ({"labels": {"example.com/team": "a b"}}, "pod.labels", "not a valid label value"),
        (
            {"annotations": {"container.apparmor.security.beta.kubernetes.io/vllm": "unconfined"}},
            "pod.annotations",
            "the kubernetes.io domain",
        ),
        ({"annotations": {"serving.kserve.io/deploymentMode": "Knative"}}, "pod.annotations", "kserve.io"),
        ({"env": {"HOME": "/tmp"}}, "pod.env", "set by the serving pod"),
        ({"env": {"2FA": "x"}}, "pod.env", "not an environment variable name"),
        ({"env": {"VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True"}}, "pod.env", "opens the engine's control endpoints"),
        ({"env": {"VLLM_SERVER_DEV_MODE": "1"}}, "pod.env", "opens the engine's control endpoints"),
    ],
)
def test_keys_another_owner_sets_are_refused_at_the_field(pod, field, words):
    with pytest.raises(ConfigError) as raised:
        parse_config(with_pod("vllm-gpu-tp4.yaml", pod))
    assert f"workloads[0].{field}" in str(raised.value) and words in str(raised.value)


def test_a_variable_the_kind_renders_is_a_named_error_not_replaced():
    """vLLM's pods set HF_HUB_OFFLINE for a bucket model: the pod config may not silently change it."""
    with pytest.raises(ConfigError) as raised:
        render(with_pod("vllm-gpu-tp4.yaml", {"env": {"HF_HUB_OFFLINE": "0"}}))
    message = str(raised.value)
    assert (
        "workloads[0].pod.env" in message and "HF_HUB_OFFLINE: Deployment/" in message and "sets it already" in message
    )


def test_a_credential_in_env_is_secret_inline():
    config = parse_config(with_pod("vllm-gpu-tp4.yaml", {"env": {"TRACING_API_KEY": "abc123secretvalue"}}))
    errors = [f for f in evaluate(config).errors if f.rule == "SECRET-INLINE"]
    assert [f.path for f in errors] == ["workloads[0].pod.env.TRACING_API_KEY"]


def test_a_secret_env_is_a_secret_the_workload_reads():
    config = parse_config(with_pod("vllm-gpu-tp4.yaml", {"env": ENV}))
    assert "tracing" in config.workloads[0].referenced_secrets


def _without_pod_config(node: Any) -> Any:
    """``node`` with the test's labels, annotations and env entries taken out (emptied maps and lists dropped)."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key in ("labels", "annotations") and isinstance(value, dict):
                value = {k: v for k, v in value.items() if k not in LABELS and k not in ANNOTATIONS}
                if not value:
                    continue
            elif key == "env" and isinstance(value, list):
                value = [e for e in value if e.get("name") not in ENV]
                if not value:
                    continue
            out[key] = _without_pod_config(value)
        return out
    if isinstance(node, list):
        return [_without_pod_config(item) for item in node]
    return node


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_pod_config_adds_its_keys_and_changes_nothing_else(rendered, plain_examples, example):
    """Every other field is as rendered — ports, probes, requests and limits included (a typed object's converter
    drops them from a JSON patch: :mod:`inferstack.charts.rendered`)."""
    _, objects = rendered[example]
    plain = plain_examples[example]
    key = lambda o: (o["kind"], o["metadata"]["name"])  # noqa: E731 - a sort key
    assert sorted(map(_without_pod_config, objects), key=key) == sorted(plain, key=key)
