"""A fix the rules suggest can be carried out (issue 26 §2.8: "the fixes our messages suggest cannot work"): no
"add a pool of instances with ≥ 16 GPUs" when no instance type has 16, no "one Neuron node" for weights no Neuron
node holds, no GPU image suggested for a Neuron pool."""

from __future__ import annotations

import re
from types import SimpleNamespace

from inferstack.catalog.instances import INSTANCE_TYPES, AcceleratorKind
from inferstack.config import parse_config
from inferstack.plan.served import engines, ranks_per_node, serving_instances, sizing_for
from inferstack.rules import evaluate
from inferstack.rules.multinode import WEIGHTS_SHARE, _one_neuron_node_fix

#: DeepSeek-R1 at TP 8 × PP 2 on two 8-GPU H100 nodes, as Ray Serve LLM (the issue's example).
RAY_TP8_PP2 = {
    "compute": {
        "node_groups": [
            {"name": "h100", "instance_type": "p5.48xlarge", "efa": True, "availability_zone": 0, "max_size": 2}
        ]
    },
    "workloads": [
        {
            "name": "r1",
            "kind": "ray_serve",
            "pool": "h100",
            "efa": True,
            "models": [
                {
                    "model": {"id": "deepseek-ai/DeepSeek-R1", "source": {"type": "s3_mount"}},
                    "engine": {"tensor_parallel_size": 8, "pipeline_parallel_size": 2},
                }
            ],
        }
    ],
}
#: Llama-3.1-405B across two trn1.32xlarge with LWS (the issue's other example).
LWS_TRN1 = {
    "compute": {
        "node_groups": [
            {"name": "trn", "instance_type": "trn1.32xlarge", "efa": True, "availability_zone": 0, "max_size": 2}
        ]
    },
    "workloads": [
        {
            "name": "l405",
            "kind": "vllm_multinode",
            "pool": "trn",
            "efa": True,
            "nodes": 2,
            "model": {"id": "meta-llama/Llama-3.1-405B-Instruct", "hf_token_secret": {"name": "hf"}},
            "engine": {"tensor_parallel_size": 32, "pipeline_parallel_size": 2},
        }
    ],
}


def named_instance_types(text: str) -> set[str]:
    return {name for name in INSTANCE_TYPES if re.search(rf"\b{re.escape(name)}\b", text)}


def _memory(t) -> float:
    return t.accelerator_count * t.accelerator_memory_mib / 1024


def test_no_instance_type_with_more_gpus_than_exist_is_asked_for():
    findings = {f.rule: f for f in evaluate(parse_config(RAY_TP8_PP2)).errors}
    most = max(ranks_per_node(t) for t in serving_instances(AcceleratorKind.NVIDIA))
    assert most < 16
    for rule in ("PARALLEL-NODE", "SCHEDULING"):
        fix = findings[rule].fix
        assert "add a pool" not in fix, fix
        assert all(INSTANCE_TYPES[n].accelerator_count <= most for n in named_instance_types(fix))
    assert "no instance type inferstack serves on holds 16 GPUs" in findings["SCHEDULING"].fix
    # what can work: the replica's pipeline stages over worker pods of a node's GPUs (checked to pass)
    assert findings["PARALLEL-NODE"].fix.startswith("use workers.gpus_per_pod 8 (the replica spans 2 worker pods")


def test_a_bigger_instance_is_one_the_model_fits():
    """DeepSeek-R1 at TP 8 on a 4-GPU pool: the pools suggested are of types whose node holds its weights and KV
    cache at TP 8 (MODEL-FIT's sizing), not merely 8 GPUs (a g5.48xlarge's 24 GiB GPUs do not)."""
    data = {
        "compute": {"karpenter_pools": [{"name": "l40s", "instance_types": ["g6e.12xlarge"]}]},
        "workloads": [
            {
                "name": "r1",
                "pool": "l40s",
                "model": {"id": "deepseek-ai/DeepSeek-R1", "source": {"type": "s3_mount"}},
                "engine": {"tensor_parallel_size": 8},
            }
        ],
    }
    config = parse_config(data)
    (finding,) = [f for f in evaluate(config).errors if f.rule == "PARALLEL-NODE"]
    ((_, workload),) = engines(config)
    named = named_instance_types(finding.fix)
    assert all(sizing_for(workload, INSTANCE_TYPES[n]).fits for n in named), finding.fix
    assert "g5.48xlarge" not in named


def test_a_neuron_pool_gets_no_gpu_image_advice_and_one_node_only_where_it_fits():
    """405B's weights fit no Neuron node inferstack serves on (trn1.32xlarge: 512 GiB; Trainium2 is not served), so
    only the GPU pool is offered — and no GPU image for the Neuron pool."""
    rules = {f.rule: f for f in evaluate(parse_config(LWS_TRN1)).errors}
    assert "IMAGE-MULTINODE-FLAGS" not in rules  # MULTINODE-ACCELERATOR speaks for a Neuron pool
    fix = rules["MULTINODE-ACCELERATOR"].fix
    assert fix.startswith("use a GPU pool:") and "kind: vllm on one Neuron node" not in fix
    # why it is refused (issue 26 §2.8, LWS on Trainium): the pinned Neuron stack has no multi-node serving at all
    message = rules["MULTINODE-ACCELERATOR"].message
    assert "no multi-node serving" in message and "transformers-neuronx" in message
    assert all(INSTANCE_TYPES[n].accelerator_model != "Trainium2" for n in named_instance_types(fix))


def test_one_neuron_node_is_offered_only_where_the_weights_fit_with_kv_room():
    served = serving_instances(AcceleratorKind.NEURON)
    top = max(served, key=_memory)
    small = SimpleNamespace(model=SimpleNamespace(arch=SimpleNamespace(weights_gib=16)))
    fix = _one_neuron_node_fix(small)  # type: ignore[arg-type]
    assert "kind: vllm on one Neuron node" in fix
    assert all(WEIGHTS_SHARE * _memory(INSTANCE_TYPES[n]) >= 16 for n in named_instance_types(fix))
    huge = SimpleNamespace(model=SimpleNamespace(arch=SimpleNamespace(weights_gib=_memory(top))))
    assert _one_neuron_node_fix(huge).startswith("use a GPU pool:")  # type: ignore[arg-type]
