"""EngineArgs spells switched-off booleans the way the pinned vLLM release does (its vendored flag list)."""

from __future__ import annotations

import pytest

from inferstack.catalog.engine_flags import VLLM_VERSIONS, vllm_flags
from inferstack.constructs.vllm import EngineArgs

OFF = EngineArgs(enable_prefix_caching=False, enable_chunked_prefill=False)


@pytest.mark.parametrize(
    ("version", "prefix", "chunked"),
    [
        (None, "--no-enable-prefix-caching", "--no-enable-chunked-prefill"),
        ("0.19.0", "--no-enable-prefix-caching", "--no-enable-chunked-prefill"),
        ("0.31.0", "--no-enable-prefix-caching", "--no-enable-chunked-prefill"),
        ("0.33.0", "--disable-prefix-caching", "--disable-chunked-prefill"),
    ],
)
def test_negative_spelling_follows_the_release(version, prefix, chunked):
    args = EngineArgs(enable_prefix_caching=False, enable_chunked_prefill=False, flags_version=version).render()
    assert prefix in args and chunked in args


@pytest.mark.parametrize("version", VLLM_VERSIONS)
def test_every_rendered_flag_is_visible_in_that_release(version):
    """Not only accepted: shown by --help (0.33 still takes --no-enable-x, hidden)."""
    flags = vllm_flags(version)
    args = EngineArgs(
        enable_prefix_caching=False, enable_chunked_prefill=False, enforce_eager=True, flags_version=version
    ).render()
    assert flags.parse(args) == []
    for _index, written, _ in flags.known_flags(args):
        spec = flags.spec(written)
        assert spec is not None and written not in spec.hidden, (version, written)


def test_a_boolean_without_an_off_switch_is_named():
    with pytest.raises(ValueError, match=r"cannot be switched off|no flag"):
        vllm_flags("0.33.0").switch("--no-such-flag", on=False)


def test_the_vllm_chart_spells_flags_for_the_workload_image():
    from inferstack.charts.vllm import engine_args_of
    from inferstack.config.loader import parse_config

    workload = {
        "name": "w",
        "pool": "gpu",
        "model": {"id": "Qwen/Qwen3-8B"},
        "engine": {"image": "vllm/vllm-openai:v0.33.0", "enable_prefix_caching": False},
    }
    pools = {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]}
    config = parse_config({"compute": pools, "workloads": [workload]})
    args = engine_args_of(config.workloads[0], neuron=False, image="vllm/vllm-openai:v0.33.0").render()
    assert "--disable-prefix-caching" in args
