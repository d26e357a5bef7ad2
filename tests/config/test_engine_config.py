"""Engine and workload config validation."""

from __future__ import annotations

import pytest

from inferstack.config import ConfigError, parse_config

POOLS = {"karpenter_pools": [{"name": "gpu", "instance_families": ["g6e"]}]}


def problems(workload: dict) -> list[str]:
    base = {"name": "w", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}}
    with pytest.raises(ConfigError) as exc:
        parse_config({"compute": POOLS, "workloads": [{**base, **workload}]})
    return [str(p) for p in exc.value.problems]


def test_flags_set_by_typed_fields_are_refused_in_extra_args():
    (line,) = problems({"engine": {"extra_args": ["--max-model-len=4096"]}})
    assert line.startswith("workloads[0].engine.extra_args: ")
    assert "--max-model-len is set by a typed field of engine" in line


def test_lmcache_runs_with_cuda_graphs_and_no_removed_attention_variable():
    """Defect: LMCache forced enforce_eager and VLLM_ATTENTION_BACKEND, which vLLM removed in 0.15 (PR #32812)."""
    from inferstack.charts.vllm import engine_env_for

    base = {"name": "w", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}, "engine": {"lmcache": {"cpu_cache_gib": 40}}}
    (workload,) = parse_config({"compute": POOLS, "workloads": [base]}).workloads
    assert workload.engine.enforce_eager is False
    env = engine_env_for(workload.engine, workload.model)
    assert "VLLM_ATTENTION_BACKEND" not in env and env["LMCACHE_LOCAL_CPU"] == "True"


def test_unknown_pool_lists_the_pools():
    (line,) = problems({"pool": "h100"})
    assert line == "workloads[0].pool: 'h100' is not a node group or Karpenter pool — valid: gpu"


def test_unknown_model_suggests_catalog_entries():
    (line,) = problems({"model": {"id": "meta-llama/Llama-3.1-8B"}})
    assert "did you mean meta-llama/Llama-3.1-8B-Instruct" in line


def test_inline_architecture_describes_an_unknown_model():
    architecture = {
        "params": 1_000_000_000,
        "layers": 16,
        "attention_heads": 16,
        "kv_heads": 4,
        "head_dim": 64,
        "max_context": 8192,
    }
    config = parse_config(
        {
            "compute": POOLS,
            "workloads": [{"name": "w", "pool": "gpu", "model": {"id": "acme/tiny-1b", "architecture": architecture}}],
        }
    )
    assert config.workloads[0].model.arch.params == 1_000_000_000


def test_hpa_cannot_scale_to_zero():
    (line,) = problems({"autoscaling": {"kind": "hpa", "min_replicas": 0}})
    assert "an HPA cannot scale to zero" in line


def test_image_source_needs_image_and_path():
    (line,) = problems({"model": {"id": "Qwen/Qwen3-8B", "source": {"type": "image", "image": "r.io/m/q:1"}}})
    assert line.startswith("workloads[0].model.source.path: an image source needs image and path")


def test_invalid_kubernetes_names_are_reported():
    lines = problems({"name": "Llama_70B", "namespace": "LLM"})
    assert any(line.startswith("workloads[0].name: 'Llama_70B' — not a valid Kubernetes name") for line in lines)
    assert any(line.startswith("workloads[0].namespace: 'LLM' — not a valid Kubernetes name") for line in lines)


def test_unknown_engine_flag_suggests_the_nearest_vllm_flag():
    (line,) = problems({"engine": {"extra_args": ["--gpu-memory-utilisation", "0.9"]}})
    assert line == (
        "workloads[0].engine.extra_args[0]: --gpu-memory-utilisation is not a flag of vLLM 0.31.0"
        " — did you mean --gpu-memory-utilization or --device-memory-utilization?"
    )


def test_engine_flags_are_checked_against_the_image_version():
    (line,) = problems(
        {
            "engine": {
                "image": "vllm/vllm-openai:v0.33.0",
                "extra_args": ["--enforce-eager", "--max-num-partial-prefills", "2"],
            }
        }
    )
    assert line.startswith("workloads[0].engine.extra_args[1]: --max-num-partial-prefills is not a flag of vLLM 0.33.0")


def test_engine_flags_of_a_custom_image_are_not_checked():
    engine = {"image": "registry.example/acme/vllm:2024-06", "extra_args": ["--max-num-partial-prefills", "2"]}
    config = parse_config(
        {
            "compute": POOLS,
            "workloads": [{"name": "w", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}, "engine": engine}],
        }
    )
    assert config.workloads[0].engine.flags_version is None


def test_known_engine_flags_pass_and_name_the_checked_version():
    engine = {"extra_args": ["--enforce-eager", "--max_logprobs=5", "--compilation-config.mode", "3"]}
    config = parse_config(
        {
            "compute": POOLS,
            "workloads": [{"name": "w", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}, "engine": engine}],
        }
    )
    assert config.workloads[0].engine.flags_version is None  # no explicit image: the platform checks
    assert config.workloads[0].flags_version(config.pool("gpu").accelerator) == "0.31.0"


def test_other_spellings_of_managed_flags_are_refused():
    (line,) = problems({"engine": {"extra_args": ["--enforce-eager", "-tp", "2"]}})
    assert line == (
        "workloads[0].engine.extra_args[1]: -tp (--tensor-parallel-size) is set by a typed field of engine"
        " — use that field instead"
    )


def test_the_drain_timeout_is_managed():
    (line,) = problems({"engine": {"extra_args": ["--shutdown-timeout", "30"]}})
    assert "--shutdown-timeout" in line and "typed field" in line


def test_mistral_format_flags_are_managed_for_mistral_checkpoints():
    mistral = {"id": "mistralai/Ministral-3-8B-Instruct-2512", "hf_token_secret": {"name": "hf"}}
    (line,) = problems({"model": mistral, "engine": {"extra_args": ["--tokenizer-mode=auto"]}})
    assert line.startswith("workloads[0].engine.extra_args[0]:") and "Mistral-format" in line


def test_operator_namespaces_are_not_workload_namespaces():
    (line,) = problems({"namespace": "monitoring"})
    assert line.startswith("workloads[0].namespace: 'monitoring' belongs to kube-prometheus-stack")


def test_a_flag_value_outside_its_choices_names_the_valid_ones():
    (line,) = problems({"engine": {"extra_args": ["--chat-template-content-format", "markdown"]}})
    assert line.startswith("workloads[0].engine.extra_args[0]:")
    assert "markdown is not a value of --chat-template-content-format" in line and "valid: auto, openai, string" in line
    assert problems_or_none({"engine": {"extra_args": ["--chat-template-content-format=openai"]}}) is None
    (numeric,) = problems({"engine": {"extra_args": ["--max-lora-rank=12"]}})
    assert "12 is not a value of --max-lora-rank" in numeric


def problems_or_none(workload: dict) -> list[str] | None:
    """The config problems, or None when the workload config is valid."""
    base = {"name": "w", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}}
    try:
        parse_config({"compute": POOLS, "workloads": [{**base, **workload}]})
    except ConfigError as error:
        return [str(p) for p in error.problems]
    return None
