"""The NIM operator, Dynamo and AIBrix projections (inferstack/gates/nim.py, dynamo.py, aibrix.py): the pods each
operator makes from our custom resources, and what those pods need of ours — held to the examples that emit them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from inferstack.gates.aibrix import adapter_load_problems
from inferstack.gates.dynamo import WORKER_HASH, dynamo_pods
from inferstack.gates.nim import nim_claims, nim_pods
from inferstack.gates.pod_security import Level, check_manifests, namespace_levels
from inferstack.gates.references import selector_matches


def _by_name(pods: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in pods}


@pytest.fixture(scope="module")
def nim_objects(nim_app) -> list[dict[str, Any]]:
    return nim_app.kubernetes_objects()


@pytest.fixture(scope="module")
def dynamo_objects(dynamo_app) -> list[dict[str, Any]]:
    return dynamo_app.kubernetes_objects()


@pytest.fixture(scope="module")
def dynamo_projected(dynamo_objects) -> dict[str, dict[str, Any]]:
    return _by_name(list(dynamo_pods(dynamo_objects)))


@pytest.fixture(scope="module")
def aibrix_objects(aibrix_app) -> list[dict[str, Any]]:
    return aibrix_app.kubernetes_objects()


class TestNim:
    @pytest.fixture
    def objects(self, nim_objects) -> list[dict[str, Any]]:
        return nim_objects

    def test_the_operator_makes_a_deployment_pod_a_manifest_pod_and_a_job_pod(self, objects):
        assert sorted(_by_name(list(nim_pods(objects)))) == ["llama-70b-0", "llama-70b-job-0", "llama-70b-pod"]

    def test_the_operators_labels_win_over_ours(self, objects):
        pod = _by_name(list(nim_pods(objects)))["llama-70b-0"]
        labels = pod["metadata"]["labels"]
        assert labels["app"] == "llama-70b" and labels["app.kubernetes.io/part-of"] == "nim-service"
        assert labels["app.kubernetes.io/component"] == "nim"  # ours, where the operator sets none

    def test_the_serving_pod_mounts_the_claim_the_cache_creates(self, objects):
        pod = _by_name(list(nim_pods(objects)))["llama-70b-0"]
        claims = {c["metadata"]["name"] for c in nim_claims(objects)}
        mounted = {
            v["persistentVolumeClaim"]["claimName"] for v in pod["spec"]["volumes"] if "persistentVolumeClaim" in v
        }
        assert mounted and mounted <= claims

    def test_the_cache_job_is_limited_to_what_it_requests(self, objects):
        job = _by_name(list(nim_pods(objects)))["llama-70b-job-0"]
        (container,) = job["spec"]["containers"]
        assert container["resources"]["requests"] == container["resources"]["limits"] == {"cpu": "4", "memory": "16Gi"}

    def test_the_nim_pod_needs_a_baseline_namespace(self, nim_app, objects):
        """The operator gives the NIM container no securityContext (manifests/deployment.yaml:70-104) and no field
        to set one: under ``restricted`` its pods are refused, so the NIM namespace must stay at ``baseline``."""
        pods = list(nim_pods(objects))
        namespace = pods[0]["metadata"]["namespace"]
        assert namespace_levels(objects)[namespace] is Level.BASELINE
        assert check_manifests(pods, {namespace: Level.BASELINE}) == []
        refused = {f.ref for f in check_manifests(pods, {namespace: Level.RESTRICTED})}
        assert "Pod/nim/llama-70b-0" in refused


class TestDynamo:
    @pytest.fixture
    def objects(self, dynamo_objects) -> list[dict[str, Any]]:
        return dynamo_objects

    @pytest.fixture
    def pods(self, dynamo_projected) -> dict[str, dict[str, Any]]:
        return dynamo_projected

    def test_one_pod_per_component(self, pods):
        assert sorted(pods) == [
            "llama-pd-decode-" + WORKER_HASH + "-0",
            "llama-pd-frontend-0",
            "llama-pd-prefill-" + WORKER_HASH + "-0",
        ]

    def test_the_zone_affinity_selects_the_other_workers_pods(self, pods):
        """Prefill and decode share a zone only if the affinity's selector matches the labels the operator puts on
        the worker pods."""
        workers = [p for n, p in pods.items() if "frontend" not in n]
        for pod in workers:
            terms = pod["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            for term in terms:
                matched = [p for p in workers if selector_matches(term["labelSelector"], p["metadata"]["labels"])]
                assert len(matched) == len(workers), term

    def test_main_keeps_our_env_and_gets_the_operators(self, pods):
        main = pods["llama-pd-prefill-" + WORKER_HASH + "-0"]["spec"]["containers"][0]
        env = {e["name"]: e.get("value") for e in main["env"]}
        assert env["DYN_SYSTEM_PORT"] == "9090" and env["DYN_DISCOVERY_BACKEND"] == "kubernetes"
        assert env["FI_PROVIDER"] == "efa"  # ours, kept
        assert [e["name"] for e in main["env"]] == sorted(env)

    def test_shared_memory_and_the_discovery_account(self, objects, pods):
        graph = next(o for o in objects if o["kind"] == "DynamoGraphDeployment")
        sizes = {c["name"]: c["sharedMemorySize"] for c in graph["spec"]["components"]}
        for name, pod in pods.items():
            component = name.removeprefix("llama-pd-").split("-")[0]
            (shm,) = [v for v in pod["spec"]["volumes"] if v["name"] == "shared-memory"]
            assert shm["emptyDir"] == {"medium": "Memory", "sizeLimit": sizes[component]}
            assert pod["spec"]["serviceAccountName"] == "llama-pd-k8s-service-discovery"

    def test_the_pod_monitors_ports_are_on_the_pods(self, objects, pods):
        for monitor in (o for o in objects if o["kind"] == "PodMonitor" and o["metadata"]["namespace"] == "dynamo"):
            selected = [
                p for p in pods.values() if selector_matches(monitor["spec"]["selector"], p["metadata"]["labels"])
            ]
            assert selected, monitor["metadata"]["name"]
            for pod in selected:
                names = {p.get("name") for c in pod["spec"]["containers"] for p in c.get("ports") or []}
                assert {e["port"] for e in monitor["spec"]["podMetricsEndpoints"]} <= names


class TestAibrixLoadPath:
    @pytest.fixture
    def objects(self, aibrix_objects) -> list[dict[str, Any]]:
        return aibrix_objects

    def test_every_adapter_loads(self, objects):
        assert any(o["kind"] == "ModelAdapter" for o in objects)
        assert adapter_load_problems(objects) == []

    @staticmethod
    def _engine(objects: list[dict[str, Any]]) -> dict[str, Any]:
        deployment = next(
            o
            for o in objects
            if o["kind"] == "Deployment" and "model.aibrix.ai/name" in o["spec"]["template"]["metadata"]["labels"]
        )
        return next(c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "vllm")

    @pytest.mark.parametrize(
        ("mutation", "message"),
        [
            ("no-enable-lora", "without --enable-lora"),
            ("no-runtime-updating", "VLLM_ALLOW_RUNTIME_LORA_UPDATING"),
            ("hf-scheme", "reaches vLLM unrewritten"),
            ("selector", "selects no pod"),
            ("watch-label", "watches only pods labelled"),
        ],
    )
    def test_the_gate_names_what_breaks_the_load(self, objects, mutation: str, message: str):
        broken = copy.deepcopy(objects)
        adapter = next(o for o in broken if o["kind"] == "ModelAdapter")
        engine = self._engine(broken)
        if mutation == "no-enable-lora":
            engine["args"] = [a for a in engine["args"] if a != "--enable-lora"]
        elif mutation == "no-runtime-updating":
            engine["env"] = [e for e in engine["env"] if e["name"] != "VLLM_ALLOW_RUNTIME_LORA_UPDATING"]
        elif mutation == "hf-scheme":
            adapter["spec"]["artifactURL"] = adapter["spec"]["artifactURL"].replace("huggingface://", "hf://")
        elif mutation == "selector":
            adapter["spec"]["podSelector"]["matchLabels"]["model.aibrix.ai/name"] = "someone-else"
        else:
            deployment = next(
                o
                for o in broken
                if o["kind"] == "Deployment" and "model.aibrix.ai/name" in o["spec"]["template"]["metadata"]["labels"]
            )
            adapter["spec"]["podSelector"]["matchLabels"].pop("adapter.model.aibrix.ai/enabled")
            deployment["spec"]["template"]["metadata"]["labels"].pop("adapter.model.aibrix.ai/enabled")
        problems = adapter_load_problems(broken)
        assert any(message in p for p in problems), problems
