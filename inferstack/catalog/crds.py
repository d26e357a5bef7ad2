"""Upstream CRD schemas (compiled by ``scripts/compile_crds.py``) and validation of custom resources against them.

Unknown fields are errors: the API server would prune them silently, so a typo in a custom resource would be lost.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft7Validator
from jsonschema.exceptions import ValidationError

_DATA = resources.files("inferstack.catalog").joinpath("crd_schemas")


@dataclass(frozen=True)
class CrdEntry:
    group: str
    version: str
    kind: str
    file: str
    scope: str
    deprecated: bool
    source: str
    source_sha256: str


@cache
def crd_index() -> dict[tuple[str, str], CrdEntry]:
    """``(apiVersion, kind)`` → entry, for every served version of every vendored CRD."""
    raw = json.loads(_DATA.joinpath("index.json").read_text())
    index: dict[tuple[str, str], CrdEntry] = {}
    for key, meta in raw.items():
        group, version, kind = key.split("/")
        entry = CrdEntry(
            group=group,
            version=version,
            kind=kind,
            file=meta["file"],
            scope=meta["scope"],
            deprecated=meta["deprecated"],
            source=meta["source"],
            source_sha256=meta["source_sha256"],
        )
        index[(f"{group}/{version}", kind)] = entry
    return index


def is_custom_resource(api_version: str, kind: str) -> bool:
    return (api_version, kind) in crd_index()


@cache
def _validator(api_version: str, kind: str) -> Draft7Validator:
    entry = crd_index()[(api_version, kind)]
    data = _DATA.joinpath(entry.file).read_bytes()
    return Draft7Validator(json.loads(gzip.decompress(data)))


def _path(error: ValidationError) -> str:
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


def _describe(error: ValidationError) -> str:
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        prefix = _path(error)
        where = "" if prefix == "<root>" else prefix + "."
        return "; ".join(f"{where}{name}: unknown field — valid fields here: {', '.join(allowed)}" for name in extra)
    if error.validator == "enum":
        return f"{_path(error)}: {error.instance!r} — must be one of {', '.join(map(repr, error.validator_value))}"
    return f"{_path(error)}: {error.message}"


#: An unresolved CDK token inside a string (``${Token[...]}``): its value is only known at deploy time.
_TOKEN = re.compile(r"\$\{Token\[[^\]]+\]\}")
#: Checks that cannot judge a deploy-time value; type and structure are still checked.
_VALUE_CHECKS = {"pattern", "format", "enum", "minLength", "maxLength", "const"}


def _is_token(value: object) -> bool:
    return isinstance(value, str) and bool(_TOKEN.search(value))


def validate_custom_resource(obj: dict[str, Any]) -> list[str]:
    """Problems with one custom resource (empty when valid), each ``path: what is wrong — what is valid``.

    Strings holding unresolved CDK tokens (subnet ids, role names from other stacks) skip value checks
    (pattern, enum, length) but not structure: an unknown field next to a token is still an error.
    """
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    if (api_version, kind) not in crd_index():
        known = sorted({f"{v} {k}" for v, k in crd_index()})
        return [f"{api_version} {kind}: no vendored CRD schema; known custom resources: {', '.join(known)}"]
    errors = [
        e
        for e in _validator(api_version, kind).iter_errors(obj)
        if not (e.validator in _VALUE_CHECKS and _is_token(e.instance))
    ]
    errors.sort(key=lambda e: list(map(str, e.absolute_path)))
    return [_describe(e) for e in errors]
