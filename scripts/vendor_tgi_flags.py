"""Vendor TGI's launcher flag list (``text-generation-launcher``) from its source into compact catalog data.

The launcher is Rust: its flags are the fields of ``struct Args`` in ``launcher/src/main.rs``, derived by clap 4
(``launcher/Cargo.toml``: ``clap = { version = "4.4.5", features = ["derive", "env"] }``), read here as clap's derive
builds them:

* a field with ``long`` in its ``#[clap(...)]`` attribute is ``--<field-name>`` with ``_`` → ``-`` (clap's kebab-case
  default); ``short`` adds ``-<first letter>`` (where two fields would share a letter, the first keeps it);
* a ``bool`` field is a switch (``ArgAction::SetTrue``: no value); every other type takes one value per occurrence
  (``Option<bool>`` included; ``Vec<T>`` appends; ``value_delimiter`` splits that one value);
* ``value_enum`` choices are not recorded (the values are checked by the launcher at start).

clap takes ``--flag value`` and ``--flag=value``, no ``_`` for ``-``, no abbreviations, and no positional argument
here (``"argparse": "clap"``: the walk treats it like plain argparse). Output:
``inferstack/catalog/engine_flag_data/tgi-<version>.json`` in the vLLM lists' format, with ``provenance`` (the tag,
the commit and the source file's sha256).

Usage: ``python scripts/vendor_tgi_flags.py MAIN_RS --version 3.3.7 --commit SHA [--out DIR] [--check]`` (``MAIN_RS``:
``launcher/src/main.rs`` of the tag, e.g. ``git show v3.3.7:launcher/src/main.rs > main.rs``).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path
from typing import Any

from flag_data import flag_data_text, write_or_check

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "inferstack" / "catalog" / "engine_flag_data"
#: One field of ``struct Args``: its ``#[clap(...)]`` attributes (doc comments between them allowed), name and type.
_FIELD = re.compile(r"((?:\s*(?:///[^\n]*|#\[[^\n]*\])\n)+)\s*([a-z_][a-z0-9_]*):\s*([^,\n]+),")
_CLAP = re.compile(r"#\[clap\(([^\n]*)\)\]")


def extract(source: str) -> dict[str, dict[str, Any]]:
    """Every flag of the launcher's ``struct Args``, keyed by its long spelling."""
    start = source.index("struct Args {")
    body = source[start : source.index("\n}", start)]
    flags: dict[str, dict[str, Any]] = {}
    shorts: set[str] = set()
    for attributes, name, kind in _FIELD.findall(body):
        clap = ",".join(_CLAP.findall(attributes))
        options = {part.strip().split("=")[0].strip() for part in re.sub(r'"[^"]*"', '""', clap).split(",")}
        if "long" not in options:
            continue
        flag = "--" + name.replace("_", "-")
        spec: dict[str, Any] = {"nargs": 0 if kind.strip() == "bool" else None}
        if "short" in options and name[0] not in shorts:
            shorts.add(name[0])
            spec["aliases"] = [f"-{name[0]}"]
        flags[flag] = spec
    return dict(sorted(flags.items()))


def render(main_rs: Path, version: str, commit: str) -> tuple[str, str]:
    """``(file name, JSON text)`` of the launcher's flag list."""
    source = main_rs.read_bytes()
    flags = extract(source.decode("utf-8"))
    data = {
        "argparse": "clap",
        "engine": "tgi",
        "provenance": {
            "method": "scripts/vendor_tgi_flags.py: struct Args of the launcher, as clap 4's derive builds it",
            "repository": "huggingface/text-generation-inference",
            "source": "launcher/src/main.rs",
            "source_sha256": hashlib.sha256(source).hexdigest(),
            "tag": f"v{version}",
            "commit": commit,
        },
    }
    return f"tgi-{version}.json", flag_data_text(data, flags, version)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("main_rs", type=Path)
    parser.add_argument("--version", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the data differs")
    args = parser.parse_args()
    name, text = render(args.main_rs, args.version, args.commit)
    return write_or_check(args.out / name, text, args.check)


if __name__ == "__main__":
    sys.exit(main())
