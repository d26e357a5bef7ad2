"""Pod Identity trust (issue 24 §3): every role EKS Pod Identity assumes trusts only the namespace, service accounts
and cluster it is associated with — and every association of the app would still get its credentials.

EKS Pod Identity sets the session tags ``kubernetes-namespace``, ``kubernetes-service-account`` and
``eks-cluster-name`` on the sessions it starts (Amazon EKS User Guide: pod-id-role, pod-id-abac); a trust policy's
``StringEquals`` on ``aws:RequestTag/<tag>`` admits a session only when the tag matches. The test evaluates each
association's tags against its role's trust policy, as STS would, over every example."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from inferstack.plan import resolve

POD_IDENTITY = "pods.eks.amazonaws.com"
ASSOCIATION = "AWS::EKS::PodIdentityAssociation"
ADDON = "AWS::EKS::Addon"
#: Namespace of an EKS add-on's service accounts (the CSI drivers' controllers run in kube-system).
ADDON_NAMESPACE = "kube-system"


def _same(value: Any, expected: Any) -> bool:
    """CloudFormation values compared as rendered (a token compares equal to the same token)."""
    return json.dumps(value, sort_keys=True) == json.dumps(expected, sort_keys=True)


def _matches(condition: Any, tag: Any) -> bool:
    values = condition if isinstance(condition, list) else [condition]
    return any(_same(v, tag) for v in values)


def assumable(trust: dict[str, Any], tags: dict[str, Any]) -> bool:
    """Whether a Pod Identity session with ``tags`` may AssumeRole and TagSession under ``trust``."""
    for statement in trust.get("Statement", []):
        principal = statement.get("Principal", {}).get("Service")
        actions = statement.get("Action", [])
        actions = [actions] if isinstance(actions, str) else actions
        if statement.get("Effect") != "Allow" or principal != POD_IDENTITY:
            continue
        if not {"sts:AssumeRole", "sts:TagSession"} <= set(actions):
            continue
        conditions = statement.get("Condition", {})
        if set(conditions) - {"StringEquals"}:
            continue  # an operator this evaluator does not model: not counted as admitting
        equals = conditions.get("StringEquals", {})
        if all(
            key.startswith("aws:RequestTag/") and _matches(value, tags.get(key.removeprefix("aws:RequestTag/")))
            for key, value in equals.items()
        ):
            return True
    return False


def _role_id(arn: Any) -> str | None:
    if isinstance(arn, dict) and "Fn::GetAtt" in arn:
        return arn["Fn::GetAtt"][0]
    return None


def associations(template: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(what, session tags, trust policy) of every association and add-on association in ``template``."""
    resources = template.get("Resources", {})
    for logical_id, resource in resources.items():
        props = resource.get("Properties", {})
        if resource["Type"] == ASSOCIATION:
            tags = {
                "kubernetes-namespace": props["Namespace"],
                "kubernetes-service-account": props["ServiceAccount"],
                "eks-cluster-name": props["ClusterName"],
            }
            entries = [(logical_id, tags, props["RoleArn"])]
        elif resource["Type"] == ADDON:
            entries = [
                (
                    f"{logical_id}/{entry['ServiceAccount']}",
                    {
                        "kubernetes-namespace": ADDON_NAMESPACE,
                        "kubernetes-service-account": entry["ServiceAccount"],
                        "eks-cluster-name": props["ClusterName"],
                    },
                    entry["RoleArn"],
                )
                for entry in props.get("PodIdentityAssociations", [])
            ]
        else:
            continue
        for what, tags, arn in entries:
            role = _role_id(arn)
            assert role is not None and role in resources, f"{what}: its role is not in the same template ({arn})"
            yield what, tags, resources[role]["Properties"]["AssumeRolePolicyDocument"]


def pod_identity_roles(template: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for logical_id, resource in template.get("Resources", {}).items():
        if resource["Type"] != "AWS::IAM::Role":
            continue
        trust = resource["Properties"]["AssumeRolePolicyDocument"]
        if any(s.get("Principal", {}).get("Service") == POD_IDENTITY for s in trust.get("Statement", [])):
            yield logical_id, trust


def test_every_association_gets_its_credentials(any_app):
    found = 0
    for name, template in any_app.templates.items():
        for what, tags, trust in associations(template):
            found += 1
            assert assumable(trust, tags), f"{name}/{what}: the role's trust policy refuses the association {tags}"
    if any(w.readers for w in resolve(any_app.config).workloads):
        assert found


def test_no_pod_identity_role_trusts_another_namespace_account_or_cluster(any_app):
    for name, template in any_app.templates.items():
        for role, trust in pod_identity_roles(template):
            for statement in trust["Statement"]:
                equals = statement.get("Condition", {}).get("StringEquals", {})
                missing = {
                    "aws:RequestTag/kubernetes-namespace",
                    "aws:RequestTag/kubernetes-service-account",
                    "aws:RequestTag/eks-cluster-name",
                } - set(equals)
                assert not missing, f"{name}/{role}: trusts Pod Identity without {sorted(missing)}"


@pytest.mark.parametrize(
    ("tags", "admitted"),
    [
        ({"kubernetes-namespace": "inference", "kubernetes-service-account": "a", "eks-cluster-name": "c"}, True),
        ({"kubernetes-namespace": "other", "kubernetes-service-account": "a", "eks-cluster-name": "c"}, False),
        ({"kubernetes-namespace": "inference", "kubernetes-service-account": "b", "eks-cluster-name": "c"}, False),
        ({"kubernetes-namespace": "inference", "kubernetes-service-account": "a", "eks-cluster-name": "d"}, False),
    ],
)
def test_the_evaluator_reads_the_conditions_as_sts_does(tags, admitted):
    trust = {
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": POD_IDENTITY},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
                "Condition": {
                    "StringEquals": {
                        "aws:RequestTag/kubernetes-namespace": "inference",
                        "aws:RequestTag/kubernetes-service-account": ["a"],
                        "aws:RequestTag/eks-cluster-name": "c",
                    }
                },
            }
        ]
    }
    assert assumable(trust, tags) is admitted


def test_karpenters_role_is_narrowed_without_cdk_json_feature_flags():
    """Review finding: aws-eks-v2's ServiceAccount writes its trust in two statements, merged into one only under
    @aws-cdk/aws-iam:minimizePolicies — a library user's bare App keeps the unconditioned second one unless the whole
    document is replaced."""
    import aws_cdk as cdk
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_eks_v2 as eks
    from aws_cdk.assertions import Template

    from inferstack.stacks.karpenter import Karpenter

    app = cdk.App()  # no cdk.json context: no minimizePolicies
    stack = cdk.Stack(app, "team")
    vpc = ec2.Vpc(stack, "Vpc", max_azs=2)
    provider = eks.KubectlProvider.from_kubectl_provider_attributes(
        stack, "Kubectl", service_token="arn:aws:lambda:us-west-2:111122223333:function:kubectl"
    )
    cluster = eks.Cluster.from_cluster_attributes(
        stack, "Cluster", cluster_name="team-cluster", kubectl_provider=provider, vpc=vpc
    )
    Karpenter(stack, "Karpenter", cluster=cluster, cluster_name="team-cluster")
    template = Template.from_stack(stack).to_json()
    roles = dict(pod_identity_roles(template))
    (trust,) = roles.values()
    (statement,) = trust["Statement"]
    assert statement["Condition"]["StringEquals"]["aws:RequestTag/kubernetes-service-account"] == ["karpenter"]
    ((what, tags, policy),) = associations(template)
    assert assumable(policy, tags), what
