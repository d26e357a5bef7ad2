"""Ray Serve LLM config fields vendored from ../shared/upstream/engines (scripts/vendor_ray_fields.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from inferstack.catalog.ray import accelerator_types, config_problems, ray_fields, ray_versions
from inferstack.catalog.versions import ENGINE_RAY_VERSIONS

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT.parent / "shared" / "upstream" / "engines"


@pytest.mark.skipif(not SOURCE.is_dir(), reason="upstream reference data (../shared/upstream) not present")
def test_committed_data_is_what_the_script_writes():
    result = subprocess.run([sys.executable, "scripts/vendor_ray_fields.py", "--check"], cwd=ROOT, capture_output=True)
    assert result.returncode == 0, result.stderr.decode()


def test_the_pinned_image_has_a_field_list():
    assert set(ENGINE_RAY_VERSIONS.values()) <= set(ray_versions()) and "2.60.0" in ray_versions()
    assert ray_fields("2.52.0")["provenance"]["source_file"] == "ray-serve-llm-2.52.0-fields.json"


def test_the_pd_proxy_fields_are_gone_in_2_60():
    """Ray 2.59 removed PDServingArgs' proxy fields (extra=forbid): the same config is valid on 2.52 only."""
    args = {"prefill_config": {}, "decode_config": {}, "proxy_deployment_config": {}}
    assert config_problems("2.52.0", "PDServingArgs", args) == []
    (problem,) = config_problems("2.60.0", "PDServingArgs", args)
    assert problem.startswith("proxy_deployment_config: not a field of Ray 2.60.0 PDServingArgs")


def test_accelerator_types_include_the_gpus_we_run():
    assert {"L4", "L40S", "A10G", "A100", "H100", "H200", "B200"} <= set(accelerator_types("2.52.0"))
