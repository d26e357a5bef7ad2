"""The ``max_model_len`` default (issue 22, defect q): the model's context where the plan finds it fits, as vLLM's
own default, else 8192 — filled into the plan's config, judged by the rules and rendered by every kind."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from inferstack.charts.workload import StorageRefs
from inferstack.config import parse_config
from inferstack.config.engine import DEFAULT_MAX_MODEL_LEN
from inferstack.plan import resolve
from inferstack.plan.context import default_max_model_len, with_context_defaults
from inferstack.plan.placement import pool_instances
from inferstack.plan.served import engines, sizing_for
from inferstack.plan.workloads import workloads_plan
from inferstack.rules import evaluate
from inferstack.rules.base import Finding, Rule
from inferstack.stacks.workloads import render_workloads
from tests.synth import SYNC_IMAGE

ROOT = Path(__file__).resolve().parents[2]
QWEN3_CONTEXT = 40_960  # Qwen/Qwen3-8B max_position_embeddings
LLAMA_CONTEXT = 131_072  # Llama 3.1 / 3.3


def _config(engine: dict[str, Any], model: str = "Qwen/Qwen3-8B", instance: str = "g6e.2xlarge") -> dict[str, Any]:
    return {
        "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": [instance]}]},
        "workloads": [
            {"name": "llm", "pool": "gpu", "model": {"id": model, "hf_token_secret": {"name": "hf"}}, "engine": engine}
        ],
    }


def _filled(data: dict[str, Any]) -> int:
    (workload,) = resolve(parse_config(data)).config.workloads
    value = workload.engine.max_model_len  # type: ignore[attr-defined]
    assert isinstance(value, int)
    return value


def test_the_models_context_when_one_sequence_of_it_fits():
    assert _filled(_config({})) == QWEN3_CONTEXT


def test_8192_when_the_full_context_does_not_fit():
    data = _config({"tensor_parallel_size": 4}, model="meta-llama/Llama-3.1-70B-Instruct", instance="g6e.12xlarge")
    config = parse_config(data)
    ((_, served),) = engines(config)
    (host,) = pool_instances(config.pool(served.pool))
    assert not sizing_for(served, host, max_model_len=LLAMA_CONTEXT).fits
    assert _filled(data) == DEFAULT_MAX_MODEL_LEN


def test_the_full_context_must_fit_every_instance_the_pool_may_launch():
    """Review finding: a pool of g6e.xlarge (L40S, 45 GiB) and g6.xlarge (L4, 22 GiB) — Qwen3-8B's 40960 fits the
    first only, and Karpenter may launch either."""
    data = _config({})
    data["compute"]["karpenter_pools"][0]["instance_types"] = ["g6e.xlarge", "g6.xlarge"]
    assert _filled(data) == DEFAULT_MAX_MODEL_LEN
    data["compute"]["karpenter_pools"][0]["instance_types"] = ["g6e.xlarge", "g6e.2xlarge"]
    assert _filled(data) == QWEN3_CONTEXT


def test_prefill_and_decode_share_one_length():
    """Review finding: the two sides of a split serve the same requests — each gets the shortest side's default."""
    data = yaml.safe_load((ROOT / "examples" / "ray-pd-efa-p5.yaml").read_text())
    sides = data["workloads"][0]["prefill_decode"]
    for side in ("prefill", "decode"):
        sides[side]["engine"].pop("max_model_len")
    sides["prefill"]["engine"]["gpu_memory_utilization"] = 0.27  # the full context no longer fits the prefill side
    pd = resolve(parse_config(data)).config.workloads[0].prefill_decode
    assert pd.prefill.engine.max_model_len == pd.decode.engine.max_model_len == DEFAULT_MAX_MODEL_LEN


def test_chunked_prefill_off_caps_the_default_at_the_step_budget():
    assert _filled(_config({"enable_chunked_prefill": False, "max_num_batched_tokens": 4096})) == 4096


def test_an_explicit_value_is_kept_and_the_config_object_reused():
    config = parse_config(_config({"max_model_len": 2048}))
    assert with_context_defaults(config) is config and resolve(config).config is config


def test_rules_judge_the_filled_value():
    """Every rule is handed the config the charts render: the filled length, not the unset field."""
    seen: list[int | None] = []

    def spy(config: Any) -> Iterator[Finding]:
        seen.extend(w.engine.max_model_len for w in config.workloads)
        return iter(())

    data = _config({"tensor_parallel_size": 8}, "meta-llama/Llama-3.1-70B-Instruct", "p5.48xlarge")
    evaluate(parse_config(data), rules=(Rule(id="SPY", title="sees the config", check=spy),))
    assert seen == [LLAMA_CONTEXT]
    assert not [f for f in evaluate(parse_config(data)).errors if f.rule == "MODEL-FIT"]


_LENGTH = re.compile(r"max[-_]model[-_]len\W{1,8}(\d+)")


def _without_lengths(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_lengths(v) for k, v in node.items() if k != "max_model_len"}
    if isinstance(node, list):
        return [_without_lengths(v) for v in node]
    return node


#: Examples of every kind that runs a vLLM engine, with their explicit lengths removed.
KIND_EXAMPLES = {
    "vllm": "vllm-gpu-tp4",
    "vllm_multinode": "vllm-multinode-lws-p5",
    "ray_serve": "ray-llm-multi-model",
    "ray_serve P/D": "ray-pd-efa-p5",
    "dynamo": "dynamo-disagg-efa",
    "triton": "triton-vllm",
    "kserve": "kserve-scale-to-zero",
    "vllm + aibrix": "aibrix-lora",
}


@pytest.mark.parametrize("example", KIND_EXAMPLES.values(), ids=KIND_EXAMPLES.keys())
def test_every_kind_renders_the_plans_length(example: str):
    data = _without_lengths(yaml.safe_load((ROOT / "examples" / f"{example}.yaml").read_text()))
    config = parse_config(data)
    expected = {default_max_model_len(config, served) for _, served in engines(config)}
    rendered = render_workloads(
        workloads_plan(config), None, StorageRefs(region="us-east-1", bucket="models", sync_image=SYNC_IMAGE)
    )
    found = {int(m) for item in rendered for m in _LENGTH.findall(json.dumps(item.manifest))}
    assert found == expected, f"{example}: rendered {found}, planned {expected}"


def test_the_examples_cover_both_outcomes():
    outcomes = set()
    for example in KIND_EXAMPLES.values():
        config = parse_config(_without_lengths(yaml.safe_load((ROOT / "examples" / f"{example}.yaml").read_text())))
        for _, served in engines(config):
            length = default_max_model_len(config, served)
            outcomes.add("context" if length == served.model.arch.max_context else "fallback")
    assert outcomes == {"context", "fallback"}
