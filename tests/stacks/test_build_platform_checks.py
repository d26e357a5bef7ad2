"""Every path to a synthesized platform runs the same checks: ``build_platform`` — the library's entry point —
refuses what ``inferstack check`` and ``cdk synth`` refuse (the rules) and runs cdk-nag over the stacks it adds,
but not over a team's own stacks in the same app."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk import aws_s3 as s3

from inferstack.config import parse_config
from inferstack.rules import RuleViolationError
from inferstack.stacks import build_platform
from tests.synth import cdk_context

#: 70B on one L40S: MODEL-FIT refuses it (the weights alone need ~140 GB).
TOO_BIG = {
    "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]},
    "workloads": [{"name": "llama", "pool": "gpu", "model": {"id": "meta-llama/Llama-3.1-70B-Instruct"}}],
}


def test_a_config_the_rules_refuse_builds_no_stack():
    app = cdk.App(context=cdk_context())
    with pytest.raises(RuleViolationError, match=r"MODEL-FIT.*workloads\[0\]"):
        build_platform(app, parse_config(TOO_BIG))
    assert app.node.children == []  # refused before any construct was created


def _unencrypted_bucket(stack: cdk.Stack) -> None:
    """A bucket cdk-nag's AwsSolutions pack refuses (no SSL-only policy, no access logs)."""
    s3.Bucket(stack, "Careless")


def _synth(app: cdk.App) -> None:
    app.synth()


def test_cdk_nag_judges_the_platforms_stacks():
    app = cdk.App(context=cdk_context())
    platform = build_platform(app, parse_config({}))
    _unencrypted_bucket(platform.stacks[-1])
    with pytest.raises(RuntimeError, match=r"ValidationFailed|AwsSolutions"):
        _synth(app)


def test_cdk_nag_leaves_a_teams_own_stacks_alone():
    app = cdk.App(context=cdk_context())
    build_platform(app, parse_config({}))
    _unencrypted_bucket(cdk.Stack(app, "team-own"))
    _synth(app)  # the team's bucket is its own business; inferstack's stacks pass
