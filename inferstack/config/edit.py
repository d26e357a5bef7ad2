"""Changing a validated config by path: what a rule's suggested fix does, so a suggestion can be checked (does the
changed config pass?) before it is offered."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from inferstack.config.model import InferstackConfig

_STEP = re.compile(r"([A-Za-z_$][\w$]*)|\[(\d+)\]")


def _steps(path: str) -> list[str | int]:
    """``workloads[0].engine.tensor_parallel_size`` → ``["workloads", 0, "engine", "tensor_parallel_size"]``."""
    steps: list[str | int] = []
    for part in path.split("."):
        for name, index in _STEP.findall(part):
            steps.append(int(index) if index else name)
    return steps


def with_changes(config: InferstackConfig, changes: Mapping[str, Any]) -> InferstackConfig | None:
    """``config`` with each ``path: value`` of ``changes`` set, validated again; None when the result is not a valid
    config (a suggestion that cannot be applied)."""
    data: Any = config.model_dump(mode="json", by_alias=True)
    for path, value in changes.items():
        *parents, leaf = _steps(path)
        node = data
        for step in parents:
            node = node[step]
        node[leaf] = value
    try:
        return InferstackConfig.model_validate(data)
    except ValidationError:
        return None
