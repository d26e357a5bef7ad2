"""PREFIX-OVERLAP: one model per bucket prefix, no nested prefixes, nothing under the benchmarks' results tree."""

from __future__ import annotations

from typing import Any

from inferstack.config import parse_config
from inferstack.rules import prefix_overlap

POOLS = {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]}


def _workload(name: str, model: str = "Qwen/Qwen3-8B", prefix: str | None = None, **source: Any) -> dict:
    spec: dict[str, Any] = {"id": model}
    if prefix is not None or source:
        spec["source"] = {**({"prefix": prefix} if prefix else {}), **source}
    return {"name": name, "pool": "gpu", "model": spec}


def _findings(*workloads: dict) -> list[tuple[str, str]]:
    config = parse_config({"compute": POOLS, "workloads": list(workloads)})
    return [(f.path, f.message) for f in prefix_overlap.check(config)]


def test_the_same_model_may_share_its_prefix():
    assert _findings(_workload("a"), _workload("b")) == []


def test_another_model_on_the_same_prefix_is_refused():
    ((path, message),) = _findings(_workload("a"), _workload("b", "Qwen/Qwen3-14B", "models/Qwen/Qwen3-8B/main/"))
    assert path == "workloads[1].model.source.prefix" and "already holds Qwen/Qwen3-8B@main" in message


def test_another_revision_on_the_same_prefix_is_refused():
    a = _workload("a", prefix="models/qwen/")
    b = {
        **_workload("b", prefix="models/qwen/"),
        "model": {"id": "Qwen/Qwen3-8B", "revision": "v2", "source": {"prefix": "models/qwen/"}},
    }
    ((path, message),) = _findings(a, b)
    assert path == "workloads[1].model.source.prefix" and "Qwen/Qwen3-8B@v2" in message


def test_nested_prefixes_are_refused():
    ((path, message),) = _findings(_workload("a", prefix="models/"), _workload("b", "Qwen/Qwen3-14B"))
    assert path == "workloads[1].model.source.prefix" and "the sync of models/ would delete" in message


def test_a_model_under_the_bench_tree_is_refused():
    ((path, message),) = _findings(_workload("a", prefix="bench/models/"))
    assert path == "workloads[0].model.source.prefix" and "bench/" in message


def test_a_hub_model_has_no_prefix_to_share():
    assert _findings(_workload("a", prefix="models/"), _workload("b", "Qwen/Qwen3-14B", type="hf")) == []
