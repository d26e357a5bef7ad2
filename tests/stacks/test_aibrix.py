"""GIVEN a ``vllm`` workload with ``aibrix`` (examples/aibrix-lora.yaml), WHEN rendered, THEN its Deployment, pods and
Service carry one name for AIBrix's router, vLLM loads LoRA at runtime with flags the pinned vLLM has, each adapter is
a ModelAdapter selecting those pods, and the PodAutoscaler targets the Deployment with a registry metric."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferstack.catalog.engine_flags import vllm_flags
from inferstack.catalog.versions import ENGINE_VLLM_VERSIONS
from inferstack.charts.workload import StorageRefs
from inferstack.config import ConfigError, load_config, parse_config
from inferstack.gates.references import selector_matches
from inferstack.plan.workloads import workloads_plan
from inferstack.stacks.workloads import render_workloads
from tests.synth import SYNC_IMAGE

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "aibrix-lora.yaml"


@pytest.fixture(scope="module")
def objects() -> list[dict]:
    (item,) = render_workloads(
        workloads_plan(load_config(EXAMPLE)),
        None,
        StorageRefs(region="us-east-1", bucket="models", sync_image=SYNC_IMAGE),
    )
    return item.manifest


def one(objects: list[dict], kind: str) -> dict:
    (obj,) = [o for o in objects if o["kind"] == kind and "sync" not in o["metadata"]["name"]]
    return obj


def test_one_name_for_label_service_and_served_model(objects):
    deployment, service = one(objects, "Deployment"), one(objects, "Service")
    name = deployment["metadata"]["labels"]["model.aibrix.ai/name"]
    assert name == service["metadata"]["name"] == "qwen-coder"
    assert deployment["metadata"]["labels"]["model.aibrix.ai/port"] == "8000"
    template = deployment["spec"]["template"]
    assert template["metadata"]["labels"]["adapter.model.aibrix.ai/enabled"] == "true"
    (container,) = template["spec"]["containers"]
    assert container["args"][container["args"].index("--served-model-name") + 1] == name


def test_runtime_lora_with_pinned_vllm_flags(objects):
    (container,) = one(objects, "Deployment")["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    assert "--enable-lora" in args and args[args.index("--max-loras") + 1] == "4"
    flags = vllm_flags(ENGINE_VLLM_VERSIONS["vllm-gpu"])
    assert all(flags.knows(f) for f in ("--enable-lora", "--max-loras", "--max-lora-rank"))
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] == "True"
    assert "HF_HUB_OFFLINE" not in env  # adapters come from the Hub


def test_adapters_select_the_base_pods(objects):
    adapter = one(objects, "ModelAdapter")
    template = one(objects, "Deployment")["spec"]["template"]
    assert selector_matches(adapter["spec"]["podSelector"], template["metadata"]["labels"])
    assert adapter["spec"]["artifactURL"].startswith("huggingface://")
    assert adapter["metadata"]["labels"]["model.aibrix.ai/name"] == adapter["metadata"]["name"]


def test_pod_autoscaler_targets_the_deployment(objects):
    scaler, deployment = one(objects, "PodAutoscaler"), one(objects, "Deployment")
    assert scaler["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "qwen-coder"}
    (source,) = scaler["spec"]["metricsSources"]
    assert source["targetMetric"] == "num_requests_waiting" and source["port"] == "8000"  # a registry key
    assert "replicas" not in deployment["spec"]  # the PodAutoscaler owns them: a re-apply must not reset them


def test_a_gateway_routes_to_the_names_aibrix_serves():
    from inferstack.plan.endpoints import endpoint_of

    (workload,) = load_config(EXAMPLE).workloads
    assert endpoint_of(workload).models == ("qwen-coder", "qwen-coder-sql")


@pytest.mark.parametrize(
    ("aibrix", "extra", "path", "words"),
    [
        (
            {"adapters": [{"name": "a", "artifact": "s3://b/a", "base_model": "Qwen/Qwen3-8B"}]},
            {},
            "aibrix.adapters[0].artifact",
            "static keys",
        ),
        ({"autoscaler": {}}, {"autoscaling": {}}, "autoscaling", "fight"),
        ({}, {"model": {"id": "Qwen/Qwen3-8B", "served_name": "other"}}, "model.served_name", "model.aibrix.ai/name"),
        (
            {"adapters": [{"name": "a", "artifact": "hf://org/a", "base_model": "Qwen/Qwen3-8B"}]},
            {},
            "aibrix.adapters[0].artifact",
            "huggingface://",
        ),
        ({"max_lora_rank": 48}, {}, "aibrix.max_lora_rank", "320"),
        ({"autoscaler": {"metric": "gpu_cache_usage_perc"}}, {}, "aibrix.autoscaler.metric", "must be one of"),
    ],
)
def test_bad_aibrix_fields_are_named(aibrix, extra, path, words):
    workload = {"name": "q", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}, "aibrix": aibrix, **extra}
    with pytest.raises(ConfigError) as error:
        parse_config(
            {
                "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]},
                "workloads": [workload],
            }
        )
    problems = {p.path: p.message for p in error.value.problems}
    assert f"workloads[0].{path}" in problems, problems
    assert words in problems[f"workloads[0].{path}"]
