"""GATE: cdk-nag AwsSolutions runs as a validation plugin; no finding is left unacknowledged, and every
acknowledgement carries a reason."""

from __future__ import annotations

import aws_cdk as cdk
import pytest

from inferstack.app import build_app
from inferstack.config import InferstackConfig
from inferstack.stacks.nag import acknowledge
from tests.synth import cdk_context


def test_every_config_synthesizes_with_cdk_nag(any_app):
    # The session fixture synthesizes with the AwsSolutions plugin: reaching here means 0 unacknowledged findings.
    assert any_app.templates


def test_acknowledgements_have_reasons(default_app):
    acknowledged = {}
    for stack in default_app.stacks.values():
        for construct in stack.node.find_all():
            for entry in construct.node.metadata:
                if entry.type == "aws:cdk:acknowledged-rules":
                    ours = {k: v for k, v in entry.data.items() if k.startswith("AwsSolutions::")}
                    acknowledged.update({f"{construct.node.path} {k}": v for k, v in ours.items()})
    assert acknowledged, "expected scoped acknowledgements on the cluster stack"
    # Scoped to constructs, never to a whole stack.
    assert all("/" in key.split(" ")[0] for key in acknowledged), acknowledged
    assert all(len(reason) >= 40 for reason in acknowledged.values()), acknowledged


def test_an_unacknowledged_finding_fails_synth():
    """GIVEN the default platform plus a bucket without SSL enforcement, WHEN synthesized, THEN cdk-nag fails."""
    from aws_cdk import aws_s3 as s3

    app = cdk.App(context=cdk_context())
    _, platform = build_app(InferstackConfig(), app)
    s3.Bucket(platform.network, "Unsafe")
    with pytest.raises(RuntimeError, match="ValidationFailed") as exc:
        app.synth()
    assert "inferstack-network/Unsafe/Resource" in str(exc.value)
    assert "AwsSolutions::AwsSolutions-S10" in str(exc.value)


def test_granular_acknowledgement_does_not_cover_other_findings():
    """An IAM4 acknowledgement for one managed policy leaves other managed policies failing."""
    from aws_cdk import aws_iam as iam

    app = cdk.App(context=cdk_context())
    _, platform = build_app(InferstackConfig(), app)
    role = iam.Role(
        platform.network,
        "ExtraRole",
        assumed_by=iam.ServicePrincipal("ec2.amazonaws.com"),
        managed_policies=[iam.ManagedPolicy.from_aws_managed_policy_name("AdministratorAccess")],
    )
    acknowledge(role, "IAM4", "only ReadOnlyAccess is acceptable for this test role", ("Policy::ReadOnlyAccess",))
    with pytest.raises(RuntimeError, match="ValidationFailed") as exc:
        app.synth()
    assert "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AdministratorAccess]" in str(exc.value)
