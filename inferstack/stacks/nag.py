"""cdk-nag (AwsSolutions) as a validation plugin, and inferstack's reasoned, construct-scoped acknowledgements.

Acknowledgements are attached to the narrowest construct that needs them (the kubectl provider, the cluster role,
a node group role), never to a whole stack, so a new finding elsewhere still fails synth.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import aws_cdk as cdk
import jsii
from cdk_nag import AwsSolutionsChecks
from constructs import IConstruct

PACK = "AwsSolutions"

EKS_NODE_POLICIES = (
    "EKS managed node groups need AmazonEKSWorkerNodePolicy, AmazonEC2ContainerRegistryReadOnly and "
    "AmazonEKS_CNI_Policy on the node role (EKS node IAM role requirements); AWS maintains them per EKS release"
)
EKS_CLUSTER_POLICY = "The EKS service role must carry AmazonEKSClusterPolicy (EKS cluster IAM role requirement)"
KUBECTL_MANAGED = (
    "aws-cdk-lib's kubectl provider uses AWS Lambda basic/VPC execution and ECR read-only managed policies to run "
    "kubectl/helm from the private subnets; the construct owns these roles"
)
KUBECTL_WILDCARD = (
    "The provider framework may invoke every version of its own kubectl handler function (<handler ARN>:*); the "
    "wildcard is scoped to that one function"
)
KUBECTL_RUNTIME = (
    "The kubectl handler's runtime is pinned by aws-cdk-lib (it must match the kubectl layer); upgraded with "
    "aws-cdk-lib, which requirements.txt pins"
)


@jsii.implements(cdk.IPolicyValidationPlugin)
class ScopedAwsSolutions:
    """cdk-nag's AwsSolutions pack over some stacks only (a validation plugin always sees its whole App or Stage):
    inferstack judges the stacks it adds, not a team's own stacks beside them in the same app."""

    def __init__(self, stacks: Sequence[cdk.Stack]) -> None:
        self._pack = AwsSolutionsChecks()
        self._stacks = list(stacks)

    @property
    def name(self) -> str:
        """The report's plugin name (cdk-nag's)."""
        return str(self._pack.name)

    @property
    def rule_ids(self) -> list[str] | None:
        """Not reported (analytics only)."""
        return None

    @property
    def version(self) -> str | None:
        """Not reported."""
        return None

    def validate(self, context: cdk.IPolicyValidationContext) -> cdk.PolicyValidationPluginReport:
        """The pack's violations in :attr:`_stacks` (acknowledgements applied by cdk-nag)."""
        violations = [v for stack in self._stacks for v in self._pack.validate_scope(stack).violations]
        return cdk.PolicyValidationPluginReport(success=not violations, violations=violations)


def add_nag(app: IConstruct, stacks: Sequence[cdk.Stack] | None = None) -> None:
    """Run cdk-nag's AwsSolutions pack at synth over ``stacks`` (default: everything under ``app``, an App or
    Stage); any unacknowledged finding fails synth."""
    plugin = AwsSolutionsChecks(app) if stacks is None else ScopedAwsSolutions(stacks)
    cdk.Validations.of(app).add_plugins(plugin)


def nag_render(value: Any) -> str:
    """How cdk-nag prints a resolved value inside a finding id: ``<Logical.Attr>`` for ``Fn::GetAtt``,
    ``<Logical>`` for ``Ref``, the bare export name for ``Fn::ImportValue``, compact JSON for other intrinsics."""
    if isinstance(value, str):
        return value
    if "Fn::GetAtt" in value:
        return f"<{'.'.join(value['Fn::GetAtt'])}>"
    if "Ref" in value:
        return f"<{value['Ref']}>"
    if "Fn::ImportValue" in value:
        return str(value["Fn::ImportValue"])  # cdk-nag prints the export name bare
    return json.dumps(value, separators=(",", ":"))


def managed_policy(name: str) -> str:
    """The IAM4 finding suffix cdk-nag reports for AWS managed policy ``name`` (e.g. ``service-role/X``)."""
    return f"Policy::arn:<AWS::Partition>:iam::aws:policy/{name}"


def acknowledge(scope: IConstruct, rule: str, reason: str, findings: tuple[str, ...] = ()) -> None:
    """Accept AwsSolutions ``rule`` (e.g. ``"IAM4"``) for ``scope`` and everything under it, with ``reason``.

    Rules that report granular findings (IAM4 per policy, IAM5 per wildcard) are acknowledged one finding at a
    time: pass each finding's bracketed suffix in ``findings``, so a new policy or wildcard still fails synth.
    """
    ids = [f"{PACK}::{PACK}-{rule}[{finding}]" for finding in findings] or [f"{PACK}::{PACK}-{rule}"]
    cdk.Validations.of(scope).acknowledge(*(cdk.Acknowledgment(id=i, reason=reason) for i in ids))
