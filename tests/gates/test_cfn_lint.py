"""GATE: every synthesized template passes cfn-lint with no errors and no warnings, except

* W3005 (redundant DependsOn, which CDK emits on purpose), always;
* W3010 (hard-coded AZs) when the config pins ``network.availability_zones`` — pinning them is the point.
"""

from __future__ import annotations

import json

from cfnlint.api import ManualArgs, lint


def test_every_template_passes_cfn_lint(any_app):
    ignored = ["W3005"] + (["W3010"] if any_app.config.network.availability_zones else [])
    region = any_app.config.env.region or "us-west-2"
    for name, template in any_app.templates.items():
        matches = lint(json.dumps(template), config=ManualArgs(ignore_checks=ignored, regions=[region]))
        findings = [f"{m.rule.id} {m.message} ({'/'.join(map(str, m.path))})" for m in matches]
        assert findings == [], f"{name}: cfn-lint findings:\n" + "\n".join(findings)


def test_the_gate_catches_an_error(default_app):
    template = json.loads(json.dumps(default_app.template("network")))
    template["Resources"]["Broken"] = {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlockk": "10.0.0.0/16"}}
    matches = lint(json.dumps(template), config=ManualArgs(ignore_checks=["W3005"], regions=["us-west-2"]))
    assert any(m.rule.id.startswith("E") for m in matches)
