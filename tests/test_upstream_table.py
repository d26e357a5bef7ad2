"""README "Coming from upstream manifests": every inferstack config path the table names (``workloads[].engine.
tensor_parallel_size``, ``compute.karpenter_pools[].instance_store_policy``, and the ``.field`` shorthands that
continue the previous one) is a field of the config's JSON Schema — so renaming or removing a field breaks this
test instead of leaving the table wrong."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from tests.synth import ROOT

SCHEMA = json.loads((ROOT / "inferstack.schema.json").read_text())
ROOTS = ("workloads", "compute", "storage", "cluster", "network", "network_policies", "observability", "tags")
#: A backticked config path: ``root[].a.b`` or a continuation ``.b`` (relative to the previous path's parent).
_CODE = re.compile(r"`([^`]+)`")


def section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("## Coming from upstream manifests")
    return text[start : text.index("\n## ", start + 1)]


def _resolve(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """``node`` with its ``$ref``, ``anyOf``/``oneOf``/``allOf`` branches followed."""
    if "$ref" in node:
        yield from _resolve(SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[1]])
        return
    branches = [*node.get("anyOf", ()), *node.get("oneOf", ()), *node.get("allOf", ())]
    if branches:
        for branch in branches:
            yield from _resolve(branch)
        return
    yield node


def _children(node: dict[str, Any], step: str) -> list[dict[str, Any]]:
    name, many = step.removesuffix("[]"), step.endswith("[]")
    found = []
    for schema in _resolve(node):
        props = schema.get("properties") or {}
        if name in props:
            child = props[name]
            if many:
                found += [item for resolved in _resolve(child) for item in _items(resolved)]
            else:
                found.append(child)
        elif schema.get("type") == "object" and isinstance(schema.get("additionalProperties"), dict) and not props:
            found.append(schema["additionalProperties"])  # a mapping: any key
    return found


def _items(node: dict[str, Any]) -> list[dict[str, Any]]:
    items = node.get("items")
    if isinstance(items, dict):
        return [items]
    return [i for i in node.get("prefixItems") or ()] if node.get("prefixItems") else []


def exists(path: str) -> bool:
    nodes = [SCHEMA]
    for step in path.split("."):
        nodes = [child for node in nodes for child in _children(node, step)]
        if not nodes:
            return False
    return True


def named_paths() -> Iterator[str]:
    """Every config path the table names, continuations (``.max_num_seqs``) completed from the previous full path."""
    for line in section().splitlines():
        if not line.startswith("|"):
            continue
        cells = line.strip("|").split("|")
        if len(cells) < 4:
            continue
        last = ""  # the inferstack field and the note (the upstream columns name upstream fields)
        for code in _CODE.findall("|".join(cells[2:])):
            for part in (p.strip() for p in code.split(",")):
                head = part.split(":")[0].strip()
                if head.split(".")[0].split("[")[0] in ROOTS and re.fullmatch(r"[a-z_\[\]\.]+", head):
                    last = head
                    yield head
                elif last and re.fullmatch(r"\.[a-z_\[\]\.]+", head):
                    yield last.rsplit(".", 1)[0] + head


def test_the_table_names_fields():
    paths = list(named_paths())
    assert len(paths) > 60, paths  # the table is there and read


def test_every_field_the_table_names_is_in_the_schema():
    missing = sorted({path for path in named_paths() if not exists(path)})
    assert missing == []


def test_a_renamed_field_is_caught():
    assert exists("workloads[].engine.tensor_parallel_size")
    assert not exists("workloads[].engine.tensor_parallelism")
    assert exists("compute.karpenter_pools[].instance_store_policy")
