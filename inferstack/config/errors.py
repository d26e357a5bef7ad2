"""Configuration problems as ``path.to.field: value — what is valid`` lines, never tracebacks."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from inferstack.config.kinds import KINDS

_MISSING = object()


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a config: where, what was given, and what would be valid."""

    path: str
    message: str
    value: Any = _MISSING

    def __str__(self) -> str:
        if self.value is _MISSING:
            return f"{self.path}: {self.message}"
        return f"{self.path}: {_show(self.value)} — {self.message}"


class ConfigError(Exception):
    """Raised with every problem found in a config; ``str()`` lists them one per line."""

    def __init__(self, source: str, problems: list[Problem]) -> None:
        self.source = source
        self.problems = problems
        super().__init__(self.report())

    def report(self) -> str:
        count = len(self.problems)
        head = f"{self.source}: {count} problem{'s' if count != 1 else ''} in the inferstack config"
        return "\n".join([head, *(f"  - {p}" for p in self.problems)])


def _show(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def format_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


def _kinds() -> dict[str, type[BaseModel]]:
    return {name: kind.config for name, kind in KINDS.items()}


#: Segments pydantic adds to a location for the members of a union or a validator chain (``function-after[…]``,
#: ``int``, ``str``…): the config has no such key.
_VALIDATOR_TAG = re.compile(r"^[a-z][a-z0-9_-]*\[.*\]$")
_TYPE_TAGS = frozenset({"int", "str", "float", "bool", "none", "bytes", "list", "dict", "is-instance", "literal"})


def _without_tags(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """``loc`` without the union tags pydantic puts into it — a workload kind after a list index
    (``workloads.0.vllm.engine`` → ``workloads.0.engine``), a union member's type or validator
    (``availability_zone.function-after[_check_az(), str]`` → ``availability_zone``)."""
    if len(loc) > 2 and loc[0] == "workloads" and isinstance(loc[1], int) and loc[2] in _kinds():
        loc = (*loc[:2], *loc[3:])
    return tuple(
        part for part in loc if not (isinstance(part, str) and (_VALIDATOR_TAG.match(part) or part in _TYPE_TAGS))
    )


def _model_at(root: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model class that the location ``loc`` (a path of field names, list indexes and union tags) points
    into."""
    current: Any = root
    for i, part in enumerate(loc):
        if isinstance(part, int):
            continue
        if i == 2 and loc[0] == "workloads" and isinstance(loc[1], int) and part in _kinds():
            current = _kinds()[part]  # a workload kind's tag: the union member
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field = current.model_fields.get(part) or next(
            (f for f in current.model_fields.values() if f.alias == part), None
        )
        if field is None:
            return None
        current = _unwrap(field.annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap(annotation: Any) -> Any:
    for arg in getattr(annotation, "__args__", ()) or ():
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
        inner = _unwrap(arg)
        if inner is not None and isinstance(inner, type) and issubclass(inner, BaseModel):
            return inner
    return annotation


def _field_names(model: type[BaseModel]) -> list[str]:
    return sorted(f.alias or name for name, f in model.model_fields.items())


def did_you_mean(given: object, valid: list[str]) -> str:
    """`` — did you mean <the nearest of valid>?`` when ``given`` is a string close to one of ``valid`` (compared
    lower-cased, ``-`` read as ``_``), else ""."""
    if not isinstance(given, str) or not valid:
        return ""
    folded = {name.lower().replace("-", "_"): name for name in valid}
    near = difflib.get_close_matches(given.lower().replace("-", "_"), list(folded), n=1, cutoff=0.75)
    return f" — did you mean {folded[near[0]]}?" if near else ""


def problem_from(root: type[BaseModel], error: ErrorDetails) -> Problem:
    loc = tuple(error["loc"])
    ctx = error.get("ctx") or {}
    kind = error["type"]
    if kind == "extra_forbidden":
        parent = _model_at(root, loc[:-1])
        valid = f"valid keys here: {', '.join(_field_names(parent))}" if parent else "remove it"
        owners = [name for name, model in _kinds().items() if model is not parent and loc[-1] in _field_names(model)]
        if parent in _kinds().values() and owners:
            valid += f" ({loc[-1]} is a field of kind {' / '.join(owners)})"
        near = did_you_mean(loc[-1], _field_names(parent)) if parent else ""
        return Problem(format_path(_without_tags(loc)), f"unknown key — {valid}{near}")
    loc = _without_tags(loc)
    if loc and loc[-1] == "[key]":  # a mapping key that is not a string (YAML true, 1, a mapping…)
        key = loc[-2] if len(loc) > 1 else "?"
        return Problem(format_path(loc[:-2]), f"key {key!r}: {error['msg'][0].lower()}{error['msg'][1:]} (quote it)")
    if kind == "missing":
        return Problem(format_path(loc), "required")
    if loc[:1] == ("workloads",) and len(loc) == 2 and kind in ("model_type", "model_attributes_type", "dict_type"):
        return Problem(format_path(loc), "a workload is a mapping (name, pool, model, …)", error.get("input", _MISSING))
    if kind == "workload_kind":
        given = error.get("input")
        value = given.get("kind", _MISSING) if isinstance(given, dict) else _MISSING
        return Problem(format_path((*loc, "kind")), error["msg"] + did_you_mean(value, list(_kinds())), value)
    if "field" in ctx:
        loc = loc + tuple(str(ctx["field"]).split("."))
        return Problem(format_path(loc), error["msg"])
    message = error["msg"]
    if kind == "enum":
        message = f"must be one of {ctx.get('expected', '')}"
    elif kind.endswith("_type") or kind.endswith("_parsing"):
        message = f"{message[0].lower()}{message[1:]}"
    return Problem(format_path(loc), message, error.get("input", _MISSING))


def _merged(problems: list[Problem]) -> list[Problem]:
    """One problem per path: the members of a union each fail — say what each would accept, once."""
    by_path: dict[str, Problem] = {}
    for problem in problems:
        first = by_path.get(problem.path)
        if first is None:
            by_path[problem.path] = problem
        elif problem.message not in first.message:
            by_path[problem.path] = Problem(first.path, f"{first.message}, or {problem.message}", first.value)
    return list(by_path.values())


def problems_from(root: type[BaseModel], exc: ValidationError) -> list[Problem]:
    errors = exc.errors(include_url=False)
    # A list whose items all failed is also reported "too short": the items' own problems say it better.
    nested = [tuple(e["loc"]) for e in errors]
    kept = [
        e
        for e in errors
        if not (
            e["type"] == "too_short"
            and any(loc[: len(e["loc"])] == tuple(e["loc"]) and len(loc) > len(e["loc"]) for loc in nested)
        )
    ]
    return _merged([problem_from(root, e) for e in kept])
