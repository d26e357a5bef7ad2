#!/usr/bin/env python3
"""The inferstack CDK app: the platform described by one config file.

``cdk synth`` reads ``inferstack.yaml``; ``cdk synth -c config=examples/other.yaml`` picks another.
A bad config or a rule violation prints every problem with its config path and exits 1 (no traceback).
"""

import os

# Node 20 (the toolchain's) is past jsii's end of life: without this, every `npx cdk synth` run outside make prints
# an eleven-line banner before inferstack's own output. Other Node versions still warn.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
# Synth renders no JSON Schema: the config models skip reading their field docstrings (inferstack.config.base
# FIELD_DESCRIPTIONS, about a third of inferstack's import). Validation is the same.
os.environ.setdefault("INFERSTACK_FIELD_DESCRIPTIONS", "0")
# Synth's Node kernel: WebAssembly by V8's baseline compiler only, and aws-cdk-lib's CloudFormation validator built on
# a second thread while Python loads the config (inferstack.kernel; the same checks, about 1.5 s less per synth).
os.environ.setdefault("INFERSTACK_FAST_SYNTH", "1")

from inferstack.app import main

if __name__ == "__main__":
    raise SystemExit(main())
