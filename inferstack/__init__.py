"""inferstack: infrastructure as code for serving large language models on Amazon EKS.

The public API (``import inferstack``):

* the config — :class:`InferstackConfig`, :func:`load_config` (a YAML file), :func:`parse_config` (a mapping),
  :class:`ConfigError` (every problem with its config path);
* the plan and the rules — :func:`resolve` (config → :class:`ResolvedPlatform`), :func:`evaluate` (the rules'
  findings, acknowledgements applied), :func:`enforce` (raises :class:`RuleViolationError`);
* the CDK app — :func:`build_platform` (every stack of one config into your own ``cdk.App``, after the rules and
  with cdk-nag over its stacks; imported on first use: it loads aws-cdk-lib);
* workload kinds — :class:`WorkloadKind`, :func:`register_kind`, :func:`unregister_kind`, :data:`KINDS`;
* snapshot tests of your own config — :mod:`inferstack.testing` (a pytest plugin; ``pip install
  inferstack[testing]``).

Layers (imports point one way): ``catalog`` (facts) → ``config`` (typed, validated input) → ``sizing`` → ``plan``
(the resolved platform) → ``rules`` (synth-time checks) → ``constructs`` (cdk8s, no config) → ``charts`` (cdk8s from
the plan) → ``stacks`` (aws-cdk-lib); ``kinds`` (one module per workload kind) above them, registering each kind's
parts; ``gates`` (what runs: rendered charts, operator projections, Pod Security, NetworkPolicies) beside them,
imported by the tests and the CLI only; ``kernel`` (how ``app.py`` runs jsii's Node kernel, see
:mod:`inferstack.kernel`) imports none of them. Importing this package registers the built-in kinds.
"""

from __future__ import annotations

import os
from typing import Any

# Node 20 (the toolchain's) is past jsii's end of life: without this, the first jsii assembly this package loads
# prints an eleven-line banner on stderr before any output of the CLI or of a team's app. Only that banner, only for
# Node 20, and only when the variable is not set already (as app.py does).
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

# app.py's synth (INFERSTACK_FAST_SYNTH=1): Node's set-up and aws-cdk-lib's validator start here, before the imports
# below load the jsii packages (inferstack.kernel); a team's own app is untouched.
from inferstack.kernel import fast_synth_requested, start_fast_synth

if fast_synth_requested():
    start_fast_synth()

from inferstack import kinds as _built_in_kinds  # noqa: F401 - registers the built-in kinds
from inferstack.config import ConfigError, InferstackConfig, load_config, parse_config
from inferstack.config.kinds import KINDS, WorkloadKind, register_kind, unregister_kind
from inferstack.plan import ResolvedPlatform, resolve
from inferstack.rules import RuleViolationError, enforce, evaluate

__version__ = "0.1.0"

__all__ = [
    "KINDS",
    "ConfigError",
    "InferstackConfig",
    "ResolvedPlatform",
    "RuleViolationError",
    "WorkloadKind",
    "__version__",
    "build_platform",
    "enforce",
    "evaluate",
    "load_config",
    "parse_config",
    "register_kind",
    "resolve",
    "unregister_kind",
]


def __getattr__(name: str) -> Any:
    """``build_platform`` on first use (aws-cdk-lib takes seconds to load; the config, plan and rules do not need
    it)."""
    if name == "build_platform":
        from inferstack.stacks import build_platform

        return build_platform
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
