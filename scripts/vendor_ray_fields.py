"""Vendor Ray Serve LLM's config fields from ../shared/upstream/engines into compact catalog data.

Each ``ray-serve-llm-<version>-fields.json`` (the pydantic models of the ``ray==<version>`` wheel, read field by
field; provenance inside) becomes ``inferstack/catalog/engine_flag_data/ray-serve-llm-<version>.json`` with what
validating a Serve LLM config needs: per model class its ``extra`` policy (``forbid``: an unknown key fails the
app; ``ignore``: it is dropped silently) and field names, and the accepted ``accelerator_type`` values.

Usage: ``python scripts/vendor_ray_fields.py [SOURCE_DIR] [--out DIR] [--check]`` (as vendor_engine_flags.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT.parent / "shared" / "upstream" / "engines"
LOCAL = ROOT / "scripts" / "upstream" / "engines"
OUT = ROOT / "inferstack" / "catalog" / "engine_flag_data"
_SOURCE_NAME = re.compile(r"^ray-serve-llm-(\d+\.\d+\.\d+)-fields\.json$")


def compact(path: Path) -> dict[str, Any]:
    raw = json.loads(path.read_text())
    models = {
        name: {"extra": model.get("extra") or "ignore", "fields": sorted(f["name"] for f in model["fields"])}
        for name, model in raw["models"].items()
        if "fields" in model  # public aliases ("LLMConfig@ray.serve.llm": same_fields_as) add no fields
    }
    return {
        "version": raw["ray_version"],
        "provenance": {
            "source_file": path.name,
            "source_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "package": raw["source"]["package"],
            "wheel_sha256": raw["source"]["wheel_sha256"],
        },
        "accelerator_types": raw["validator_allowed_values"]["LLMConfig.accelerator_type.allowed_values"],
        "models": models,
    }


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", nargs="*", type=Path, default=[SOURCE, LOCAL])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    stale = []
    paths = sorted(p for source in args.source if source.is_dir() for p in source.glob("ray-serve-llm-*-fields.json"))
    for path in paths:
        match = _SOURCE_NAME.match(path.name)
        if match is None:
            continue
        target = args.out / f"ray-serve-llm-{match[1]}.json"
        text = render(compact(path))
        if args.check:
            if not target.is_file() or target.read_text() != text:
                stale.append(target.name)
        else:
            target.write_text(text)
            print(f"wrote {target}")
    if stale:
        print(f"stale: {', '.join(stale)} — run make flags", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
