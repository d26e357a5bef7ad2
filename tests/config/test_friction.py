"""What a newcomer types first, answered with what to do: an unquoted version, YAML indentation and tabs, and no
Node end-of-life banner ahead of inferstack's own output when ``npx cdk`` runs outside make."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from inferstack.config import ConfigError, load_config, parse_config
from tests.synth import ROOT


@pytest.mark.parametrize("number", [1.3, 1.36])
def test_an_unquoted_kubernetes_version_says_to_quote_it(number):
    with pytest.raises(
        ConfigError, match=r'cluster\.kubernetes_version: .*YAML reads an unquoted 1\.30 as 1\.3.*"1\.36"'
    ):
        parse_config({"cluster": {"kubernetes_version": number}})
    assert parse_config({"cluster": {"kubernetes_version": "1.36"}}).cluster.kubernetes_version == "1.36"


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("network:\n  vpc_cidr: 10.0.0.0/16\n   max_azs: 2\n", "indented wrongly"),
        ("workloads:\n  - name: a\n    pool: b\n   model: x\n", "indented differently from its siblings"),
        ("network:\n\tmax_azs: 2\n", "YAML indents with spaces only"),
        ("name: a: b\n", "quote it"),
    ],
)
def test_yaml_errors_say_what_usually_causes_them(tmp_path, text, hint):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="invalid YAML") as error:
        load_config(path)
    assert hint in str(error.value) and "line " in str(error.value)


def test_npx_cdk_outside_make_prints_no_node_banner(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"}
    env["CDK_CONTEXT_JSON"] = json.dumps({"config": str(tmp_path / "missing.yaml")})
    env["CDK_OUTDIR"] = str(tmp_path / "out")
    result = subprocess.run([sys.executable, "app.py"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 1 and "missing.yaml" in result.stderr  # inferstack's own message
    assert "end-of-life" not in result.stderr
