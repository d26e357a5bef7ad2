"""GIVEN a ``triton`` workload (examples/triton-vllm.yaml), WHEN synthesized, THEN Triton serves the generated vLLM
repository on 8000/8001/8002 with its own health endpoints as probes, metrics scraped from 8002, the GPUs and
placement of the plan, and a model.json whose every key is a vLLM engine argument."""

from __future__ import annotations

import json

import pytest

from inferstack.catalog.engine_flags import vllm_flags
from inferstack.config import ConfigError, parse_config

#: The vendored vLLM flag lists around Triton 26.10's vLLM (not in the notes seen; NVIDIA's vLLM 26.10 has 0.31.0).
VLLM_LISTS = ("0.19.0", "0.33.0")
POOLS = {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]}
TRITON = {"kind": "triton", "name": "t", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B", "source": {"type": "hf"}}}


def of_kind(app, kind: str, name: str | None = None) -> dict:
    (obj,) = [
        o for o in app.kubernetes_objects() if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    ]
    return obj


def container(app) -> dict:
    (c,) = of_kind(app, "Deployment")["spec"]["template"]["spec"]["containers"]
    return c


def test_ports_and_the_service(triton_app):
    ports = {p["name"]: p["containerPort"] for p in container(triton_app)["ports"]}
    assert ports == {"http": 8000, "grpc": 8001, "metrics": 8002}
    service = of_kind(triton_app, "Service")
    assert {p["name"]: (p["port"], p["targetPort"]) for p in service["spec"]["ports"]} == {
        "http": (8000, "http"),
        "grpc": (8001, "grpc"),
        "metrics": (8002, "metrics"),
    }
    args = container(triton_app)["args"]
    assert {"--http-port=8000", "--grpc-port=8001", "--metrics-port=8002"} <= set(args)


def test_probes_use_tritons_health_endpoints(triton_app):
    c = container(triton_app)
    assert c["readinessProbe"]["httpGet"] == {"path": "/v2/health/ready", "port": 8000}
    assert c["startupProbe"]["httpGet"] == {"path": "/v2/health/ready", "port": 8000}
    assert c["livenessProbe"]["httpGet"] == {"path": "/v2/health/live", "port": 8000}


def test_metrics_are_scraped_from_8002(triton_app):
    monitor = of_kind(triton_app, "PodMonitor")
    assert monitor["spec"]["podMetricsEndpoints"] == [{"port": "metrics", "path": "/metrics", "interval": "15s"}]
    repository = of_kind(triton_app, "ConfigMap", "qwen-triton-model-repository")
    assert 'key: "REPORT_CUSTOM_METRICS"' in repository["data"]["config.pbtxt"]
    assert json.loads(repository["data"]["model.json"])["disable_log_stats"] is False


def test_gpus_and_placement(triton_app):
    resources = container(triton_app)["resources"]
    assert resources["requests"]["nvidia.com/gpu"] == resources["limits"]["nvidia.com/gpu"] == "1"
    spec = of_kind(triton_app, "Deployment")["spec"]
    assert spec["replicas"] == 2
    assert spec["template"]["spec"]["nodeSelector"] == {"inferstack.io/pool": "l40s"}


def test_the_repository_is_the_vllm_backend_layout(triton_app):
    repository = of_kind(triton_app, "ConfigMap", "qwen-triton-model-repository")
    assert repository["data"]["config.pbtxt"].startswith('backend: "vllm"\n')
    assert "kind: KIND_MODEL" in repository["data"]["config.pbtxt"]
    volumes = {v["name"]: v for v in of_kind(triton_app, "Deployment")["spec"]["template"]["spec"]["volumes"]}
    items = volumes["model-repository"]["configMap"]["items"]
    assert items == [
        {"key": "config.pbtxt", "path": "qwen-triton/config.pbtxt"},
        {"key": "model.json", "path": "qwen-triton/1/model.json"},
    ]
    mounts = {m["name"]: m["mountPath"] for m in container(triton_app)["volumeMounts"]}
    assert f"--model-repository={mounts['model-repository']}" in container(triton_app)["args"]


def test_model_json_holds_vllm_engine_arguments(triton_app):
    repository = of_kind(triton_app, "ConfigMap", "qwen-triton-model-repository")
    engine_args = json.loads(repository["data"]["model.json"])
    assert engine_args["model"] == "/models" and engine_args["max_model_len"] == 16384
    for key in engine_args:
        flag = "--" + key.replace("_", "-")
        assert all(vllm_flags(v).knows(flag) for v in VLLM_LISTS), key


def test_drains_within_the_grace_period(triton_app):
    spec = of_kind(triton_app, "Deployment")["spec"]["template"]["spec"]
    (timeout,) = [a for a in container(triton_app)["args"] if a.startswith("--exit-timeout-secs=")]
    pre_stop = container(triton_app)["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert int(timeout.split("=")[1]) + pre_stop < spec["terminationGracePeriodSeconds"]


def test_hf_source_passes_the_revision():
    from inferstack.charts.triton import model_json

    (workload,) = parse_config(
        {"compute": POOLS, "workloads": [{**TRITON, "model": {**TRITON["model"], "revision": "v2"}}]}
    ).workloads
    assert model_json(workload, "Qwen/Qwen3-8B")["revision"] == "v2"


@pytest.mark.parametrize(
    ("fields", "path", "words"),
    [
        ({"engine": {"extra_args": ["--seed", "1"]}}, "workloads[0].engine.extra_args", "model.json"),
        ({"engine": {"tool_calling": {}}}, "workloads[0].engine.tool_calling", "v2"),
        ({"model": {"id": "Qwen/Qwen3-8B"}}, "workloads[0].model.source.type", "s3_mount"),
        ({"autoscaling": {}}, "workloads[0].autoscaling", "replicas"),
        ({"image": "nvcr.io/nvidia/tritonserver:latest"}, "workloads[0].image", "pinned"),
    ],
)
def test_bad_fields_are_named(fields, path, words):
    with pytest.raises(ConfigError) as error:
        parse_config({"compute": POOLS, "workloads": [{**TRITON, **fields}]})
    problems = {p.path: p.message for p in error.value.problems}
    assert path in problems, problems
    assert words in problems[path]
