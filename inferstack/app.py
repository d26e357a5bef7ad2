"""Entry point shared by ``app.py`` and the tests: config file → validated config → rules → CDK app."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import aws_cdk as cdk

from inferstack.config import ConfigError, InferstackConfig, load_config
from inferstack.constructs.custom_resource import CustomResourceError
from inferstack.constructs.validation import PropError
from inferstack.kernel import EarlyValidator, take_early_validator
from inferstack.rules import RuleViolationError
from inferstack.stacks.platform import Platform, build_platform

DEFAULT_CONFIG = "inferstack.yaml"


def build_app(config: InferstackConfig, app: cdk.App | None = None, *, nag: bool = True) -> tuple[cdk.App, Platform]:
    """Add the platform's stacks to ``app`` (a new one by default) with :func:`build_platform`, which checks
    ``config`` against every rule first and runs cdk-nag at synth (``nag``, default True).

    Raises :class:`RuleViolationError` before any construct is created if a rule fails.
    """
    app = app or cdk.App()
    return app, build_platform(app, config, nag=nag)


def _context_flag(app: cdk.App, key: str, default: bool) -> bool:
    value: Any = app.node.try_get_context(key)
    if value is None:
        return default
    return str(value).lower() not in ("false", "0", "no", "off")


def _preflight_passes(config: InferstackConfig, clients: Any = None) -> bool:
    """``-c inferstack:preflight=true``: the account checks (:mod:`inferstack.preflight`) before synth; their table
    on stderr, False when any fails (synth does not start)."""
    from inferstack.preflight import Preflight, boto3_clients, table

    results = Preflight(config, clients or boto3_clients(config.env.region)).run()
    failed = [r for r in results if not r.passed]
    if failed:
        print(f"inferstack: preflight failed ({len(failed)} of {len(results)} checks):", file=sys.stderr)
        print(table(results), file=sys.stderr)
    return not failed


def _stop(early: EarlyValidator | None) -> int:
    """Exit status 1 of an app that stops before synth, once the early validator's thread is done (its kernel call
    must end before Python exits, or jsii's exit at shutdown would close the pipe under it). The problems are on
    stderr first; the wait (up to the validator's 1.5-2 s) only delays the exit."""
    sys.stderr.flush()
    if early is not None:
        early.discard()
    return 1


def main() -> int:
    """``cdk synth`` of app.py: the config named by the ``config`` context (default ``inferstack.yaml``) → rules →
    stacks → synth. 1 with every problem on stderr (no traceback) when the config, a rule, cdk-nag or CloudFormation
    validation refuses; 0 otherwise. With ``INFERSTACK_FAST_SYNTH=1`` (app.py) the CloudFormation validator that
    ``inferstack/__init__`` started building is registered at the App (:mod:`inferstack.kernel`)."""
    early = take_early_validator()
    app = cdk.App()
    config_path = Path(str(app.node.try_get_context("config") or DEFAULT_CONFIG))
    try:
        config = load_config(config_path)
        if _context_flag(app, "inferstack:preflight", False) and not _preflight_passes(config):
            return _stop(early)
        build_app(config, app, nag=_context_flag(app, "inferstack:nag", True))
    except (ConfigError, RuleViolationError, CustomResourceError, PropError) as exc:
        if isinstance(exc, ConfigError) and exc.source != str(config_path):  # found while rendering (overrides)
            exc = ConfigError(str(config_path), exc.problems)
        print(f"inferstack: {config_path}: {exc}" if isinstance(exc, RuleViolationError) else str(exc), file=sys.stderr)
        return _stop(early)
    if early is not None:
        early.register(app)
    try:
        app.synth()
    except RuntimeError as exc:  # cdk-nag or CloudFormation validation: the report was printed above
        if "ValidationFailed" not in str(exc):
            raise
        print(f"inferstack: {exc}", file=sys.stderr)
        return 1
    return 0
