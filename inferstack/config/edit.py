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
    """``config`` with each ``path: value`` of ``changes`` set (an unset optional section on the way is created),
    validated again; None when the path does not exist or the result is not a valid config (a suggestion that
    cannot be applied). Only what ``config`` sets is carried over (defaults come back as defaults): the checks that
    judge an option by whether the config sets it (one only read while another is on) judge the changed config as
    they judged ``config``."""
    data: Any = config.model_dump(mode="json", by_alias=True, exclude_unset=True)
    for path, value in changes.items():
        *parents, leaf = _steps(path)
        node = data
        for step in parents:
            if isinstance(node, dict) and isinstance(step, str) and node.get(step) is None:
                node[step] = {}  # an optional section left to its default (e.g. a Dynamo role): set it
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                return None  # the path is not in this config: the change cannot apply
        node[leaf] = value
    try:
        return InferstackConfig.model_validate(data)
    except ValidationError:
        return None
