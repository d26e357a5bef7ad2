"""SGLang 0.5.19's ``launch_server`` flags (issue 26 §2.2: the flag list follows the engine release), vendored from
the wheel's source by ``scripts/vendor_sglang_flags.py``: the flags inferstack renders are the parser's, SGLang's
plain argparse rules hold (no ``_``/``-`` equivalence), and ``engine.extra_args`` is checked against the image's
release — refused by name when unknown, managed or stray; passed with a warning for a release without a list."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inferstack.catalog.engine_flags import (
    _DATA,
    SGLANG_VERSIONS,
    sglang_flags,
    sglang_version_of_image,
)
from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.config import ConfigError, parse_config
from inferstack.config.sglang import SGLANG_MANAGED_FLAGS
from tests.charts.conftest import engine_args
from tests.synth import ROOT

FLAGS = sglang_flags("0.5.19")


def test_the_catalogs_image_has_a_vendored_list_with_its_provenance():
    assert sglang_version_of_image(ENGINE_IMAGES["sglang"]) == "0.5.19" and "0.5.19" in SGLANG_VERSIONS
    raw = json.loads(_DATA.joinpath("sglang-0.5.19.json").read_text())
    assert raw["argparse"] == "plain" and raw["provenance"]["wheel"].startswith("sglang-0.5.19-")
    assert len(raw["provenance"]["wheel_sha256"]) == 64 and len(FLAGS.flags) > 400


def test_every_flag_inferstack_renders_for_sglang_is_the_parsers():
    """What runs: the container args of the SGLang example, after ``-m sglang.launch_server``, parse clean."""
    args = engine_args("sglang-structured.yaml", ["sglang.launch_server"])
    assert FLAGS.parse(args) == [] and FLAGS.stray_values(args) == [] and FLAGS.bad_choices(args) == []
    assert {"--model-path", "--tp-size", "--enable-metrics"} <= {name for _, _, name in FLAGS.known_flags(args)}
    assert {name for _, _, name in FLAGS.known_flags(args)} <= SGLANG_MANAGED_FLAGS


def test_plain_argparse_rules():
    (unknown,) = FLAGS.parse(["--tp_size", "2"])  # vLLM would take it; SGLang's argparse does not
    assert unknown.flag == "--tp_size" and "--tp-size" in unknown.near
    assert FLAGS.canonical("--model") == "--model-path" and FLAGS.canonical("--tensor-parallel-size") == "--tp-size"
    assert (
        FLAGS.parse(["--enable-hierarchical-cache", "--lora-paths", "a=/m/a", "b=/m/b", "--max-loras-per-batch", "2"])
        == []
    )
    assert FLAGS.stray_values(["--enable-hierarchical-cache", "x"]) == [(1, "x")]  # a switch takes no value
    assert FLAGS.bad_choices(["--kv-cache-dtype", "fp7"])[0][2] == "fp7"
    assert FLAGS.bad_choices(["--log-requests-level", "01"]) == []  # argparse converts with type=int first
    assert FLAGS.bad_choices(["--log-requests-level", "9"])[0][2] == "9"


def test_a_flag_that_stops_the_server_is_not_in_the_list():
    """``DeprecatedAction`` with an error message calls ``parser.error``: the server never starts."""
    assert not FLAGS.knows("--enable-expert-distribution-metrics")
    assert FLAGS.spec("--stream-output").deprecated  # still works, with a warning


def _sglang(extra_args: list[str], image: str | None = None) -> dict:
    model = {"id": "Qwen/Qwen3-8B", "source": {"type": "hf"}}
    workload = {"name": "s", "kind": "sglang", "pool": "gpu", "model": model}
    workload["engine"] = {"extra_args": extra_args}
    if image:
        workload["image"] = image
    pools = [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]
    return {"compute": {"karpenter_pools": pools}, "workloads": [workload]}


@pytest.mark.parametrize(
    ("extra_args", "field", "named"),
    [
        (["--enable-hierarchical-cahce"], "extra_args[0]", "did you mean --enable-hierarchical-cache"),
        (["--tp-size", "2"], "extra_args[0]", "set by a typed field"),
        (["--model", "other"], "extra_args[0]", "set by a typed field"),
        (["--enable-hierarchical-cache", "yes"], "extra_args[1]", "SGLang takes no positional argument"),
        (["--cuda-graph-tc-compiler=tvm"], "extra_args[0]", "valid: eager, inductor"),
        (["--enable-hierarchical-cache=true"], "extra_args[0]", "is a switch and takes no value"),
        (["--enable-hierarchical-ca"], "extra_args[0]", "an abbreviation of --enable-hierarchical-cache"),
        (["--no-lora-strict"], "extra_args[0]", "an abbreviation of --no-lora-strict-loading"),
    ],
)
def test_extra_args_are_checked_against_the_release(extra_args, field, named):
    with pytest.raises(ConfigError) as raised:
        parse_config(_sglang(extra_args))
    assert f"workloads[0].engine.{field}" in str(raised.value) and named in str(raised.value)


def test_known_flags_pass_and_another_release_is_not_judged():
    assert parse_config(_sglang(["--enable-hierarchical-cache", "--max-loras-per-batch", "4"]))
    assert parse_config(_sglang(["--a-flag-of-the-next-release"], image="docker.io/lmsysorg/sglang:v0.5.99-cu130"))


@pytest.mark.parametrize(
    ("image", "version"),
    [
        ("docker.io/lmsysorg/sglang:v0.5.19-cu129", "0.5.19"),
        ("lmsysorg/sglang:v0.5.19", "0.5.19"),
        ("123456789012.dkr.ecr.us-west-2.amazonaws.com/mirror/lmsysorg/sglang:v0.5.19-cu129-amd64", "0.5.19"),
        ("lmsysorg/sglang:latest", None),
        ("lmsysorg/sglang:v0.5.19-rocm700-mi30x", None),
        ("example.com/team/sglang:v0.5.19", None),
        ("lmsysorg/sglang@sha256:" + "a" * 64, None),
    ],
)
def test_the_release_of_an_image(image, version):
    assert sglang_version_of_image(image) == version


def test_a_checked_release_is_not_warned_about():
    from inferstack.rules import evaluate

    checked = evaluate(parse_config(_sglang(["--enable-hierarchical-cache"])))
    assert not [f for f in checked.warnings if f.rule == "ENGINE-FLAGS-UNVERIFIED"]
    other = evaluate(parse_config(_sglang(["--x"], image="docker.io/lmsysorg/sglang:v0.5.99-cu130")))
    assert [f.path for f in other.warnings if f.rule == "ENGINE-FLAGS-UNVERIFIED"] == ["workloads[0].engine.extra_args"]


@pytest.mark.parametrize(
    ("version", "flag", "listed"),
    [
        ("0.5.19", "--cuda-graph-bs", True),  # gone in 0.5.20 (the fields moved to arg_groups/fields/)
        ("0.5.20", "--cuda-graph-bs", False),
        ("0.5.22", "--enable-paged-experts", False),  # new in 0.5.23
        ("0.5.23", "--enable-paged-experts", True),
    ],
)
def test_each_vendored_release_checks_its_own_flags(version, flag, listed):
    image = f"docker.io/lmsysorg/sglang:v{version}-cu130"
    if listed:
        assert parse_config(_sglang([flag, "1"] if flag == "--cuda-graph-bs" else [flag], image=image))
        return
    with pytest.raises(ConfigError) as raised:
        parse_config(_sglang([flag, "1"] if flag == "--cuda-graph-bs" else [flag], image=image))
    assert f"workloads[0].engine.extra_args[0]: {flag} is not a flag of SGLang {version}" in str(raised.value)


#: Where a maintainer downloaded the wheels the lists were read from (``pip download sglang==<version> --no-deps``).
WHEELS = Path(os.environ.get("INFERSTACK_SGLANG_WHEELS", "/tmp/sglw"))
VENDORED = ("0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23")


def _wheel(version: str) -> Path:
    name = f"sglang-{version}-cp311-cp311-manylinux_2_34_x86_64.whl"
    found = [p for p in (WHEELS / name, Path("/tmp/sgl") / name) if p.is_file()]
    return found[0] if found else WHEELS / name


@pytest.mark.parametrize("version", VENDORED)
def test_the_vendored_list_is_what_the_script_reads_from_the_wheel(version):
    wheel = _wheel(version)
    if not wheel.is_file():
        pytest.skip(f"the sglang {version} wheel is not here (set INFERSTACK_SGLANG_WHEELS)")
    script = ROOT / "scripts" / "vendor_sglang_flags.py"
    result = subprocess.run([sys.executable, str(script), str(wheel), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_vendored_release_is_checked_against_its_wheel():
    assert set(SGLANG_VERSIONS) == set(VENDORED)


def test_a_retired_valued_flag_keeps_its_value_and_choices():
    """0.5.23's ``--monokernel-backend``: a ``DeprecatedStoreConstAction`` (nargs 0 by its class) given ``nargs=None``
    and ``choices=["amd"]`` takes one value (found by rebuilding the real parser with stubbed imports)."""
    flag = sglang_flags("0.5.23").spec("--monokernel-backend")
    assert flag is not None and flag.nargs is None and flag.choices == ("amd",)
    assert parse_config(_sglang(["--monokernel-backend", "amd"], image="docker.io/lmsysorg/sglang:v0.5.23-cu130"))
