"""Where a stack's Kubernetes side goes: applied by the stack through the kubectl provider, or handed to GitOps.

A stack whose ``kubernetes_by_gitops`` attribute is true (a :class:`~inferstack.stacks.workloads.WorkloadsStack`
with ``kubernetes_delivery: gitops``) gets a :class:`HandedToGitOps` wherever a Helm release, a manifest or a wait on
a Kubernetes object would be: it synthesizes nothing, so the stack keeps only its AWS resources, and what depends on
it waits for nothing in CloudFormation — ``inferstack export`` writes those objects in sync waves that keep the
order the CDK dependencies give (:mod:`inferstack.export`).
"""

from __future__ import annotations

import aws_cdk as cdk
from constructs import Construct

#: The attribute of a stack that hands its Kubernetes side to GitOps.
GITOPS_ATTRIBUTE = "kubernetes_by_gitops"


class HandedToGitOps(Construct):
    """Stands where a Kubernetes-side construct would be: no CloudFormation resource, a node to depend on."""


def handed_to_gitops(scope: Construct) -> bool:
    """Whether ``scope``'s stack hands its Kubernetes side to GitOps. Default False (a stack without the
    attribute applies its own)."""
    return bool(getattr(cdk.Stack.of(scope), GITOPS_ATTRIBUTE, False))
