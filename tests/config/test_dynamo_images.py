"""GIVEN a dynamo workload's own runtime or frontend image (a mirror, another 1.4 release), WHEN parsed, checked and
rendered, THEN the workers and the frontend run it, its build's facts follow its tag (``-efa``: libfabric), and a
release the pinned operator would run with its own defaults, or an image that names no release, is refused at the
field."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from inferstack.catalog.images import image_facts
from inferstack.config import ConfigError, parse_config
from inferstack.rules import evaluate
from tests.charts.conftest import render
from tests.synth import ROOT

MIRROR = "registry.example.com/mirror/ai-dynamo"
BASE = yaml.safe_load((ROOT / "examples" / "dynamo-disagg-efa.yaml").read_text())


def example(**fields: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data["workloads"][0].update(fields)
    return data


def test_the_workers_and_the_frontend_run_the_workloads_images():
    data = example(image=f"{MIRROR}/vllm-runtime:1.4.0-efa")
    data["workloads"][0]["frontend"] = {"image": f"{MIRROR}/dynamo-frontend:1.4.0"}
    assert not evaluate(parse_config(data)).errors
    (graph,) = [o for o in render(data) if o["kind"] == "DynamoGraphDeployment"]
    images = {c["name"]: c["podTemplate"]["spec"]["containers"][0]["image"] for c in graph["spec"]["components"]}
    assert images == {
        "frontend": f"{MIRROR}/dynamo-frontend:1.4.0",
        "prefill": f"{MIRROR}/vllm-runtime:1.4.0-efa",
        "decode": f"{MIRROR}/vllm-runtime:1.4.0-efa",
    }


def test_a_mirrors_facts_follow_its_tag():
    efa, plain = image_facts(f"{MIRROR}/vllm-runtime:1.4.0-efa"), image_facts(f"{MIRROR}/vllm-runtime:1.4.1")
    assert efa is not None and efa.libfabric and efa.aws_ofi_nccl and efa.vllm_version == "0.26.0"
    assert plain is not None and not plain.libfabric and plain.engine_version == "1.4.1"
    assert plain.vllm_version is None  # another release's vLLM is not known


def test_a_runtime_without_libfabric_is_named_for_nixls_libfabric_backend():
    report = evaluate(parse_config(example(image=f"{MIRROR}/vllm-runtime:1.4.1")))
    (finding,) = [f for f in report.errors if f.rule == "IMAGE-NIXL-LIBFABRIC"]
    assert finding.path == "workloads[0].image" and "-efa build of the runtime" in finding.fix


@pytest.mark.parametrize(
    ("fields", "path", "words"),
    [
        ({"image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.3.0-efa"}, "workloads[0].image", "Dynamo 1.3.0"),
        ({"image": "registry.example.com/dynamo:v1"}, "workloads[0].image", "not Dynamo's vllm-runtime"),
        (
            {"image": "nvcr.io/nvidia/ai-dynamo/dynamo-frontend:1.4.0"},
            "workloads[0].image",
            "not Dynamo's vllm-runtime",
        ),
        (
            {"frontend": {"image": f"{MIRROR}/dynamo-frontend:1.5.0"}},
            "workloads[0].frontend.image",
            "Dynamo 1.5.0, but the pinned operator is 1.4.0",
        ),
        ({"image": f"{MIRROR}/vllm-runtime:latest"}, "workloads[0].image", "pinned"),
    ],
)
def test_an_image_the_operator_would_misrun_is_refused_at_its_field(fields, path, words):
    with pytest.raises(ConfigError) as raised:
        parse_config(example(**fields))
    assert any(p.path == path and words in p.message for p in raised.value.problems), raised.value


def test_a_tag_with_a_suffix_names_its_release_as_the_operator_reads_it():
    """runtimeversion.go keeps the semver core and drops the pre-release: ``1.4.0-cuda13-efa`` is 1.4.0, the EFA
    build."""
    facts = image_facts(f"{MIRROR}/vllm-runtime:1.4.0-cuda13-efa")
    assert facts is not None and facts.engine_version == "1.4.0" and facts.libfabric
    assert parse_config(example(image=f"{MIRROR}/vllm-runtime:1.4.0-cuda13-efa"))


def test_another_1_4_runtime_is_sized_with_the_catalogs_vllm():
    from inferstack.plan.served import engine_release, engines

    config = parse_config(example(image=f"{MIRROR}/vllm-runtime:1.4.1-efa"))
    assert {engine_release(e) for _, e in engines(config)} == {"0.26.0"}
