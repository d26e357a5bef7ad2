"""The compact JSON of a vendored flag list (shared by the engines' vendor scripts) and the write-or-check step.

One key per line, flags sorted by name with one flag per line, sorted keys inside, a trailing newline: a diff of two
releases' lists reads flag by flag.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_COMPACT: dict[str, Any] = {"sort_keys": True, "separators": (",", ":")}


def flag_data_text(header: dict[str, Any], flags: dict[str, dict[str, Any]], version: str) -> str:
    """``header`` keys (``argparse``, ``engine``, ``provenance``…), then ``flags``, then ``version``, as JSON."""
    lines = ["{"] + [f"{json.dumps(k)}:{json.dumps(v, **_COMPACT)}," for k, v in header.items()]
    lines.append('"flags":{')
    lines += [f"{json.dumps(name)}:{json.dumps(spec, **_COMPACT)}," for name, spec in sorted(flags.items())]
    lines[-1] = lines[-1].rstrip(",")
    lines += ["},", f'"version":{json.dumps(version)}', "}"]
    return "\n".join(lines) + "\n"


def write_or_check(target: Path, text: str, check: bool) -> int:
    """Write ``text`` to ``target`` (0), or with ``check`` compare them: 0 when equal, 1 when stale or missing."""
    if check:
        current = target.read_text(encoding="utf-8") if target.exists() else None
        print(f"{target}: {'current' if current == text else 'stale'}")
        return 0 if current == text else 1
    target.write_text(text, encoding="utf-8")
    print(f"{target}: {len(json.loads(text)['flags'])} flags")
    return 0
