"""Cache rules (CACHE-KIND, CACHE-HUB-SOURCE, CACHE-HUB-SIZE, CACHE-SHARED, CACHE-ZONE): compliant and non-compliant
cases, CACHE-KIND for every registered kind (its examples with a compile and a Hub cache)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from inferstack.catalog.models import MODELS
from inferstack.config import parse_config
from inferstack.config.edit import with_changes
from inferstack.config.kinds import KINDS
from inferstack.config.model import InferstackConfig
from inferstack.rules import caches, storage

ROOT = Path(__file__).resolve().parents[2]
CACHE = {"size_gib": 64}
#: The kinds that mount each cache (what the registry must say: a kind dropping out fails here).
COMPILE_KINDS = {"vllm", "sglang", "dynamo"}
HUB_KINDS = {"vllm", "sglang", "tgi"}

POOLS = {
    "karpenter_pools": [
        {"name": "gpu", "instance_families": ["g6e"]},
        {"name": "gpu-z0", "instance_families": ["g6e"], "availability_zone": 0},
        {"name": "inf2", "instance_types": ["inf2.xlarge"]},
    ]
}
HF_QWEN = {"id": "Qwen/Qwen3-8B", "source": {"type": "hf"}}
ARCH_70B = MODELS["meta-llama/Llama-3.1-70B-Instruct"]


def cfg(workload: dict[str, Any]) -> InferstackConfig:
    return parse_config({"compute": POOLS, "workloads": [{"name": "w", "pool": "gpu-z0", **workload}]})


def _rule(findings, rule: str) -> list:
    return [f for f in findings if f.rule == rule]


def _example(name: str) -> InferstackConfig:
    return parse_config(yaml.safe_load((ROOT / "examples" / name).read_text()))


def test_the_registry_declares_the_caches_each_kind_mounts():
    assert {k.name for k in KINDS.values() if k.compile_cache} == COMPILE_KINDS
    assert {k.name for k in KINDS.values() if k.hub_cache} == HUB_KINDS


KIND_CASES = [(kind.name, kind.examples[0]) for kind in KINDS.values() if kind.examples]


@pytest.mark.parametrize(("kind", "example"), KIND_CASES, ids=[k for k, _ in KIND_CASES])
@pytest.mark.parametrize("cache", ["compile", "huggingface"])
def test_cache_kind_judges_every_kind(kind: str, example: str, cache: str):
    config = _example(example)
    (index,) = [i for i, w in enumerate(config.workloads) if w.kind == kind][:1]
    changed = with_changes(config, {f"workloads[{index}].caches.{cache}": CACHE})
    assert changed is not None
    found = [f for f in caches.check_kind(changed) if f.path == f"workloads[{index}].caches.{cache}"]
    neuron = changed.pool(changed.workloads[index].pool).accelerator.value == "neuron"
    supported = kind in (COMPILE_KINDS if cache == "compile" else HUB_KINDS) and not (cache == "compile" and neuron)
    assert bool(found) is not supported, (kind, cache, found)


class TestKind:
    def test_compile_cache_on_vllm_gpu_is_compliant(self):
        assert list(caches.check_kind(cfg({"model": HF_QWEN, "caches": {"compile": CACHE}}))) == []

    def test_compile_cache_on_neuron_is_refused(self):
        config = cfg({"pool": "inf2", "model": {"id": "Qwen/Qwen3-8B"}, "caches": {"compile": CACHE}})
        (finding,) = caches.check_kind(config)
        assert finding.path == "workloads[0].caches.compile" and "model bucket" in finding.message

    def test_tgi_has_no_compile_cache(self):
        (finding,) = caches.check_kind(cfg({"kind": "tgi", "model": HF_QWEN, "caches": {"compile": CACHE}}))
        assert finding.fix == "remove caches.compile (kinds with one: vllm, sglang, dynamo)"


class TestHubSource:
    def test_hub_cache_of_a_hub_download_is_compliant(self):
        assert list(caches.check_hub_source(cfg({"model": HF_QWEN, "caches": {"huggingface": CACHE}}))) == []

    def test_hub_cache_of_a_bucket_model_is_refused(self):
        (finding,) = caches.check_hub_source(cfg({"model": {"id": "Qwen/Qwen3-8B"}, "caches": {"huggingface": CACHE}}))
        assert finding.path == "workloads[0].caches.huggingface" and "source.type is s3" in finding.message

    def test_the_emptydir_size_beside_a_hub_cache_is_refused(self):
        model = {**HF_QWEN, "source": {"type": "hf", "cache_size_gib": 50}}
        (finding,) = caches.check_hub_source(cfg({"model": model, "caches": {"huggingface": CACHE}}))
        assert finding.path == "workloads[0].model.source.cache_size_gib"


class TestHubSize:
    def test_a_cache_that_holds_the_checkpoint_is_compliant(self):
        assert list(caches.check_hub_size(cfg({"model": HF_QWEN, "caches": {"huggingface": CACHE}}))) == []

    def test_a_cache_smaller_than_the_checkpoint_is_refused(self):
        model = {"id": "meta-llama/Llama-3.1-70B-Instruct", "source": {"type": "hf"}}
        (finding,) = caches.check_hub_size(cfg({"model": model, "caches": {"huggingface": {"size_gib": 100}}}))
        needed = int(ARCH_70B.weights_gib * 1.05) + 1
        assert finding.path == "workloads[0].caches.huggingface.size_gib"
        assert finding.fix.startswith(f"set size_gib ≥ {needed} (") and needed > 100

    def test_the_node_disk_is_not_judged_for_a_download_into_a_hub_cache(self):
        """MODEL-DISK judges the emptyDir a download fills on the node; a Hub cache is a volume of its own."""
        model = {"id": "meta-llama/Llama-3.1-70B-Instruct", "source": {"type": "hf"}}
        assert list(storage.check_disk(cfg({"model": model})))  # the 100 GiB emptyDir cannot hold 140 GiB
        assert list(storage.check_disk(cfg({"model": model, "caches": {"huggingface": {"size_gib": 150}}}))) == []


class TestShared:
    def test_one_replica_is_compliant(self):
        assert list(caches.check_shared(cfg({"model": HF_QWEN, "caches": {"compile": CACHE}}))) == []

    @pytest.mark.parametrize(
        ("change", "why"),
        [
            ({"replicas": 2}, "it runs 2 replicas"),
            ({"autoscaling": {"max_replicas": 3}}, "autoscaling scales it to 3 replicas"),
        ],
    )
    def test_more_pods_than_one_are_refused(self, change: dict[str, Any], why: str):
        (finding,) = caches.check_shared(cfg({"model": HF_QWEN, "caches": {"compile": CACHE}, **change}))
        assert finding.path == "workloads[0].caches.compile.access_mode" and why in finding.message

    def test_aibrixs_autoscaler_is_more_pods_than_one(self):
        aibrix = {"autoscaler": {"max_replicas": 4}}
        (finding,) = caches.check_shared(cfg({"model": HF_QWEN, "caches": {"compile": CACHE}, "aibrix": aibrix}))
        assert "AIBrix's PodAutoscaler" in finding.message

    def test_a_cache_its_kind_refuses_is_judged_once(self):
        """A Neuron vLLM's compile cache: CACHE-KIND refuses it, and no other rule judges a volume never rendered."""
        config = cfg({"pool": "inf2", "model": {"id": "Qwen/Qwen3-8B"}, "caches": {"compile": CACHE}, "replicas": 2})
        assert list(caches.check_shared(config)) == [] and list(caches.check_zone(config)) == []
        assert [f.rule for f in caches.check_kind(config)] == ["CACHE-KIND"]

    def test_readwritemany_is_shared(self):
        shared = {"size_gib": 64, "storage_class": "efs", "access_mode": "ReadWriteMany"}
        config = cfg({"model": HF_QWEN, "caches": {"compile": shared}, "replicas": 3})
        assert list(caches.check_shared(config)) == []


