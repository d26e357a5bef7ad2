#!/usr/bin/env python3
"""The inferstack CDK app: the platform described by one config file.

``cdk synth`` reads ``inferstack.yaml``; ``cdk synth -c config=examples/other.yaml`` picks another.
A bad config or a rule violation prints every problem with its config path and exits 1 (no traceback).
"""

from inferstack.app import main

if __name__ == "__main__":
    raise SystemExit(main())
