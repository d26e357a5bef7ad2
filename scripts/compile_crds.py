"""Compile the upstream CRDs in ../shared/crds into compact JSON Schemas inside the package.

Each served version of each CRD becomes ``inferstack/catalog/crd_schemas/<group>_<kind>_<version>.json.gz``: the
``openAPIV3Schema`` rewritten as plain JSON Schema (draft 7) in which

* descriptions and CEL rules are dropped (size; CEL cannot be evaluated offline);
* ``x-kubernetes-int-or-string`` becomes ``anyOf: [integer, string]`` and ``nullable`` admits ``null``;
* every object that lists ``properties`` and neither ``additionalProperties`` nor
  ``x-kubernetes-preserve-unknown-fields`` is closed (``additionalProperties: false``), because the API server
  would silently prune an unknown field: for us it is an error;
* embedded resources get ``apiVersion``/``kind``/``metadata``.

``index.json`` maps ``group/version/kind`` to the file and records provenance (source file and sha256).

Usage: ``python scripts/compile_crds.py [SOURCE_DIR]`` (default ``../shared/crds``).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "inferstack" / "catalog" / "crd_schemas"
DROP_KEYS = {
    "description",
    "x-kubernetes-validations",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "example",
    "externalDocs",
}
EMBEDDED = {
    "apiVersion": {"type": "string"},
    "kind": {"type": "string"},
    "metadata": {"type": "object"},
}


def to_json_schema(node: Any) -> Any:
    """Rewrite one OpenAPI v3 (Kubernetes structural) schema node as JSON Schema."""
    if isinstance(node, list):
        return [to_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in DROP_KEYS or key.startswith("x-kubernetes-"):
            continue
        if key == "properties":
            out[key] = {name: to_json_schema(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf"):
            out[key] = to_json_schema(value)
        elif key == "nullable":
            continue
        else:
            out[key] = value
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if node.get("x-kubernetes-embedded-resource"):
        props = out.setdefault("properties", {})
        for name, schema in EMBEDDED.items():
            props.setdefault(name, schema)
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    preserve = node.get("x-kubernetes-preserve-unknown-fields", False)
    if "properties" in out and "additionalProperties" not in out and not preserve:
        out["additionalProperties"] = False
    return out


def compile_dir(source: Path) -> dict[str, Any]:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.json.gz"):
        old.unlink()
    index: dict[str, Any] = {}
    for path in sorted(source.glob("*/*.yaml")):
        raw = path.read_bytes()
        doc = yaml.safe_load(raw)
        if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
            continue
        spec = doc["spec"]
        group, kind = spec["group"], spec["names"]["kind"]
        for version in spec["versions"]:
            if not version.get("served", False):
                continue
            schema = to_json_schema(version["schema"]["openAPIV3Schema"])
            schema["$schema"] = "http://json-schema.org/draft-07/schema#"
            name = f"{group}_{kind}_{version['name']}.json.gz".lower()
            payload = json.dumps(schema, separators=(",", ":"), sort_keys=True).encode()
            # mtime=0 keeps the archive byte-identical across runs.
            (OUT / name).write_bytes(gzip.compress(payload, compresslevel=9, mtime=0))
            index[f"{group}/{version['name']}/{kind}"] = {
                "file": name,
                "scope": spec["scope"],
                "deprecated": bool(version.get("deprecated", False)),
                "storage": bool(version.get("storage", False)),
                "source": str(path.relative_to(source)),
                "source_sha256": hashlib.sha256(raw).hexdigest(),
            }
    (OUT / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    provenance = source / "PROVENANCE.md"
    if provenance.is_file():
        (OUT / "PROVENANCE.md").write_text(provenance.read_text())
    return index


def main(argv: list[str]) -> int:
    source = Path(argv[1]) if len(argv) > 1 else ROOT.parent / "shared" / "crds"
    if not source.is_dir():
        print(f"CRD source folder not found: {source}", file=sys.stderr)
        return 2
    index = compile_dir(source)
    size = sum(p.stat().st_size for p in OUT.glob("*.json.gz"))
    print(f"compiled {len(index)} CRD versions into {OUT.relative_to(ROOT)} ({size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
