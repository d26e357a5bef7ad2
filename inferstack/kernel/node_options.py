"""``NODE_OPTIONS`` for jsii's Node kernel: preload :data:`LIFTOFF_PRELOAD` (WebAssembly compiled by V8's baseline
compiler only, see that file for why and what was measured)."""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path

#: The script Node runs before jsii's kernel (``--require``): ``v8.setFlagsFromString('--liftoff-only')``. V8's own
#: flag cannot go into ``NODE_OPTIONS`` directly (Node accepts only a short list of V8 flags there).
LIFTOFF_PRELOAD = Path(__file__).with_name("liftoff.js")


def _quoted(path: Path) -> str:
    """``path`` as one ``NODE_OPTIONS`` word: double-quoted, ``\\`` and ``"`` escaped (Node's own parsing)."""
    return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'


def with_liftoff_preload(node_options: str, preload_file: Path = LIFTOFF_PRELOAD) -> str:
    """``node_options`` (the value of ``NODE_OPTIONS``, maybe empty) with ``--require`` of ``preload_file`` (default
    :data:`LIFTOFF_PRELOAD`) appended; unchanged when it is there already. Options a user set stay, in their order."""
    preload = f"--require {_quoted(preload_file)}"
    if preload in node_options:
        return node_options
    return f"{node_options} {preload}".strip()


#: ``NODE_OPTIONS`` as it was before :func:`preload_liftoff` (None: unset), until :func:`restore_node_options`.
_before: list[str | None] = []


def preload_liftoff(environ: MutableMapping[str, str] = os.environ) -> None:
    """Set ``NODE_OPTIONS`` in ``environ`` (default: this process's, which the jsii kernel inherits when it starts)
    so that the kernel preloads :data:`LIFTOFF_PRELOAD`. Only a kernel started afterwards sees it; once it runs,
    :func:`restore_node_options` gives other processes the user's options back."""
    _before.append(environ.get("NODE_OPTIONS"))
    environ["NODE_OPTIONS"] = with_liftoff_preload(environ.get("NODE_OPTIONS", ""))


def restore_node_options(environ: MutableMapping[str, str] = os.environ) -> None:
    """``NODE_OPTIONS`` back to its value before the first :func:`preload_liftoff` (a no-op without one)."""
    if not _before:
        return
    before = _before[0]
    _before.clear()
    if before is None:
        environ.pop("NODE_OPTIONS", None)
    else:
        environ["NODE_OPTIONS"] = before
