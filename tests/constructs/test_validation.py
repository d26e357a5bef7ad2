"""Constructs refuse bad props at construction, naming the prop, the value and what is valid (aws-eks-v2 style)."""

from __future__ import annotations

import dataclasses

import cdk8s
import pytest

from inferstack.constructs.model_source import ModelSourceProps, SourceKind, model_loading
from inferstack.constructs.pod import PodPlacement
from inferstack.constructs.validation import PropError
from inferstack.constructs.vllm import Autoscaling, EngineArgs, VllmServer, VllmServerProps

GOOD = VllmServerProps(
    name="qwen",
    namespace="team",
    image="vllm/vllm-openai:v0.19.0",
    model=model_loading(ModelSourceProps(kind=SourceKind.HF, model_id="Qwen/Qwen3-8B")),
    served_model_name="qwen",
    engine=EngineArgs(),
    service_account="qwen",
    requests={"cpu": "6", "memory": "48Gi", "nvidia.com/gpu": "1"},
    limits={"memory": "64Gi", "nvidia.com/gpu": "1"},
    placement=PodPlacement(tolerations=["nvidia.com/gpu"]),
    startup_seconds=600,
)


def build(props: VllmServerProps) -> list[dict]:
    chart = cdk8s.Chart(cdk8s.App(), "c")
    VllmServer(chart, "s", props)
    return chart.to_json()


def test_good_props_build_and_memory_limit_may_exceed_the_request():
    deployment = next(o for o in build(GOOD) if o["kind"] == "Deployment")
    resources = deployment["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert resources["requests"]["memory"] == "48Gi" and resources["limits"]["memory"] == "64Gi"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": "Qwen_8B"}, "name 'Qwen_8B' — must be lowercase"),
        ({"namespace": "x" * 64}, "namespace"),
        ({"service_account": "sa."}, "service_account"),
        ({"image": "vllm/vllm-openai:latest"}, "image 'vllm/vllm-openai:latest' — pin the image"),
        ({"image": "vllm/vllm-openai"}, "pin the image by tag or digest"),
        ({"requests": {"cpu": "six"}}, "requests['cpu'] 'six' — must be a Kubernetes quantity"),
        ({"limits": {"memory": "48Gi"}}, "limits['nvidia.com/gpu'] None — extended resources take a limit"),
        ({"startup_seconds": 5}, "startup_seconds 5 — must be ≥ 10"),
        ({"ports": {"metrics-port-too-long": 9000}}, "ports['metrics-port-too-long']"),
        ({"ports": {"zmq": 8000}}, "ports['zmq'] 8000"),
        ({"labels": {"app.kubernetes.io/name": "other"}}, "app.kubernetes.io/* labels select the pods"),
        ({"autoscaling": Autoscaling(kind="vpa")}, "autoscaling.kind 'vpa' — valid: hpa, keda"),
        ({"termination_grace_seconds": 20}, "termination_grace_seconds 20 leaves no time to drain"),
        ({"engine": EngineArgs(shutdown_timeout=200)}, "engine.shutdown_timeout 200s + preStop"),
    ],
)
def test_bad_props_name_the_prop_and_the_way_out(change, message):
    with pytest.raises(PropError, match="VllmServer") as error:
        build(dataclasses.replace(GOOD, **change))
    assert message in str(error.value)


def test_escape_hatches_reach_the_pod():
    props = dataclasses.replace(
        GOOD, labels={"team": "ml"}, annotations={"sidecar.istio.io/inject": "false"}, ports={"zmq": 5557}
    )
    deployment = next(o for o in build(props) if o["kind"] == "Deployment")
    template = deployment["spec"]["template"]
    assert template["metadata"]["labels"]["team"] == "ml"
    assert template["metadata"]["annotations"] == {"sidecar.istio.io/inject": "false"}
    ports = {p["name"]: p["containerPort"] for p in template["spec"]["containers"][0]["ports"]}
    assert ports == {"http": 8000, "zmq": 5557}
    assert deployment["spec"]["selector"]["matchLabels"].get("team") is None, "the selector stays fixed"


@pytest.mark.parametrize(
    ("kind", "missing"),
    [(SourceKind.S3, "bucket, prefix, region"), (SourceKind.S3_MOUNT, "claim_name"), (SourceKind.IMAGE, "image_path")],
)
def test_a_model_source_without_its_storage_is_refused(kind, missing):
    with pytest.raises(PropError, match=f"kind '{kind.value}' needs") as error:
        model_loading(ModelSourceProps(kind=kind, model_id="Qwen/Qwen3-8B"))
    assert f"missing {missing}" in str(error.value)
