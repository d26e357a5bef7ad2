"""IAM roles EKS Pod Identity hands to service accounts, each trusting only the namespace, service accounts and
cluster of its associations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aws_cdk import aws_iam as iam
from constructs import Construct

POD_IDENTITY = "pods.eks.amazonaws.com"
#: Session tags EKS Pod Identity puts on every role session it starts (associations keep them on by default:
#: ``DisableSessionTags`` false) — Amazon EKS User Guide, "Create IAM role with trust policy required by EKS Pod
#: Identity" (pod-id-role) and "List of session tags added by EKS Pod Identity" (pod-id-abac).
NAMESPACE_TAG = "aws:RequestTag/kubernetes-namespace"
SERVICE_ACCOUNT_TAG = "aws:RequestTag/kubernetes-service-account"
CLUSTER_TAG = "aws:RequestTag/eks-cluster-name"


def trust_conditions(namespace: str, service_accounts: Sequence[str], cluster_name: str) -> dict[str, Any]:
    """The trust condition of a Pod Identity role: the session's namespace, service account and cluster tags."""
    return {
        "StringEquals": {
            NAMESPACE_TAG: namespace,
            SERVICE_ACCOUNT_TAG: sorted(set(service_accounts)),
            CLUSTER_TAG: cluster_name,
        }
    }


def pod_identity_trust(namespace: str, service_accounts: Sequence[str], cluster_name: str) -> dict[str, Any]:
    """A whole trust policy document: Pod Identity may AssumeRole + TagSession under :func:`trust_conditions`
    (for a role some other construct created, e.g. aws-eks-v2's ServiceAccount)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": POD_IDENTITY},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
                "Condition": trust_conditions(namespace, service_accounts, cluster_name),
            }
        ],
    }


def pod_identity_role(
    scope: Construct,
    construct_id: str,
    description: str,
    *,
    namespace: str,
    service_accounts: Sequence[str],
    cluster_name: str,
) -> iam.Role:
    """An IAM role EKS Pod Identity can hand to ``service_accounts`` of ``namespace`` in ``cluster_name`` only
    (AssumeRole + TagSession, conditioned on the session tags Pod Identity sets): without the conditions, anyone
    able to create an association could bind the role to any service account of any cluster in the account."""
    conditions = trust_conditions(namespace, service_accounts, cluster_name)
    return iam.Role(
        scope,
        construct_id,
        description=description,
        assumed_by=iam.SessionTagsPrincipal(iam.ServicePrincipal(POD_IDENTITY, conditions=conditions)),
    )
