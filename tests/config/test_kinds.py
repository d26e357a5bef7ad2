"""Workload kinds in the config: ``workloads[]`` is discriminated on ``kind`` (default ``vllm``), and every problem
names the config path without pydantic's union tags."""

from __future__ import annotations

import copy

import pytest

from inferstack.config import ConfigError, parse_config
from inferstack.config.kinds import KINDS
from inferstack.config.vllm_multinode import VllmMultinodeWorkloadConfig
from inferstack.config.workloads import VllmWorkloadConfig

POOLS = {"node_groups": [{"name": "p5", "instance_type": "p5.48xlarge", "efa": True, "availability_zone": 0}]}
LLAMA_405B = {"id": "meta-llama/Llama-3.1-405B-Instruct", "hf_token_secret": {"name": "hf"}}
MULTINODE = {
    "name": "big",
    "kind": "vllm_multinode",
    "nodes": 2,
    "pool": "p5",
    "model": LLAMA_405B,
    "engine": {"tensor_parallel_size": 8, "pipeline_parallel_size": 2},
}


def problems(workload: dict) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        parse_config({"compute": POOLS, "workloads": [workload]})
    return [str(p) for p in raised.value.problems]


def test_a_workload_without_kind_is_vllm():
    config = parse_config(
        {"compute": POOLS, "workloads": [{"name": "w", "pool": "p5", "model": {"id": "Qwen/Qwen3-8B"}}]}
    )
    (workload,) = config.workloads
    assert type(workload) is VllmWorkloadConfig and workload.kind == "vllm" and workload.nodes == 1


def test_the_multinode_kind_parses_with_its_own_fields():
    (workload,) = parse_config({"compute": POOLS, "workloads": [MULTINODE]}).workloads
    assert isinstance(workload, VllmMultinodeWorkloadConfig)
    assert workload.nodes == 2 and workload.ranks == 16 and workload.ranks_per_pod == 8


def test_an_unknown_kind_names_the_valid_ones():
    (problem,) = problems({**MULTINODE, "kind": "vllm-multinode"})
    assert problem.startswith("workloads[0].kind: 'vllm-multinode'")
    assert all(name in problem for name in KINDS)


def test_errors_name_the_path_without_the_union_tag():
    (problem,) = problems({**MULTINODE, "engine": {"tensor_parallel_size": "eight"}})
    assert problem.startswith("workloads[0].engine.tensor_parallel_size:"), problem
    (unknown,) = problems({**MULTINODE, "node": 2})
    assert unknown.startswith("workloads[0].node: unknown key") and "nodes" in unknown


def test_nodes_is_a_field_of_the_multinode_kind_only():
    single = copy.deepcopy(MULTINODE)
    del single["kind"]
    (problem,) = problems(single)
    assert problem.startswith("workloads[0].nodes: unknown key")
    assert problem.endswith("(nodes is a field of kind vllm_multinode)")


def test_nodes_must_share_the_ranks_evenly():
    (problem,) = problems({**MULTINODE, "nodes": 3})
    assert problem.startswith("workloads[0].nodes:") and "16" in problem


def test_a_multinode_workload_does_not_autoscale():
    (problem,) = problems({**MULTINODE, "autoscaling": {"max_replicas": 2}})
    assert problem.startswith("workloads[0].autoscaling:") and "replicas" in problem


def test_the_schema_offers_every_kind():
    from inferstack.config import InferstackConfig

    schema = InferstackConfig.model_json_schema(by_alias=True)
    items = schema["properties"]["workloads"]["items"]
    refs = {ref["$ref"].rsplit("/", 1)[-1] for ref in items.get("oneOf", items.get("anyOf", []))}
    assert refs == {
        "VllmWorkloadConfig",
        "VllmMultinodeWorkloadConfig",
        "RayServeWorkloadConfig",
        "NimWorkloadConfig",
        "DynamoWorkloadConfig",
        "TritonWorkloadConfig",
        "KServeWorkloadConfig",
        "SglangWorkloadConfig",
        "TgiWorkloadConfig",
        "OllamaWorkloadConfig",
        "LiteLLMWorkloadConfig",
    }


def test_a_workload_that_is_not_a_mapping_says_so():
    (problem,) = problems("qwen")
    assert problem == "workloads[0]: 'qwen' — a workload is a mapping (name, pool, model, …)"


def test_only_the_tag_after_a_workload_index_is_dropped():
    from inferstack.config.errors import _without_tags

    assert _without_tags(("workloads", 0, "vllm_multinode", "nodes")) == ("workloads", 0, "nodes")
    assert _without_tags(("acknowledge", 0, "vllm")) == ("acknowledge", 0, "vllm")


def test_a_multinode_name_leaves_room_for_the_names_lws_derives():
    (problem,) = problems({**MULTINODE, "name": "a" * 41})
    assert problem.startswith("workloads[0].name:") and "at most 40" in problem
    parse_config({"compute": POOLS, "workloads": [{**MULTINODE, "name": "a" * 40}]})
