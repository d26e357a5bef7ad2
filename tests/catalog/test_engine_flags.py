"""Vendored vLLM serve flag lists: generated from the upstream dumps, and the argv walk that validates extra_args."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from inferstack.catalog.engine_flags import VLLM_VERSIONS, UnknownFlag, vllm_flags, vllm_version_of_image

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "vendor_engine_flags.py"
SOURCE = ROOT.parent / "shared" / "upstream" / "engines"
LOCAL = ROOT / "scripts" / "upstream" / "engines"


@pytest.fixture(scope="module")
def v19():
    return vllm_flags("0.19.0")


@pytest.fixture(scope="module")
def v33():
    return vllm_flags("0.33.0")


@pytest.mark.skipif(not SOURCE.is_dir(), reason="upstream reference data (../shared/upstream) not present")
def test_committed_data_is_what_the_script_writes():
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(SOURCE), str(LOCAL), "--check"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


def test_versions_and_provenance(v19):
    assert VLLM_VERSIONS == ("0.19.0", "0.26.0", "0.31.0", "0.33.0")
    assert (v19.engine, v19.version) == ("vllm", "0.19.0")
    assert v19.provenance["source_file"] == "vllm-0.19.0-serve-flags.json"
    assert v19.provenance["git_commit"] == "2a69949bdadf0e8942b7a1619b229cb475beef20"
    assert len(v19.provenance["wheel_sha256"]) == 64
    assert vllm_flags("v0.19.0") is v19


def test_unknown_version_lists_the_available_ones():
    with pytest.raises(ValueError, match=r"0\.19\.0, 0\.26\.0, 0\.31\.0, 0\.33\.0"):
        vllm_flags("0.20.0")


@pytest.mark.parametrize(
    "args",
    [
        ["--max-num-seqs", "8"],
        ["--max-num-seqs=8"],
        ["--enforce-eager", "--max-num-seqs", "8"],
        ["--no-enable-prefix-caching"],
        ["-tp", "2", "-pp=2"],
        ["--max_num_seqs", "8", "--enable_chunked_prefill"],
        ["--compilation-config.mode", "3", "-cc.cudagraph_mode=FULL", "--compilation-config.custom_ops+", "a,b"],
        ["--compilation_config.pass_config.fuse_norm_quant", "true"],
        ["-O3", "-O", "2", "-O=1"],
        ["Qwen/Qwen3-8B", "--served-model-name", "a", "b", "--seed", "-1"],
        ["--model", "/models/q", "--hf-token"],
        ["--", "--not-parsed"],
    ],
)
def test_accepted_argument_lists(v19, args):
    assert v19.parse(args) == []


def test_value_consuming_and_boolean_flags(v19):
    assert v19.takes_value("--max-num-seqs")
    assert v19.takes_value("--compilation-config.mode")
    assert v19.takes_value("-O")
    assert not v19.takes_value("--enforce-eager")
    assert not v19.takes_value("--no-enable-prefix-caching")
    assert not v19.takes_value("-O3")
    # A boolean does not swallow the next flag; a value-taking flag does not swallow an option.
    assert [(u.flag, u.index) for u in v19.parse(["--enforce-eager", "--bogus"])] == [("--bogus", 1)]
    assert [u.index for u in v19.parse(["--max-num-seqs", "--bogus-flag", "8"])] == [1]
    with pytest.raises(ValueError, match="not a flag"):
        v19.takes_value("--bogus")


def test_spellings(v19, v33):
    assert v19.knows("--max-num-seqs")
    assert v19.knows("--max_num_seqs=8")
    assert v19.canonical("-tp") == "--tensor-parallel-size"
    assert v19.canonical("--compilation-config.mode") == "--compilation-config"
    assert not v19.knows("--max-num-seqs.foo")  # sub-keys only on JSON-valued flags
    assert not v19.knows("--disable-prefix-caching")  # the 0.33 EnableDisableAction spelling
    assert v33.knows("--disable-prefix-caching")
    assert v33.knows("--no-enable-prefix-caching")  # hidden in 0.33, still accepted
    assert v33.canonical("--device-memory-utilization") == "--gpu-memory-utilization"


def test_unknown_flag_suggests_the_nearest(v19):
    (unknown,) = v19.parse(["--enforce-eager", "--gpu-memory-utilisation", "0.9"])
    assert isinstance(unknown, UnknownFlag)
    assert unknown.flag == "--gpu-memory-utilisation"
    assert unknown.index == 1
    assert unknown.near[0] == "--gpu-memory-utilization"
    assert len(unknown.near) <= 3
    (dotted,) = v19.parse(["--compilaton-config.mode", "3"])
    assert dotted.near[0] == "--compilation-config.mode"
    (abbreviated,) = v19.parse(["--max-num-seq", "8"])
    assert abbreviated.near[0] == "--max-num-seqs"
    (joined,) = v19.parse(["--max-num-seqs 8"])  # one item: argparse would take it for the model
    assert (joined.flag, joined.near) == ("--max-num-seqs 8", ("--max-num-seqs",))
    assert v19.parse(["--api-key", "--a key with spaces"]) == []  # a value, as argparse sees it
    assert v19.parse(["--chat-template", "{{ x }}", "--seed", "1"]) == []


def test_flag_removed_in_0_33(v19, v33):
    args = ["--max-num-partial-prefills", "2"]
    assert v19.parse(args) == []
    assert [u.flag for u in v33.parse(args)] == ["--max-num-partial-prefills"]


@pytest.mark.parametrize(
    ("image", "version"),
    [
        ("vllm/vllm-openai:v0.19.0", "0.19.0"),
        ("docker.io/vllm/vllm-openai:v0.33.0", "0.33.0"),
        ("vllm/vllm-openai:v0.19.0-cu130", "0.19.0"),
        ("registry.local:5000/mirror/vllm/vllm-openai:v0.19.0@sha256:" + "0" * 64, "0.19.0"),
        ("vllm/vllm-openai:latest", None),
        ("vllm/vllm-openai:v0.19.0rc1", None),
        ("vllm/vllm-openai", None),
        ("vllm/vllm-openai@sha256:" + "0" * 64, None),
        ("acme/vllm-custom:v0.19.0", None),
        ("public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.16.0-neuronx-py312-sdk2.31.1-ubuntu24.04", "0.16.0"),
        ("public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:latest", None),
    ],
)
def test_vllm_version_of_image(image, version):
    assert vllm_version_of_image(image) == version
