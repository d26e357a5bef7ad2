"""Shared rules, tested per kind (issue 23 §2): every shared rule that judges an engine has, for each kind it judges,
a compliant case (the kind's example) and a non-compliant one (that example with one engine field broken), so
dropping one kind's branch from a shared rule — or from the engine enumeration the rules share — fails a test.

The engine paths are written out here, not read from :func:`inferstack.plan.served.engines`, so a kind missing from
the enumeration is noticed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from inferstack.config import parse_config
from inferstack.config.edit import with_changes
from inferstack.config.model import InferstackConfig
from inferstack.rules import evaluate
from inferstack.rules.base import Finding

ROOT = Path(__file__).resolve().parents[2]

#: kind → (example, the config paths of its vLLM engines' settings, relative to which fixes are named).
VLLM_ENGINES: dict[str, tuple[str, tuple[str, ...]]] = {
    "vllm": ("vllm-gpu-tp4", ("workloads[0]",)),
    "vllm+aibrix": ("aibrix-lora", ("workloads[0]",)),
    "vllm_multinode": ("vllm-multinode-lws-p5", ("workloads[0]",)),
    "ray_serve": ("ray-llm-multi-model", ("workloads[0].models[0]", "workloads[0].models[1]")),
    "ray_serve P/D": (
        "ray-pd-efa-p5",
        ("workloads[0].prefill_decode.prefill", "workloads[0].prefill_decode.decode"),
    ),
    "triton": ("triton-vllm", ("workloads[0]",)),
    "kserve": ("kserve-scale-to-zero", ("workloads[0]",)),
    "dynamo": ("dynamo-disagg-efa", ("workloads[0].prefill", "workloads[0].decode")),
}
#: kind → (example, the broken field, its value) for ENGINE-FIT, whose engines
#: (SGLang, TGI) are sized in vLLM's terms.
OTHER_ENGINES: dict[str, tuple[str, str, Any]] = {
    "sglang": ("sglang-structured", "workloads[0].engine.mem_fraction_static", 0.11),
    "tgi": ("tgi", "workloads[0].engine.cuda_memory_fraction", 0.11),
}


def _example(name: str) -> InferstackConfig:
    return parse_config(yaml.safe_load((ROOT / "examples" / f"{name}.yaml").read_text()))


def _changed(config: InferstackConfig, changes: dict[str, Any]) -> InferstackConfig:
    changed = with_changes(config, changes)
    assert changed is not None, f"{changes} does not apply to the example"
    return changed


def _of(findings: list[Finding], rule: str, path: str) -> list[Finding]:
    return [f for f in findings if f.rule == rule and f.path.startswith(path + ".")]


def _all(config: InferstackConfig) -> list[Finding]:
    report = evaluate(config)
    return [*report.errors, *report.warnings, *(f for f, _ in report.acknowledged)]


#: What else a kind's config must change for a larger TP to be a valid config (the rules then judge it).
WITH_TP = {"ray_serve": lambda tp: {"workloads[0].workers.gpus_per_pod": tp}}


def _tp(kind: str, path: str, tp: int) -> dict[str, Any]:
    return {f"{path}.engine.tensor_parallel_size": tp, **WITH_TP.get(kind, lambda _: {})(tp)}


CASES = [(kind, path) for kind, (_, paths) in VLLM_ENGINES.items() for path in paths]


@pytest.fixture(scope="module")
def examples() -> dict[str, InferstackConfig]:
    names = {e for e, _ in VLLM_ENGINES.values()} | {e for e, _, _ in OTHER_ENGINES.values()}
    return {name: _example(name) for name in names}


@pytest.mark.parametrize(("kind", "path"), CASES, ids=[f"{k}:{p}" for k, p in CASES])
class TestVllmEngineRules:
    def test_compliant(self, examples, kind: str, path: str):
        findings = _all(examples[VLLM_ENGINES[kind][0]])
        assert not [f for f in findings if f.rule in ("MODEL-FIT", "TP-HEADS", "PARALLEL-NODE")], findings

    def test_model_fit_names_the_engine(self, examples, kind: str, path: str):
        broken = _changed(examples[VLLM_ENGINES[kind][0]], {f"{path}.engine.gpu_memory_utilization": 0.05})
        assert _of(_all(broken), "MODEL-FIT", path), f"MODEL-FIT does not judge {kind} at {path}"

    def test_tp_heads_names_the_engine(self, examples, kind: str, path: str):
        broken = _changed(examples[VLLM_ENGINES[kind][0]], _tp(kind, path, 5))
        assert _of(_all(broken), "TP-HEADS", path), f"TP-HEADS does not judge {kind} at {path}"

    def test_parallel_node_names_the_engine(self, examples, kind: str, path: str):
        broken = _changed(examples[VLLM_ENGINES[kind][0]], _tp(kind, path, 16))
        assert _of(_all(broken), "PARALLEL-NODE", path), f"PARALLEL-NODE does not judge {kind} at {path}"


@pytest.mark.parametrize("kind", OTHER_ENGINES)
def test_engine_fit_judges_each_engine(examples, kind: str):
    example, field, value = OTHER_ENGINES[kind]
    assert not [f for f in _all(examples[example]) if f.rule == "ENGINE-FIT"]
    broken = _changed(examples[example], {field: value})
    assert _of(_all(broken), "ENGINE-FIT", "workloads[0]"), f"ENGINE-FIT does not judge {kind}"


def test_model_fit_judges_the_tightest_instance_of_a_mixed_pool():
    """Review finding: MODEL-FIT judged the pool's smallest node whatever its GPU; in a pool of g6e.xlarge (L40S,
    45 GiB) and g6.xlarge (L4, 22 GiB) a length that fits only the L40S passed, and vLLM would fail on an L4 node."""
    data = {
        "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.xlarge", "g6.xlarge"]}]},
        "workloads": [
            {"name": "q", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}, "engine": {"max_model_len": 40960}}
        ],
    }
    (finding,) = [f for f in _all(parse_config(data)) if f.rule == "MODEL-FIT"]
    assert "g6.xlarge" in finding.message
    data["compute"]["karpenter_pools"][0]["instance_types"] = ["g6e.xlarge"]
    assert not [f for f in _all(parse_config(data)) if f.rule == "MODEL-FIT"]


#: A release of each engine with no vendored flag list (an image of another release).
UNLISTED = {
    "sglang": {"workloads[0].image": "docker.io/lmsysorg/sglang:v0.5.99-cu130"},
    "tgi": {"workloads[0].image": "ghcr.io/huggingface/text-generation-inference:3.3.8"},
}


@pytest.mark.parametrize("kind", OTHER_ENGINES)
def test_engine_flags_unverified_warns_for_each_unlisted_engine(examples, kind: str):
    """ENGINE-FLAGS-UNVERIFIED: ``extra_args`` of an engine release without a vendored flag list (SGLang other than
    0.5.19, TGI other than 3.3.7) pass unchecked, with a warning naming the engine; none without ``extra_args``."""
    example = examples[OTHER_ENGINES[kind][0]]
    assert not [f for f in _all(_changed(example, {"workloads[0].engine.extra_args": []})) if "FLAGS" in f.rule]
    broken = _changed(example, {**UNLISTED[kind], "workloads[0].engine.extra_args": ["--some-flag", "1"]})
    (finding,) = _of(_all(broken), "ENGINE-FLAGS-UNVERIFIED", "workloads[0]")
    assert (
        finding.path == "workloads[0].engine.extra_args" and {"sglang": "SGLang", "tgi": "TGI"}[kind] in finding.message
    )
