"""GIVEN a workload with ``caches``, WHEN rendered, THEN each cache is a claim of the workload, mounted where its engine
keeps that cache (vLLM's cache root, SGLang's ``SGLANG_CACHE_DIR``, ``HF_HOME`` of a Hub download), a ReadWriteOnce
cache replaces pods by stopping the old one first, the kubelet does not chown the cache at every start, and the
plan installs the StorageClass the claims name."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from inferstack.config import ConfigError, parse_config
from inferstack.plan.workloads import workloads_plan
from tests.charts.conftest import render
from tests.synth import ROOT

CACHE = {"size_gib": 64}
SHARED = {"size_gib": 64, "storage_class": "efs-sc", "access_mode": "ReadWriteMany"}
EFS = {"size_gib": 64, "storage_class": "inferstack-efs", "access_mode": "ReadWriteMany"}
GPU = {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"], "availability_zone": 0}]}
HF_QWEN = {"id": "Qwen/Qwen3-8B", "source": {"type": "hf"}}


def config(workload: dict[str, Any]) -> dict[str, Any]:
    return {"compute": GPU, "workloads": [{"name": "w", "namespace": "llm", "pool": "gpu", **workload}]}


def deployment(objects: list[dict[str, Any]]) -> dict[str, Any]:
    (obj,) = [o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "w"]
    return obj


def claims(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == "PersistentVolumeClaim"}


def mounts(dep: dict[str, Any]) -> dict[str, str]:
    """mount path → the claim mounted there (emptyDirs as ``emptyDir``)."""
    spec = dep["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    found = {}
    for m in spec["containers"][0]["volumeMounts"]:
        volume = volumes[m["name"]]
        found[m["mountPath"]] = (
            volume["persistentVolumeClaim"]["claimName"] if "persistentVolumeClaim" in volume else ("emptyDir")
        )
    return found


def env(dep: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value") for e in dep["spec"]["template"]["spec"]["containers"][0]["env"]}


@pytest.fixture(scope="module")
def vllm() -> list[dict[str, Any]]:
    return render(config({"model": HF_QWEN, "caches": {"compile": CACHE, "huggingface": CACHE}}))


class TestVllm:
    def test_each_cache_is_a_claim_of_the_workload(self, vllm):
        found = claims(vllm)
        assert set(found) == {"w-compile-cache", "w-hf-cache"}
        spec = found["w-compile-cache"]["spec"]
        assert spec == {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "64Gi"}},
            "storageClassName": "inferstack-gp3",  # small files read once: gp3's baseline, not 16,000 IOPS
        }
        assert found["w-hf-cache"]["spec"]["storageClassName"] == "inferstack-model-cache"  # the weights, each start
        assert found["w-hf-cache"]["metadata"]["namespace"] == "llm"

    def test_the_compile_cache_holds_every_cache_the_engine_writes(self, vllm):
        dep = deployment(vllm)
        assert mounts(dep)["/home/vllm/.cache"] == "w-compile-cache"
        variables = env(dep)
        for name in ("VLLM_CACHE_ROOT", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "CUDA_CACHE_PATH"):
            assert variables[name].startswith("/home/vllm/.cache/"), name

    def test_the_hub_download_goes_to_its_claim(self, vllm):
        dep = deployment(vllm)
        assert mounts(dep)[env(dep)["HF_HOME"]] == "w-hf-cache"

    def test_pods_are_replaced_by_stopping_the_old_one_first(self, vllm):
        assert deployment(vllm)["spec"]["strategy"] == {"type": "Recreate"}

    def test_the_kubelet_chowns_a_cache_only_when_its_root_is_not_the_pods_group(self, vllm):
        context = deployment(vllm)["spec"]["template"]["spec"]["securityContext"]
        assert context["fsGroup"] == 1000 and context["fsGroupChangePolicy"] == "OnRootMismatch"

    def test_the_plan_installs_the_storage_classes_the_claims_name(self):
        data = config({"model": HF_QWEN, "caches": {"compile": CACHE, "huggingface": CACHE}})
        (workload,) = workloads_plan(parse_config(data)).workloads
        assert {"model-cache", "gp3-storage"} <= workload.operators
        data = config({"model": HF_QWEN, "caches": {"compile": SHARED}})
        (workload,) = workloads_plan(parse_config(data)).workloads
        assert not {"model-cache", "gp3-storage", "efs-storage"} & workload.operators
        data = config({"model": HF_QWEN, "caches": {"compile": EFS}})
        data["storage"] = {"efs": {}}
        (workload,) = workloads_plan(parse_config(data)).workloads
        assert "efs-storage" in workload.operators


def test_the_efs_class_lives_as_long_as_storage_efs():
    """Not only while a cache names it: a cache taken out and put back must find it there."""
    data = config({"model": HF_QWEN})
    data["storage"] = {"efs": {}}
    assert "efs-storage" in workloads_plan(parse_config(data)).operators


def test_every_cache_mount_sits_on_a_volume_root():
    """A mount nested in a directory no volume provides makes the runtime create that directory, owned by root:
    the serving uid could no longer write beside the mount (SGLang's ``~/.cache`` before the mount moved up)."""
    for kind in ("vllm", "sglang"):
        dep = deployment(render(config({"kind": kind, "model": HF_QWEN, "caches": {"compile": CACHE}})))
        paths = set(mounts(dep))
        for path in paths:
            parent = path.rsplit("/", 1)[0] or "/"
            nested = [p for p in paths if path.startswith(p + "/")]
            assert not nested or parent in paths, (kind, path, nested)


def test_a_shared_cache_keeps_the_rolling_update():
    objects = render(config({"model": HF_QWEN, "replicas": 2, "caches": {"compile": SHARED}}))
    dep = deployment(objects)
    assert dep["spec"].get("strategy", {}).get("type") != "Recreate"
    assert claims(objects)["w-compile-cache"]["spec"]["accessModes"] == ["ReadWriteMany"]
    assert claims(objects)["w-compile-cache"]["spec"]["storageClassName"] == "efs-sc"


def test_without_caches_nothing_changes():
    objects = render(config({"model": HF_QWEN}))
    dep = deployment(objects)
    assert not claims(objects) and mounts(dep)["/cache/huggingface"] == "emptyDir"
    assert "fsGroupChangePolicy" not in dep["spec"]["template"]["spec"]["securityContext"]


def test_sglang_mounts_its_compile_cache_at_its_cache_root():
    """``~/.cache`` itself: SGLANG_CACHE_DIR (where 0.5.19 puts every JIT cache) lies inside it."""
    objects = render(config({"kind": "sglang", "model": HF_QWEN, "caches": {"compile": CACHE}}))
    dep = deployment(objects)
    assert mounts(dep)["/home/sglang/.cache"] == "w-compile-cache"
    assert env(dep)["SGLANG_CACHE_DIR"].startswith("/home/sglang/.cache/")
    assert dep["spec"]["strategy"] == {"type": "Recreate"}


def test_tgi_downloads_into_its_hub_cache():
    objects = render(config({"kind": "tgi", "model": HF_QWEN, "caches": {"huggingface": CACHE}}))
    dep = deployment(objects)
    assert mounts(dep)[env(dep)["HF_HOME"]] == "w-hf-cache"
    assert dep["spec"]["strategy"] == {"type": "Recreate"}


def test_a_cache_its_kind_does_not_use_renders_nothing():
    """A Neuron vLLM's compile cache (CACHE-KIND refuses it): no claim, no mount."""
    data = yaml.safe_load((ROOT / "examples" / "vllm-neuron-inf2.yaml").read_text())
    data["workloads"][0]["caches"] = {"compile": CACHE}
    assert not claims(render(data))


@pytest.mark.parametrize(
    ("cache", "path", "words"),
    [
        ({"size_gib": 20}, "workloads[0].caches.huggingface.size_gib", "at least 32 GiB"),
        ({"size_gib": 64, "access_mode": "ReadWriteMany"}, "workloads[0].caches.compile.access_mode", "storage.efs"),
        (
            {"size_gib": 64, "storage_class": "inferstack-efs"},
            "workloads[0].caches.compile.access_mode",
            "ReadWriteMany",
        ),
        (
            {"size_gib": 20, "storage_class": "inferstack-model-cache"},
            "workloads[0].caches.compile.size_gib",
            "at least 32 GiB",
        ),
        ({"size_gib": 64, "access_mode": "ReadWriteSometimes"}, "workloads[0].caches.compile.access_mode", "Read"),
        ({"size_gib": 64, "storage_class": "Not_A_Name"}, "workloads[0].caches.compile.storage_class", "Kubernetes"),
        ({}, "workloads[0].caches.compile.size_gib", "required"),
    ],
)
def test_a_bad_cache_is_a_config_error_naming_the_field(cache: dict[str, Any], path: str, words: str):
    cache_name = path.split(".")[2]
    with pytest.raises(ConfigError) as raised:
        parse_config(config({"model": HF_QWEN, "caches": {cache_name: cache}}))
    text = str(raised.value)
    assert path in text and words in text, text


def test_a_small_cache_on_a_class_of_your_own_is_yours_to_size():
    small = {"size_gib": 8, "storage_class": "efs-sc"}
    assert parse_config(config({"model": HF_QWEN, "caches": {"compile": small}})).workloads[0].caches.compile


def test_dynamo_workers_get_the_compile_cache_through_the_operator():
    """The DGD's workers name the claim in ``compilationCache`` at a path under the runtime's home (the operator's
    vLLM default ``/root/.cache/vllm`` is not the uid 1000's); their pod templates carry the volume under the
    claim's name (the operator keeps a mount of its name and path), the frontend nothing; the pods the operator
    makes (gates/dynamo.py) mount it once with ``VLLM_CACHE_ROOT`` there and skip the chown."""
    from inferstack.gates.dynamo import dynamo_pods

    data = yaml.safe_load((ROOT / "examples" / "dynamo-disagg-efa.yaml").read_text())
    data["workloads"][0]["caches"] = {"compile": SHARED}
    objects = render(data)
    (graph,) = [o for o in objects if o["kind"] == "DynamoGraphDeployment"]
    claim = "llama-pd-compile-cache"
    assert claim in claims(objects)
    by_name = {c["name"]: c for c in graph["spec"]["components"]}
    assert "compilationCache" not in by_name["frontend"]
    for role in ("prefill", "decode"):
        assert by_name[role]["compilationCache"] == {"pvcName": claim, "mountPath": "/home/dynamo/.cache/vllm"}
    for pod in dynamo_pods([graph]):
        main = pod["spec"]["containers"][0]
        cached = [m for m in main.get("volumeMounts", []) if m["name"] == claim]
        roots = [e["value"] for e in main["env"] if e["name"] == "VLLM_CACHE_ROOT"]
        if pod["metadata"]["name"].startswith("llama-pd-frontend"):
            assert not cached and not roots
            continue
        assert cached == [{"mountPath": "/home/dynamo/.cache/vllm", "name": claim}]
        assert roots == ["/home/dynamo/.cache/vllm"]
        (volume,) = [v for v in pod["spec"]["volumes"] if v["name"] == claim]
        assert volume["persistentVolumeClaim"] == {"claimName": claim}
        assert pod["spec"]["securityContext"]["fsGroupChangePolicy"] == "OnRootMismatch"
        variables = {e["name"]: e.get("value") for e in main["env"]}
        assert variables["FLASHINFER_WORKSPACE_BASE"] == "/home/dynamo/.cache/vllm"
        assert variables["CUDA_CACHE_PATH"].startswith("/home/dynamo/.cache/vllm/")
