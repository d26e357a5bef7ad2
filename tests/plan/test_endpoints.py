"""What a gateway puts in ``model`` for each kind (``WorkloadKind.served_models``) is the name the kind's chart
tells its server to serve."""

from __future__ import annotations

import cdk8s

from inferstack.charts.workload import StorageRefs
from inferstack.config import parse_config
from inferstack.config.kinds import kind_of
from inferstack.plan import resolve
from inferstack.plan.endpoints import endpoint_of
from tests.synth import SYNC_IMAGE

POOLS = {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]}
QWEN = {"id": "Qwen/Qwen3-8B"}
MOUNTED = {**QWEN, "source": {"type": "s3_mount"}}
REFS = StorageRefs(region="us-east-1", bucket="b", sync_image=SYNC_IMAGE)


def _served(workload: dict) -> tuple[tuple[str, ...], list[str]]:
    """The endpoint's model names and the server containers' args."""
    (resolved,) = resolve(parse_config({"compute": POOLS, "workloads": [workload]})).workloads
    objects = kind_of(resolved.config).chart(cdk8s.App(), "w", resolved, REFS).to_json()
    args = [arg for o in objects for arg in _args(o.get("spec", {}))]
    return endpoint_of(resolved.config).models, args


def _args(node: object) -> list[str]:
    if isinstance(node, dict):
        found = [a for a in node.get("args", []) if isinstance(a, str)] if isinstance(node.get("args"), list) else []
        return found + [a for value in node.values() for a in _args(value)]
    if isinstance(node, list):
        return [a for item in node for a in _args(item)]
    return []


def test_kserve_serves_the_served_name_or_the_workload_name():
    models, args = _served({"name": "qwen", "kind": "kserve", "pool": "gpu", "model": MOUNTED})
    assert models == ("qwen",) and "--model_name=qwen" in args
    models, args = _served({"name": "qwen", "kind": "kserve", "pool": "gpu", "model": {**MOUNTED, "served_name": "q3"}})
    assert models == ("q3",) and "--model_name=q3" in args


def test_vllm_serves_the_models_name():
    models, args = _served({"name": "qwen", "pool": "gpu", "model": {**QWEN, "served_name": "q3"}})
    assert models == ("q3",) and args[args.index("--served-model-name") + 1] == "q3"


def test_ray_serve_serves_each_apps_model():
    two = [
        {"model": {**QWEN, "source": {"type": "s3_mount"}}},
        {"model": {**QWEN, "served_name": "b", "source": {"type": "s3_mount"}}},
    ]
    (resolved,) = resolve(
        parse_config(
            {"compute": POOLS, "workloads": [{"name": "ray", "kind": "ray_serve", "pool": "gpu", "models": two}]}
        )
    ).workloads
    assert endpoint_of(resolved.config).models == ("Qwen/Qwen3-8B", "b")


def test_ollama_serves_its_tags():
    (resolved,) = resolve(
        parse_config(
            {
                "compute": {"karpenter_pools": [{"name": "cpu", "instance_families": ["m7i"]}]},
                "workloads": [{"name": "o", "kind": "ollama", "pool": "cpu", "models": ["qwen3:8b", "llama3.2:1b"]}],
            }
        )
    ).workloads
    assert endpoint_of(resolved.config).models == ("qwen3:8b", "llama3.2:1b")
