"""Values AWS, Kubernetes or the engine would refuse at deploy or at start (issue 24 §10) are refused when the config
is read, each at the field that is wrong, with what would be valid; the value next to each is accepted."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from inferstack.config import ConfigError, parse_config

BASE: dict[str, Any] = {
    "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]},
    "workloads": [{"name": "qwen", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}}],
}


def _with(path: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    *parents, leaf = path.split(".")
    node: Any = data
    for part in parents:
        node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
    node[leaf] = value
    return data


def _problem(data: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as raised:
        parse_config(data)
    (problem,) = raised.value.problems
    return str(problem)


#: (config path, bad value, the field named, words of the message, a good value).
CASES = [
    ("network.vpc_cidr", "127.0.0.0/16", "network.vpc_cidr", "loopback", "10.1.0.0/16"),
    ("network.vpc_cidr", "169.254.0.0/16", "network.vpc_cidr", "link-local", "172.16.0.0/16"),
    ("network.vpc_cidr", "224.1.0.0/16", "network.vpc_cidr", "multicast", "192.168.0.0/16"),
    ("network.vpc_cidr", "0.0.0.0/16", "network.vpc_cidr", "'this network'", "100.64.0.0/16"),
    ("network.vpc_cidr", "250.0.0.0/16", "network.vpc_cidr", "reserved", "10.0.0.0/16"),
    (
        "compute.karpenter_pools.0.capacity_types",
        [],
        "compute.karpenter_pools[0].capacity_types",
        "no values",
        ["spot"],
    ),
    (
        "compute.karpenter_pools.0.capacity_types",
        ["spot", "spot"],
        "compute.karpenter_pools[0].capacity_types",
        "twice",
        ["spot", "on_demand"],
    ),
    (
        "compute.karpenter_pools.0.labels",
        {"a" * 254 + "/team": "ml"},
        "compute.karpenter_pools[0].labels",
        "at most 253",
        {"a" * 253 + "/team": "ml"},
    ),
    ("storage.model_bucket.bucket_name", "sthree-models", "storage.model_bucket.bucket_name", "'sthree-'", "models-1"),
    ("storage.model_bucket.bucket_name", "amzn-s3-demo-m", "storage.model_bucket.bucket_name", "reserves", "m-demo"),
    ("storage.model_bucket.bucket_name", "models--ol-s3", "storage.model_bucket.bucket_name", "'--ol-s3'", "models-ol"),
    ("storage.model_bucket.bucket_name", "models.mrap", "storage.model_bucket.bucket_name", "'.mrap'", "models.map"),
    ("storage.model_bucket.bucket_name", "m--x-s3", "storage.model_bucket.bucket_name", "'--x-s3'", "m-x-s3"),
    (
        "workloads.0.engine.extra_args",
        ["4"],
        "workloads[0].engine.extra_args[0]",
        "follows no flag",
        ["--max-loras", "4"],
    ),
    (
        "workloads.0.engine.extra_args",
        ["--enable-lora", "4"],
        "workloads[0].engine.extra_args[1]",
        "second model",
        ["--enable-lora"],
    ),
    ("workloads.0.model.served_name", "", "workloads[0].model.served_name", "1-256 characters", "qwen3-8b"),
    ("workloads.0.model.served_name", "qwen 3", "workloads[0].model.served_name", "without spaces", "qwen-3"),
    (
        "workloads.0.model.hf_token_secret",
        {"name": "hf", "key": "bad key!"},
        "workloads[0].model.hf_token_secret.key",
        "Secret key Kubernetes accepts",
        {"name": "hf", "key": "HF_TOKEN.v2"},
    ),
]


@pytest.mark.parametrize(("path", "bad", "field", "words", "good"), CASES, ids=[f"{c[0]}={c[1]!r}"[:60] for c in CASES])
def test_refused_at_the_field_with_what_is_valid(path, bad, field, words, good):
    problem = _problem(_with(path, bad))
    assert problem.startswith(f"{field}:"), problem
    assert words in problem, problem
    parse_config(_with(path, good))
