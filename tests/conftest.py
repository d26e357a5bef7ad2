"""Shared fixtures: every config in the repo is synthesized once per session (jsii start-up dominates)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
if os.environ.get("INFERSTACK_FIELD_DESCRIPTIONS") == "0":  # the schema, docs and docstring tests read them
    raise pytest.UsageError("unset INFERSTACK_FIELD_DESCRIPTIONS: the tests need the config models' field descriptions")

from inferstack.config import InferstackConfig
from tests.synth import CONFIGS, Synthesized, synthesize, synthesize_file

_CACHE: dict[Path, Synthesized] = {}


def synthesized_config(path: Path) -> Synthesized:
    if path not in _CACHE:
        _CACHE[path] = synthesize_file(path)
    return _CACHE[path]


@pytest.fixture(scope="session")
def default_app() -> Synthesized:
    """The default platform (inferstack.yaml), synthesized with cdk-nag."""
    return synthesized_config(CONFIGS[0])


@pytest.fixture(scope="session")
def pinned_app() -> Synthesized:
    """examples/pinned-env.yaml: fixed account/region/AZs, public+private endpoint, admins, pins."""
    return synthesized_config(Path(__file__).resolve().parent.parent / "examples" / "pinned-env.yaml")


@pytest.fixture(scope="session", params=CONFIGS, ids=lambda p: p.stem)
def any_app(request: pytest.FixtureRequest) -> Synthesized:
    """Every config of the repo (the default and each example), synthesized once per session."""
    return synthesized_config(request.param)


@pytest.fixture(scope="session")
def synth_config():
    """Synthesize an in-memory config (cached by value)."""
    cache: dict[str, Synthesized] = {}

    def _synth(config: InferstackConfig, nag: bool = True) -> Synthesized:
        key = config.model_dump_json() + str(nag)
        if key not in cache:
            cache[key] = synthesize(config, nag=nag)
        return cache[key]

    return _synth


def _example(name: str) -> Synthesized:
    return synthesized_config(Path(__file__).resolve().parent.parent / "examples" / f"{name}.yaml")


@pytest.fixture(scope="session")
def efa_app() -> Synthesized:
    """examples/efa-p5.yaml: p5 EFA node group + Karpenter EFA pool."""
    return _example("efa-p5")


@pytest.fixture(scope="session")
def neuron_app() -> Synthesized:
    """examples/neuron-inf2.yaml: inf2 node group + Karpenter inf2 pool."""
    return _example("neuron-inf2")


@pytest.fixture(scope="session")
def gpu_mixed_app() -> Synthesized:
    """examples/gpu-mixed.yaml: g6e and p4d Karpenter pools."""
    return _example("gpu-mixed")


@pytest.fixture(scope="session")
def s3_mount_app() -> Synthesized:
    """examples/s3-mount-ray.yaml: a Mountpoint PV/PVC workload with a model-sync Job."""
    return _example("s3-mount-ray")


@pytest.fixture(scope="session")
def fsx_app() -> Synthesized:
    """examples/fsx-large-model.yaml: FSx for Lustre in the p5en group's zone."""
    return _example("fsx-large-model")


@pytest.fixture(scope="session")
def tp4_app() -> Synthesized:
    """examples/vllm-gpu-tp4.yaml: Llama-3.1-70B at TP=4 on g6e.12xlarge with KEDA."""
    return _example("vllm-gpu-tp4")


@pytest.fixture(scope="session")
def neuron_vllm_app() -> Synthesized:
    """examples/vllm-neuron-inf2.yaml: Llama-3.1-8B on inf2 with a compile Job."""
    return _example("vllm-neuron-inf2")


@pytest.fixture(scope="session")
def multinode_app() -> Synthesized:
    """examples/vllm-multinode-lws-p5.yaml: Llama-3.1-405B TP8 × PP2 across two p5.48xlarge on LeaderWorkerSet."""
    return _example("vllm-multinode-lws-p5")


@pytest.fixture(scope="session")
def ray_multi_app() -> Synthesized:
    """examples/ray-llm-multi-model.yaml: two models in one Ray Serve LLM app on a Karpenter L40S pool."""
    return _example("ray-llm-multi-model")


@pytest.fixture(scope="session")
def ray_pd_app() -> Synthesized:
    """examples/ray-pd-efa-p5.yaml: prefill/decode over NIXL/EFA on a p5 node group."""
    return _example("ray-pd-efa-p5")


@pytest.fixture(scope="session")
def nim_app() -> Synthesized:
    """examples/nim-llama-70b.yaml: Llama-3.1-70B as a NIM (NIMCache + NIMService) on 8 H100 of a Karpenter pool."""
    return _example("nim-llama-70b")


@pytest.fixture(scope="session")
def dynamo_app() -> Synthesized:
    """examples/dynamo-disagg-efa.yaml: Llama-3.1-70B on Dynamo, prefill/decode over NIXL/EFA on a p5 node group."""
    return _example("dynamo-disagg-efa")


@pytest.fixture(scope="session")
def triton_app() -> Synthesized:
    """examples/triton-vllm.yaml: Qwen3-8B on Triton's vLLM backend, two replicas on a Karpenter L40S pool."""
    return _example("triton-vllm")


@pytest.fixture(scope="session")
def kserve_app() -> Synthesized:
    """examples/kserve-scale-to-zero.yaml: Qwen3-8B on KServe in Knative mode, scaled to zero, mounted from S3."""
    return _example("kserve-scale-to-zero")


@pytest.fixture(scope="session")
def gateway_app() -> Synthesized:
    """examples/litellm-gateway.yaml: LiteLLM over a vLLM and an SGLang workload, an OpenAI fallback, Postgres."""
    return _example("litellm-gateway")


@pytest.fixture(scope="session")
def bench_app() -> Synthesized:
    """examples/bench-ministral.yaml: the default platform with a benchmark Job template."""
    return _example("bench-ministral")


@pytest.fixture(scope="session")
def aibrix_app() -> Synthesized:
    """examples/aibrix-lora.yaml: a vLLM workload with AIBrix LoRA adapters from the Hub."""
    return _example("aibrix-lora")
