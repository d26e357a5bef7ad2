"""How inferstack's CDK app (``app.py``) runs jsii's Node kernel, when ``INFERSTACK_FAST_SYNTH=1`` (app.py sets it;
a team's own app that imports inferstack is untouched):

* :mod:`~inferstack.kernel.node_options` — V8 compiles WebAssembly with its baseline compiler only;
* :mod:`~inferstack.kernel.early_validator` — aws-cdk-lib's CloudFormation validator is built on a second thread
  while Python loads inferstack and the config, the two threads taking turns in the kernel
  (:mod:`~inferstack.kernel.serialized`).

Both change when work runs, not what is checked: the same templates are validated by the same rules. This package
imports nothing of inferstack's other layers (``inferstack/__init__`` starts it before them).
"""

from __future__ import annotations

import os

from inferstack.kernel.early_validator import EarlyValidator, start_early_validator, take_early_validator
from inferstack.kernel.node_options import preload_liftoff

#: The switch app.py sets: ``1`` (its default there) — the two changes above; anything else, neither.
FAST_SYNTH_ENV = "INFERSTACK_FAST_SYNTH"

__all__ = ["FAST_SYNTH_ENV", "EarlyValidator", "fast_synth_requested", "start_fast_synth", "take_early_validator"]


def fast_synth_requested() -> bool:
    """Whether ``INFERSTACK_FAST_SYNTH`` is ``1`` in this process's environment."""
    return os.environ.get(FAST_SYNTH_ENV) == "1"


def start_fast_synth() -> EarlyValidator:
    """Preload Liftoff into the kernel's Node (before it starts) and start the early validator."""
    preload_liftoff()
    return start_early_validator()
