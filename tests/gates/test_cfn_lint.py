"""GATE: every synthesized template passes cfn-lint with no errors and no warnings, except

* W3005 (redundant DependsOn, which CDK emits on purpose), always;
* W3010 (hard-coded AZs) when the config pins ``network.availability_zones`` — pinning them is the point.
"""

from __future__ import annotations

import json
from functools import cache

from cfnlint.api import ManualArgs, lint
from cfnlint.config import ConfigMixIn
from cfnlint.decode import decode_str
from cfnlint.runner import Runner


@cache
def _runner(ignored: tuple[str, ...], region: str) -> Runner:
    """One cfn-lint runner per configuration: loading its rules takes about 2 s, linting a template well under 1 s
    (``cfnlint.api.lint`` builds a new runner for every template)."""
    return Runner(ConfigMixIn(**ManualArgs(ignore_checks=list(ignored), regions=[region])))


def _lint(template: dict, ignored: tuple[str, ...], region: str) -> list:
    decoded, errors = decode_str(json.dumps(template))  # the line-marked nodes cfn-lint's rules expect
    if errors:
        return list(errors)
    return list(_runner(ignored, region).validate_template(decoded))


def test_every_template_passes_cfn_lint(any_app):
    ignored = ("W3005", *(("W3010",) if any_app.config.network.availability_zones else ()))
    region = any_app.config.env.region or "us-west-2"
    for name, template in any_app.templates.items():
        matches = _lint(template, ignored, region)
        findings = [f"{m.rule.id} {m.message} ({'/'.join(map(str, m.path))})" for m in matches]
        assert findings == [], f"{name}: cfn-lint findings:\n" + "\n".join(findings)


def test_the_gate_catches_an_error(default_app):
    template = json.loads(json.dumps(default_app.template("network")))
    template["Resources"]["Broken"] = {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlockk": "10.0.0.0/16"}}
    assert any(m.rule.id.startswith("E") for m in _lint(template, ("W3005",), "us-west-2"))
    # the same through cfn-lint's own entry point: the shared runner changes nothing of what is found
    matches = lint(json.dumps(template), config=ManualArgs(ignore_checks=["W3005"], regions=["us-west-2"]))
    assert {m.rule.id for m in matches} == {m.rule.id for m in _lint(template, ("W3005",), "us-west-2")}
