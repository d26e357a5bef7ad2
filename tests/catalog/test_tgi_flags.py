"""TGI 3.3.7's launcher flags (issue 26 §2.2), vendored from ``launcher/src/main.rs`` (clap's ``struct Args``) by
``scripts/vendor_tgi_flags.py``: the flags inferstack renders are the launcher's, clap's rules hold, and
``engine.extra_args`` is checked against the image's release."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inferstack.catalog.engine_flags import _DATA, TGI_VERSIONS, tgi_flags, tgi_version_of_image
from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.config import ConfigError, parse_config
from inferstack.config.tgi import TGI_MANAGED_FLAGS
from inferstack.rules import evaluate
from tests.charts.conftest import engine_args
from tests.synth import ROOT

FLAGS = tgi_flags("3.3.7")


def test_the_catalogs_image_has_a_vendored_list_with_its_provenance():
    assert tgi_version_of_image(ENGINE_IMAGES["tgi"]) == "3.3.7" and "3.3.7" in TGI_VERSIONS
    raw = json.loads(_DATA.joinpath("tgi-3.3.7.json").read_text())
    assert raw["argparse"] == "clap" and raw["provenance"]["tag"] == "v3.3.7"
    assert len(raw["provenance"]["commit"]) == 40 and len(FLAGS.flags) == 54


def test_every_flag_inferstack_renders_for_tgi_is_the_launchers():
    args = engine_args("tgi.yaml", ["/tgi-entrypoint.sh"])
    assert FLAGS.parse(args) == [] and FLAGS.stray_values(args) == []
    assert {name for _, _, name in FLAGS.known_flags(args)} <= TGI_MANAGED_FLAGS


def test_clap_rules():
    (unknown,) = FLAGS.parse(["--max_total_tokens", "4096"])  # clap takes the kebab-case spelling only
    assert "--max-total-tokens" in unknown.near
    assert FLAGS.canonical("-p") == "--port" and not FLAGS.takes_value("--trust-remote-code")
    assert FLAGS.stray_values(["--trust-remote-code", "true"]) == [(1, "true")]  # a switch: SetTrue
    assert FLAGS.parse(["--sharded", "false", "--cuda-graphs", "1,2,4", "--max-batch-size=32"]) == []


def _tgi(extra_args: list[str], image: str | None = None) -> dict:
    model = {"id": "Qwen/Qwen3-8B", "source": {"type": "hf"}}
    workload = {"name": "t", "kind": "tgi", "pool": "gpu", "model": model, "engine": {"extra_args": extra_args}}
    if image:
        workload["image"] = image
    return {
        "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]},
        "workloads": [workload],
    }


@pytest.mark.parametrize(
    ("extra_args", "field", "named"),
    [
        (["--max-batch-sise", "32"], "extra_args[0]", "did you mean --max-batch-size"),
        (["--num-shard", "2"], "extra_args[0]", "set by a typed field"),
        (["--trust-remote-code", "yes"], "extra_args[1]", "TGI's launcher takes no positional argument"),
        (["--trust-remote-code=true"], "extra_args[0]", "is a switch and takes no value"),
        (["--max-input-length", "4000"], "extra_args[0]", "set by a typed field"),
        (["--max-batch-size 32"], "extra_args[0]", "passes its arguments unquoted"),
        (["--cors-allow-origin", "*"], "extra_args[1]", "CORS_ALLOW_ORIGIN"),
        (["--api-key", "a?b"], "extra_args[1]", "names of files in its WORKDIR"),
        (["--otlp-service-name", ""], "extra_args[1]", "an empty item vanishes"),
    ],
)
def test_extra_args_are_checked_against_the_release(extra_args, field, named):
    with pytest.raises(ConfigError) as raised:
        parse_config(_tgi(extra_args))
    assert f"workloads[0].engine.{field}" in str(raised.value) and named in str(raised.value)


def test_a_pattern_with_a_slash_passes():
    """Pathname expansion of http://[fd00::1]:4317 needs a directory 'http:' in /usr/src: the word stays as it is."""
    assert parse_config(_tgi(["--otlp-endpoint", "http://[fd00::1]:4317"]))


def test_known_flags_pass_and_only_another_release_is_warned_about():
    checked = evaluate(parse_config(_tgi(["--max-batch-size", "32", "--disable-custom-kernels"])))
    assert not [f for f in checked.warnings if f.rule == "ENGINE-FLAGS-UNVERIFIED"]
    other = evaluate(parse_config(_tgi(["--x"], image="ghcr.io/huggingface/text-generation-inference:3.3.8")))
    assert [f.path for f in other.warnings if f.rule == "ENGINE-FLAGS-UNVERIFIED"] == ["workloads[0].engine.extra_args"]


@pytest.mark.parametrize(
    ("image", "version"),
    [
        ("ghcr.io/huggingface/text-generation-inference:3.3.7", "3.3.7"),
        ("123456789012.dkr.ecr.us-west-2.amazonaws.com/mirror/huggingface/text-generation-inference:3.3.7", "3.3.7"),
        ("ghcr.io/huggingface/text-generation-inference:3.3.7-rocm", None),
        ("ghcr.io/huggingface/text-generation-inference:latest", None),
        ("example.com/tgi:3.3.7", None),
    ],
)
def test_the_release_of_an_image(image, version):
    assert tgi_version_of_image(image) == version


#: A git mirror of huggingface/text-generation-inference holding the tag (the ``fetch`` tool puts it here).
MIRROR = Path(os.environ.get("INFERSTACK_TGI_MIRROR", "/work/.mirror/huggingface+text-generation-inference/repo"))


@pytest.mark.skipif(not MIRROR.is_dir(), reason="no text-generation-inference mirror (set INFERSTACK_TGI_MIRROR)")
def test_the_vendored_list_is_what_the_script_reads_from_the_tag(tmp_path):
    raw = json.loads(_DATA.joinpath("tgi-3.3.7.json").read_text())
    main_rs = tmp_path / "main.rs"
    shown = subprocess.run(
        ["git", f"--git-dir={MIRROR}", "show", "v3.3.7:launcher/src/main.rs"], capture_output=True, check=True
    )
    main_rs.write_bytes(shown.stdout)
    script = ROOT / "scripts" / "vendor_tgi_flags.py"
    command = [sys.executable, str(script), str(main_rs), "--version", "3.3.7", "--commit", raw["provenance"]["commit"]]
    result = subprocess.run([*command, "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
