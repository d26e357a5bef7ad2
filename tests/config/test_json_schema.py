"""The committed JSON Schema (inferstack.schema.json, for editors) accepts every config of the repo and refuses
what the config model refuses — a workload without ``kind`` is a vllm workload, not "valid under several
branches", so the first file a newcomer opens is not flagged — and keeps the hover docs and defaults."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest
import yaml

from inferstack.config import ConfigError, parse_config
from tests.synth import CONFIGS, ROOT

SCHEMA = json.loads((ROOT / "inferstack.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
DEFAULT = yaml.safe_load((ROOT / "inferstack.yaml").read_text())


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_every_config_of_the_repo_is_valid_under_the_schema(path):
    errors = [
        f"{list(e.absolute_path)}: {e.message[:200]}" for e in VALIDATOR.iter_errors(yaml.safe_load(path.read_text()))
    ]
    assert errors == []


def _with(change) -> dict:
    data = copy.deepcopy(DEFAULT)
    change(data)
    return data


BAD = {
    "unknown kind": lambda d: d["workloads"][0].update(kind="vlm"),
    "unknown workload key": lambda d: d["workloads"][0].update(replcas=2),
    "unknown top-level key": lambda d: d.update(netwrok={}),
    "kind-specific key on vllm": lambda d: d["workloads"][0].update(gpus=1),  # NIM's field
    "wrong type": lambda d: d["workloads"][0].update(replicas="two"),
}


@pytest.mark.parametrize("name", BAD)
def test_the_schema_refuses_what_the_config_model_refuses(name):
    data = _with(BAD[name])
    with pytest.raises(ConfigError):
        parse_config(data)
    assert list(VALIDATOR.iter_errors(data)), name


def test_a_workload_of_another_kind_matches_only_its_own_branch():
    tgi = {"name": "t", "kind": "tgi", "pool": "l40s", "model": {"id": "Qwen/Qwen3-8B", "source": {"type": "hf"}}}
    data = _with(lambda d: d.update(workloads=[tgi]))
    assert list(VALIDATOR.iter_errors(data)) == []
    parse_config(data)


def test_hover_docs_and_defaults_stay():
    definitions = SCHEMA["$defs"]
    vllm = definitions["VllmWorkloadConfig"]
    assert vllm["properties"]["kind"].get("default") == "vllm"
    assert "kind" not in vllm.get("required", [])
    assert vllm["properties"]["replicas"]["description"]
    tgi = definitions["TgiWorkloadConfig"]
    assert "kind" in tgi["required"] and tgi["properties"]["kind"].get("default") == "tgi"
