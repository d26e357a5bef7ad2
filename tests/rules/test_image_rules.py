"""Image rules (inferstack/rules/images.py): each with a compliant and a non-compliant case."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from inferstack.catalog.images import IMAGE_FACTS, image_facts
from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.config import parse_config
from inferstack.plan import resolve
from inferstack.rules import images

ROOT = Path(__file__).resolve().parents[2]


def _example(name: str, **changes) -> dict:
    data = yaml.safe_load((ROOT / "examples" / f"{name}.yaml").read_text())
    data["workloads"][0].update(changes)
    return data


def test_every_engine_image_has_its_facts_with_sources():
    for key, uri in ENGINE_IMAGES.items():
        facts = IMAGE_FACTS[key]
        assert facts.uri == uri and facts.sources, key
        assert facts.unconfirmed <= set(type(facts).__dataclass_fields__), key


def test_upstream_images_are_read_from_their_tag():
    facts = image_facts("vllm/vllm-openai:v0.8.5")
    assert facts is not None and facts.vllm_version == "0.8.5" and not facts.libfabric and not facts.aws_ofi_nccl
    assert image_facts("registry.example.com/team/engine:1") is None


class TestNixlLibfabric:
    def test_ray_pd_defaults_to_the_image_with_libfabric(self):
        config = parse_config(_example("ray-pd-efa-p5"))
        (workload,) = resolve(config).workloads
        assert workload.image == ENGINE_IMAGES["ray-llm-efa"]
        assert list(images.check_nixl_libfabric(config)) == []

    def test_ray_pd_on_rayproject_ray_llm_is_refused(self):
        """Defect: rayproject/ray-llm has no libfabric, yet ray-pd-efa-p5 asked NIXL for LIBFABRIC on it."""
        config = parse_config(_example("ray-pd-efa-p5", image=ENGINE_IMAGES["ray-llm"], ray_version="2.58.0"))
        (finding,) = images.check_nixl_libfabric(config)
        assert finding.path == "workloads[0].image" and "has no libfabric" in finding.message

    def test_dynamo_disaggregated_on_its_efa_runtime_passes(self):
        assert list(images.check_nixl_libfabric(parse_config(_example("dynamo-disagg-efa")))) == []


class TestAccelerator:
    def test_the_default_images_fit_their_pools(self):
        for name in ("vllm-neuron-inf2", "ollama-cpu", "vllm-gpu-tp4"):
            assert list(images.check_accelerator(parse_config(_example(name)))) == [], name

    def test_a_neuron_image_on_a_gpu_pool_is_refused(self):
        data = _example("vllm-gpu-tp4")
        data["workloads"][0].setdefault("engine", {})["image"] = ENGINE_IMAGES["vllm-neuron"]
        (finding,) = images.check_accelerator(parse_config(data))
        assert finding.rule == "IMAGE-ACCELERATOR" and "NEURON" in finding.message.upper()

    def test_a_cuda_image_on_a_neuron_pool_is_refused(self):
        data = _example("vllm-neuron-inf2")
        data["workloads"][0].setdefault("engine", {})["image"] = ENGINE_IMAGES["vllm-gpu"]
        findings = list(images.check_accelerator(parse_config(data)))
        assert findings and findings[0].path.endswith(".pool")


class TestMultinodeFlags:
    def test_the_default_image_has_the_flags(self):
        assert list(images.check_multinode_flags(parse_config(_example("vllm-multinode-lws-p5")))) == []

    def test_an_image_older_than_the_flags_is_refused(self):
        """Defect: vllm_multinode on an image older than vLLM's multi-node flags (v0.8.5 then; v0.11.0 now, as
        releases before 0.10 are refused at the field) rendered --nnodes/--headless, which it lacks."""
        data = _example("vllm-multinode-lws-p5")
        data["workloads"][0].setdefault("engine", {})["image"] = "vllm/vllm-openai:v0.11.0"
        (finding,) = images.check_multinode_flags(parse_config(data))
        assert "0.11.0" in finding.message and "--nnodes" in finding.message


def _multinode_efa(image: str) -> dict:
    data = _example("vllm-multinode-lws-p5")
    data["workloads"][0].setdefault("engine", {})["image"] = image
    return data


def test_nccl_over_efa_needs_aws_ofi_nccl_as_well_as_libfabric(monkeypatch):
    """MULTINODE-EFA-IMAGE reads the image's facts: libfabric without the aws-ofi-nccl plugin still leaves NCCL on
    TCP sockets."""
    import dataclasses

    from inferstack.rules import multinode

    custom = "registry.example.com/vllm-efa:0.31.0"
    facts = dataclasses.replace(IMAGE_FACTS["vllm-gpu"], uri=custom, aws_ofi_nccl=False)
    monkeypatch.setattr(multinode, "image_facts", lambda image: facts if image == custom else image_facts(image))
    (finding,) = list(multinode.check_efa_image(parse_config(_multinode_efa(custom))))
    assert "has no aws-ofi-nccl" in finding.message and "libfabric" not in finding.message.split(":")[0]
    full = dataclasses.replace(facts, aws_ofi_nccl=True)
    monkeypatch.setattr(multinode, "image_facts", lambda image: full if image == custom else image_facts(image))
    assert list(multinode.check_efa_image(parse_config(_multinode_efa(custom)))) == []


def test_mirrored_and_digest_pinned_upstream_images_keep_their_facts():
    """Review finding: a mirror of vllm/vllm-openai or a digest-only pin lost its facts, so MULTINODE-EFA-IMAGE
    stopped warning that NCCL would run over TCP."""
    from inferstack.rules import multinode

    digest = "@sha256:" + "a" * 64
    for image in (
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm/vllm-openai:v0.19.0",
        f"vllm/vllm-openai{digest}",
        f"vllm/vllm-openai:v0.19.0{digest}",
    ):
        facts = image_facts(image)
        assert facts is not None and not facts.aws_ofi_nccl, image
        (finding,) = list(multinode.check_efa_image(parse_config(_multinode_efa(image))))
        assert "aws-ofi-nccl" in finding.message, image
    assert image_facts("vllm/vllm-openai-rocm:v0.1.0") is None  # another repository


def test_a_vllm_release_older_than_any_sizing_profile_is_refused_by_name():
    """Issue 26 §2.2: a version without data is refused, never sized as another. vLLM < 0.10 (the V0 engine) has no
    memory profile; the plan used the oldest one, optimistic for it."""
    from inferstack.config import ConfigError
    from inferstack.sizing.profiles import PROFILES

    assert PROFILES[0].since == (0, 10)  # the catalog's OLDEST_SIZED_VLLM is the first profile's line
    data = _example("vllm-gpu-tp4")
    data["workloads"][0]["engine"]["image"] = "vllm/vllm-openai:v0.8.5"
    with pytest.raises(ConfigError) as raised:
        parse_config(data)
    assert "workloads[0].engine.image" in str(raised.value) and "older than the oldest release inferstack sizes" in (
        str(raised.value)
    )
    data["workloads"][0]["engine"]["image"] = "vllm/vllm-openai:v0.10.0"
    assert parse_config(data).workloads[0].engine.image == "vllm/vllm-openai:v0.10.0"