class TestZone:
    def test_a_pool_in_one_zone_is_compliant(self):
        assert list(caches.check_zone(cfg({"model": HF_QWEN, "caches": {"compile": CACHE}}))) == []

    def test_a_pool_across_zones_warns(self):
        (finding,) = caches.check_zone(cfg({"pool": "gpu", "model": HF_QWEN, "caches": {"compile": CACHE}}))
        assert finding.severity.value == "warning" and finding.path == "workloads[0].caches.compile"

    def test_readwritemany_has_no_zone(self):
        shared = {"size_gib": 64, "storage_class": "efs", "access_mode": "ReadWriteMany"}
        assert list(caches.check_zone(cfg({"pool": "gpu", "model": HF_QWEN, "caches": {"compile": shared}}))) == []


EFS_CACHE = {"size_gib": 64, "storage_class": "inferstack-efs", "access_mode": "ReadWriteMany"}


class TestEfs:
    def test_an_efs_cache_with_storage_efs_is_compliant(self):
        data = {"compute": POOLS, "storage": {"efs": {}}}
        data["workloads"] = [{"name": "w", "pool": "gpu", "model": HF_QWEN, "caches": {"compile": EFS_CACHE}}]
        assert list(caches.check_efs(parse_config(data))) == []

    def test_an_efs_cache_without_storage_efs_is_refused(self):
        (finding,) = caches.check_efs(cfg({"model": HF_QWEN, "caches": {"compile": EFS_CACHE}}))
        assert finding.path == "workloads[0].caches.compile.storage_class" and "storage.efs" in finding.fix

    def test_an_efs_cache_on_a_pool_across_zones_has_no_zone_warning(self):
        data = {"compute": POOLS, "storage": {"efs": {}}}
        data["workloads"] = [{"name": "w", "pool": "gpu", "model": HF_QWEN, "caches": {"compile": EFS_CACHE}}]
        assert list(caches.check_zone(parse_config(data))) == []

    def test_an_efs_cache_sized_below_the_checkpoint_is_not_judged(self):
        """EFS grows as needed and ignores the size a claim asks for."""
        model = {"id": "meta-llama/Llama-3.1-70B-Instruct", "source": {"type": "hf"}}
        small = {**EFS_CACHE, "size_gib": 8}
        assert list(caches.check_hub_size(cfg({"model": model, "caches": {"huggingface": small}}))) == []


def test_an_operator_that_rolls_its_pods_out_needs_a_shared_cache():
    """Dynamo's operator makes the worker Deployments: inferstack cannot give them Recreate, so even one worker's
    ReadWriteOnce cache would block its rollout."""
    config = _example("dynamo-disagg-efa.yaml")
    once = with_changes(config, {"workloads[0].caches.compile": CACHE})
    (finding,) = caches.check_shared(once)
    assert "dynamo operator" in finding.message and finding.fix.startswith("give the cache storage_class: inferstack")
    shared = {"size_gib": 64, "storage_class": "inferstack-efs", "access_mode": "ReadWriteMany"}
    assert list(caches.check_shared(with_changes(config, {"workloads[0].caches.compile": shared}))) == []
