"""A fix the rules suggest can be carried out (issue 26 §2.8: "the fixes our messages suggest cannot work"): no
"add a pool of instances with ≥ 16 GPUs" when no instance type has 16, no "one Neuron node" for weights no Neuron
node holds, no GPU image suggested for a Neuron pool."""

from __future__ import annotations

import re
from types import SimpleNamespace

from inferstack.catalog.instances import INSTANCE_TYPES, AcceleratorKind, largest
from inferstack.config import parse_config
from inferstack.rules import evaluate
from inferstack.rules.multinode import _one_neuron_node_fix

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


def test_no_instance_type_with_more_gpus_than_exist_is_asked_for():
    findings = {f.rule: f for f in evaluate(parse_config(RAY_TP8_PP2)).errors}
    most = largest(AcceleratorKind.NVIDIA)
    assert most is not None and most.accelerator_count < 16
    for rule in ("PARALLEL-NODE", "SCHEDULING"):
        fix = findings[rule].fix
        assert "no instance type" in fix and "16" in fix, fix
        assert "add a pool" not in fix, fix
        # every instance type the fix names has at most the catalog's most GPUs: none is claimed to hold 16
        assert all(INSTANCE_TYPES[n].accelerator_count <= most.accelerator_count for n in named_instance_types(fix))


def test_a_neuron_pool_gets_no_gpu_image_advice_and_one_node_only_where_it_fits():
    rules = {f.rule: f for f in evaluate(parse_config(LWS_TRN1)).errors}
    assert "IMAGE-MULTINODE-FLAGS" not in rules  # MULTINODE-ACCELERATOR speaks for a Neuron pool
    fix = rules["MULTINODE-ACCELERATOR"].fix
    top = largest(AcceleratorKind.NEURON)
    assert top is not None and f"up to {top.name}" in fix  # 405B's weights fit the largest Neuron node


def test_weights_no_neuron_node_holds_leave_only_the_gpu_pool():
    top = largest(AcceleratorKind.NEURON)
    assert top is not None
    memory = top.accelerator_count * top.accelerator_memory_mib / 1024
    huge = SimpleNamespace(model=SimpleNamespace(arch=SimpleNamespace(weights_gib=memory * 2)))
    fix = _one_neuron_node_fix(huge)  # type: ignore[arg-type]
    assert fix.startswith("use a GPU pool:") and "kind: vllm on one Neuron node" not in fix
    assert top.name in fix
