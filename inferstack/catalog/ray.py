"""Ray Serve LLM facts: the Ray release inside the pinned image, the accelerator types Ray advertises for our GPUs,
and validation of a Serve LLM config against the pinned release's pydantic fields (vendored by
``scripts/vendor_ray_fields.py`` from ../shared/upstream/engines; ``make flags``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

_DATA = resources.files("inferstack.catalog").joinpath("engine_flag_data")

#: ``accelerator_type`` Ray detects per GPU: the word after "NVIDIA " in the device name (Ray 2.52
#: ``_private/accelerators/nvidia_gpu.py``, regex ``\w+\s+([A-Z0-9]+)``); p4d/p4de both report ``A100`` (the
#: ``A100-40G``/``A100-80G`` constants match no detected node). The device-name strings themselves are NVIDIA's and
#: were not read here (?): ../shared/facts/ray-serve-llm.md §2.4.
RAY_ACCELERATOR_TYPE: dict[str, str] = {
    "A10G": "A10G",
    "L4": "L4",
    "L40S": "L40S",
    "A100-40GB": "A100",
    "A100-80GB": "A100",
    "H100": "H100",
    "H200": "H200",
    "B200": "B200",
}

#: Serve LLM config classes and which of their fields hold a nested class (``[]``: a list of them).
NESTED: dict[str, dict[str, str]] = {
    "LLMServingArgs": {"llm_configs[]": "LLMConfig"},
    "PDServingArgs": {"prefill_config": "LLMConfig", "decode_config": "LLMConfig"},
    "LLMConfig": {
        "model_loading_config": "ModelLoadingConfig",
        "deployment_config": "DeploymentConfig",
        "lora_config": "LoraConfig",
        "placement_group_config": "PlacementGroupConfig",
    },
    "DeploymentConfig": {"autoscaling_config": "AutoscalingConfig"},
}


@cache
def ray_fields(version: str) -> dict[str, Any]:
    """The vendored field lists of Ray ``version`` (e.g. ``2.52.0``)."""
    return json.loads(_DATA.joinpath(f"ray-serve-llm-{version}.json").read_text())


def ray_versions() -> list[str]:
    return sorted(p.name[len("ray-serve-llm-") : -len(".json")] for p in _DATA.iterdir() if p.name.startswith("ray-"))


def config_problems(version: str, model: str, data: Mapping[str, Any], path: str = "") -> list[str]:
    """Keys of ``data`` (a ``model`` config: ``LLMServingArgs``, ``PDServingArgs``, ``LLMConfig``…) that Ray
    ``version`` does not have — ``forbid`` classes would fail the Serve app, ``ignore`` ones (DeploymentConfig,
    AutoscalingConfig) would drop them without a word: both are problems. Nested classes are checked too."""
    spec = ray_fields(version)["models"][model]
    problems = []
    known = set(spec["fields"])
    for key, value in data.items():
        where = f"{path}.{key}" if path else key
        if key not in known:
            problems.append(f"{where}: not a field of Ray {version} {model} — valid: {', '.join(sorted(known))}")
            continue
        nested = NESTED.get(model, {})
        if key in nested and isinstance(value, Mapping):
            problems += config_problems(version, nested[key], value, where)
        elif f"{key}[]" in nested and isinstance(value, list):
            for index, item in enumerate(value):
                problems += config_problems(version, nested[f"{key}[]"], item, f"{where}[{index}]")
    return problems


def accelerator_types(version: str) -> list[str]:
    """The ``accelerator_type`` values Ray ``version`` accepts."""
    return list(ray_fields(version)["accelerator_types"])
