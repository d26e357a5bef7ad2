"""BENCH-CONTEXT: a benchmark whose requests (``input_tokens`` + ``output_tokens``, every one of that length:
``--random-range-ratio 0``, ``--ignore-eos``) are longer than the engine's ``max_model_len`` is refused — the server
would answer each with a 400."""

from __future__ import annotations

from typing import Any

from inferstack.config import parse_config
from inferstack.rules import evaluate
from inferstack.rules.bench import CONTEXT
from tests.rules.test_registry import BASE, merge


def _findings(**workload: Any) -> list[Any]:
    report = evaluate(parse_config(merge(BASE, {"workloads": {0: workload}})))
    return [f for f in report.errors if f.rule == CONTEXT]


def test_requests_within_the_engines_length_pass():
    assert _findings(bench={"input_tokens": 3840, "output_tokens": 256}, engine={"max_model_len": 4096}) == []


def test_requests_longer_than_max_model_len_are_refused_at_the_bench():
    (finding,) = _findings(bench={"input_tokens": 4000, "output_tokens": 256}, engine={"max_model_len": 4096})
    assert finding.path == "workloads[0].bench.input_tokens"
    assert "4,000 + 256 = 4,256 tokens" in finding.message and "max_model_len of 4,096" in finding.message
    assert "at most 4,096" in finding.fix and "engine.max_model_len" in finding.fix


def test_the_length_judged_is_the_one_the_plan_renders():
    """No ``max_model_len`` set: the plan gives Qwen3-8B its full 40,960 on the L40S pool — what the rule judges."""
    assert _findings(bench={"input_tokens": 32768, "output_tokens": 1024}) == []
    (finding,) = _findings(bench={"input_tokens": 40000, "output_tokens": 1024})
    assert "max_model_len of 40,960" in finding.message
