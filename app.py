#!/usr/bin/env python3
"""The inferstack CDK app: the platform described by one config file.

``cdk synth`` reads ``inferstack.yaml``; ``cdk synth -c config=examples/other.yaml`` picks another.
A bad config or a rule violation prints every problem with its config path and exits 1 (no traceback).
"""

import atexit
import contextlib
import os
import sys

# Node 20 (the toolchain's) is past jsii's end of life: without this, every `npx cdk synth` run outside make prints
# an eleven-line banner before inferstack's own output. Other Node versions still warn.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
# Synth renders no JSON Schema: the config models skip reading their field docstrings (inferstack.config.base
# FIELD_DESCRIPTIONS, about a third of inferstack's import). Validation is the same.
os.environ.setdefault("INFERSTACK_FIELD_DESCRIPTIONS", "0")
# Synth's Node kernel: WebAssembly by V8's baseline compiler only, and aws-cdk-lib's CloudFormation validator built on
# a second thread while Python loads the config (inferstack.kernel; the same checks), and the exit below: about 2 s
# less per synth together (make bench; README "Benchmark").
os.environ.setdefault("INFERSTACK_FAST_SYNTH", "1")

#: main()'s exit status, once it returned (an exception out of main exits as Python would, after its traceback).
EXIT_STATUS: list[int] = []


def leave_without_teardown() -> None:
    """The last exit handler (registered before any other: they run last-in, first-out), so jsii's has stopped the
    Node kernel and forwarded all of its output: flush and leave with main()'s status, skipping the interpreter's
    teardown (freeing every module's objects: 0.3-0.45 s after a synth, nothing written). Only with
    INFERSTACK_FAST_SYNTH=1 and once main() returned."""
    if EXIT_STATUS and os.environ.get("INFERSTACK_FAST_SYNTH") == "1":
        for stream in (sys.stdout, sys.stderr):
            # A closed or broken pipe: nothing more can reach it, and the status stays main()'s (Python itself would
            # exit 120 when flushing stdout fails at its teardown).
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(EXIT_STATUS[0])


atexit.register(leave_without_teardown)

from inferstack.app import main  # noqa: E402 - after the exit handler and the environment above

if __name__ == "__main__":
    EXIT_STATUS.append(main())
    raise SystemExit(EXIT_STATUS[0])
