"""Vendor vLLM's ``vllm serve`` flag lists from ../shared/upstream/engines into compact catalog data.

Each ``vllm-<version>-serve-flags.json`` (an argparse dump of vLLM's own parser, see
``shared/upstream/engines/vllm-notes.md``) becomes ``inferstack/catalog/engine_flag_data/vllm-<version>.json`` with
only what validating a command line needs, per flag (keyed by its primary long option):

* ``aliases``: other positive spellings (``-tp``; ``--device-memory-utilization``);
* ``negatives``: the spellings that switch a boolean off (``--no-x``, ``--disable-x``), visible or hidden;
* ``hidden``: spellings the parser accepts but ``--help`` does not show (a subset of the above);
* ``nargs``: argparse's ``nargs`` (``0`` = takes no value, ``null`` = exactly one, ``"?"``, ``"+"``);
* ``choices``: the allowed values, when argparse restricts them;
* ``json``: the value is JSON (a config object), so dotted sub-keys (``--compilation-config.mode 3``) are accepted;
* ``deprecated``: argparse's ``deprecated`` flag, or a ``Deprecated…`` custom action.

Keys whose value is empty, ``null`` or ``false`` are left out (``nargs`` is always written). ``shorthands`` maps
``-O`` to ``--optimization-level`` where that option exists (vLLM rewrites ``-O3`` before parsing). ``provenance``
records the source file (name and sha256), the upstream version, wheel sha256 and git commit.

``--model`` is added to every list: vLLM registers it except when ``serve`` and ``--help`` are both in
``sys.argv``, which is how the dumps were made (help text needs ``--help``), so it is missing from them although
``vllm serve`` accepts it. ``provenance.supplemented`` says so in the data.

Output is deterministic: sorted keys, flags sorted by name, one flag per line, a trailing newline.

Usage: ``python scripts/vendor_engine_flags.py [SOURCE_DIR ...] [--out DIR] [--check]``. ``SOURCE_DIR`` defaults
to ``../shared/upstream/engines`` and ``scripts/upstream/engines`` (dumps made here, the same method), ``--out`` to
the package data folder. ``--check`` writes nothing and exits 1 if the files in ``--out`` differ from what would be
written (or are missing or stale).
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
#: Dumps inferstack made itself (the same method; scripts/upstream/engines/README.md says how).
LOCAL = ROOT / "scripts" / "upstream" / "engines"
OUT = ROOT / "inferstack" / "catalog" / "engine_flag_data"
_SOURCE_NAME = re.compile(r"^vllm-(\d+\.\d+\.\d+)-serve-flags\.json$")
_COMMIT = re.compile(r"^[0-9a-f]{7,40}\b")
#: Flags the dumps cannot contain although ``vllm serve`` accepts them (see the module docstring).
SUPPLEMENT: dict[str, dict[str, Any]] = {
    "--model": {
        "spec": {"nargs": None},
        "why": "EngineArgs.add_cli_args skips --model only when 'serve' and '--help' are both in sys.argv "
        "(how the dump was made); vllm serve accepts it",
    },
}


def _deprecated(flag: dict[str, Any]) -> bool:
    action = str(flag.get("action_class") or flag.get("action") or "")
    return bool(flag.get("deprecated")) or action.startswith("Deprecated")


def _is_json(flag: dict[str, Any]) -> bool:
    return "json" in str(flag.get("value_type") or "")


def compact_flag(flag: dict[str, Any]) -> dict[str, Any]:
    """The validation-relevant part of one upstream flag entry (empty / false / null keys left out but ``nargs``)."""
    name = flag["name"]
    negatives = list(flag.get("negative_options") or [])
    aliases = [a for a in flag.get("aliases") or [] if a != name and a not in negatives]
    hidden = list(flag.get("hidden_option_strings") or [])
    known = {name, *aliases, *negatives}
    # Any other visible option string is a positive spelling the upstream file did not classify: keep it accepted.
    aliases += [o for o in flag.get("option_strings") or [] if o not in known]
    aliases += [h for h in hidden if h not in known and h not in aliases]
    out: dict[str, Any] = {"nargs": flag.get("nargs")}
    if aliases:
        out["aliases"] = aliases
    if negatives:
        out["negatives"] = negatives
    if hidden:
        out["hidden"] = hidden
    if flag.get("choices") is not None:
        out["choices"] = list(flag["choices"])
    if _is_json(flag):
        out["json"] = True
    if _deprecated(flag):
        out["deprecated"] = True
    return out


def build(path: Path) -> tuple[str, dict[str, Any]]:
    """``(version, catalog document)`` for one upstream flag file."""
    raw = path.read_bytes()
    doc = json.loads(raw)
    version = str(doc["vllm_version"])
    source = doc.get("source") or {}
    commit = _COMMIT.match(str(source.get("git_commit") or ""))
    flags: dict[str, dict[str, Any]] = {}
    for flag in doc["flags"]:
        if flag.get("positional"):
            continue
        if flag["name"] in flags:
            raise ValueError(f"{path.name}: {flag['name']} listed twice")
        flags[flag["name"]] = compact_flag(flag)
    supplemented = {}
    for name, extra in SUPPLEMENT.items():
        if name not in flags:
            flags[name] = dict(extra["spec"])
            supplemented[name] = extra["why"]
    spellings = [
        s for name, spec in flags.items() for s in (name, *spec.get("aliases", ()), *spec.get("negatives", ()))
    ]
    if len(spellings) != len(set(spellings)):
        dupes = sorted({s for s in spellings if spellings.count(s) > 1})
        raise ValueError(f"{path.name}: spellings shared by two flags: {', '.join(dupes)}")
    shorthands = {"-O": "--optimization-level"} if "--optimization-level" in flags else {}
    provenance = {
        "source_file": path.name,
        "source_sha256": hashlib.sha256(raw).hexdigest(),
        "upstream_version": version,
        "wheel_file": source.get("wheel_file"),
        "wheel_sha256": source.get("wheel_sha256"),
        "git_commit": commit.group(0) if commit else None,
        "generated_by": "scripts/vendor_engine_flags.py",
        "supplemented": supplemented,
    }
    return version, {
        "engine": "vllm",
        "version": version,
        "provenance": provenance,
        "shorthands": shorthands,
        "flags": flags,
    }


def render(doc: dict[str, Any]) -> str:
    """Deterministic text: sorted keys, one flag per line, trailing newline."""

    def dump(value: Any) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    lines = ["{"]
    keys = sorted(doc)
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        if key == "flags":
            lines.append(f"{dump(key)}:{{")
            names = sorted(doc[key])
            lines += [f"{dump(n)}:{dump(doc[key][n])}{',' if j < len(names) - 1 else ''}" for j, n in enumerate(names)]
            lines.append("}" + comma)
        else:
            lines.append(f"{dump(key)}:{dump(doc[key])}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def expected_all(sources: list[Path]) -> dict[str, str]:
    """What every source folder that exists would write."""
    out: dict[str, str] = {}
    for source in sources:
        if source.is_dir():
            out |= expected(source)
    return out


def expected(source: Path) -> dict[str, str]:
    """Output file name → text, for every ``vllm-*-serve-flags.json`` in ``source``."""
    out: dict[str, str] = {}
    for path in sorted(source.glob("vllm-*-serve-flags.json")):
        if not _SOURCE_NAME.match(path.name):
            continue
        version, doc = build(path)
        out[f"vllm-{version}.json"] = render(doc)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "source", nargs="*", type=Path, default=[SOURCE, LOCAL], help="upstream flag folders (default %(default)s)"
    )
    parser.add_argument("--out", type=Path, default=OUT, help="catalog data folder (default %(default)s)")
    parser.add_argument("--check", action="store_true", help="exit 1 if --out differs from what would be written")
    args = parser.parse_args(argv)
    missing = [str(source) for source in args.source if not source.is_dir()]
    if len(missing) == len(args.source):
        print(f"engine flag source folder not found: {', '.join(missing)}", file=sys.stderr)
        return 2
    files = expected_all(args.source)
    if not files:
        print(f"no vllm-*-serve-flags.json in {', '.join(map(str, args.source))}", file=sys.stderr)
        return 2
    present = {p.name for p in args.out.glob("vllm-*.json")} if args.out.is_dir() else set()
    if args.check:
        differ = sorted(
            n for n, text in files.items() if not (args.out / n).is_file() or (args.out / n).read_text() != text
        )
        stale = sorted(present - set(files))
        for name in differ:
            print(f"out of date: {args.out / name}", file=sys.stderr)
        for name in stale:
            print(f"not generated from any source (stale): {args.out / name}", file=sys.stderr)
        if differ or stale:
            print("run: make flags", file=sys.stderr)
            return 1
        print(f"{len(files)} engine flag files up to date")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name in present - set(files):
        (args.out / name).unlink()
    for name, text in files.items():
        (args.out / name).write_text(text)
    size = sum(len(t.encode()) for t in files.values())
    print(f"wrote {len(files)} engine flag files into {args.out} ({size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
