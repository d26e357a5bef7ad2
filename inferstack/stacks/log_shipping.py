"""Container logs off the nodes: a CloudWatch Logs group (KMS-encrypted, retention from config, retained when the
stack goes) and Fluent Bit on every node (:class:`~inferstack.constructs.log_shipping.LogShipping`) writing to it
through an EKS Pod Identity role that may only create streams in and put events to that group.

The key lets CloudWatch Logs use it for this group only: the ``kms:EncryptionContext:aws:logs:arn`` condition of
the CloudWatch Logs user guide ("Encrypt log data in CloudWatch Logs using AWS KMS"); aws-cdk-lib's LogGroup adds no
key policy itself. The writer needs no KMS permission (the service encrypts).
"""

from __future__ import annotations

import cdk8s
from aws_cdk import ArnFormat, Aws, Fn, RemovalPolicy, Stack
from aws_cdk import aws_eks_v2 as eks
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from constructs import Construct

from inferstack.catalog.versions import IMAGES
from inferstack.constructs.log_shipping import NAME, NAMESPACE, LogShipping, LogShippingProps
from inferstack.stacks.compute import add_chart_manifest
from inferstack.stacks.nag import acknowledge, nag_render
from inferstack.stacks.pod_identity import pod_identity_role

STREAM_WILDCARD = (
    "Fluent Bit creates one log stream per node and container file, named at run time: the statement is limited to "
    "the streams of inferstack's one log group"
)


def container_log_group_prefix(cluster_name: str) -> str:
    """The log group's name without its stack suffix."""
    return f"/aws/eks/{cluster_name}/containers-"


def container_log_group_name(cluster_name: str) -> str:
    """``/aws/eks/<cluster>/containers-<stack id>``: the group is retained when its stack goes, so a fixed name would
    make the next creation of the stack fail (the group exists); the stack's own id (the UUID of ``AWS::StackId``,
    new for every creation) keeps the name unique, known at deploy to the key policy and to Fluent Bit alike."""
    stack_uuid = Fn.select(2, Fn.split("/", Aws.STACK_ID))
    return Fn.join("", [container_log_group_prefix(cluster_name), stack_uuid])


def _nag_string(stack: Stack, value: str) -> str:
    """``value`` as cdk-nag prints it in a finding's resource: a joined string's parts each as :func:`nag_render`
    shows them (pseudo parameters as ``<AWS::Region>``, other intrinsics as compact JSON)."""
    resolved = stack.resolve(value)
    if isinstance(resolved, str):
        return resolved
    return "".join(nag_render(part) for part in resolved["Fn::Join"][1])


class LogShippingChart(cdk8s.Chart):
    def __init__(self, scope: Construct, construct_id: str, props: LogShippingProps) -> None:
        super().__init__(scope, construct_id, disable_resource_name_hashes=True)
        LogShipping(self, "log-shipping", props)


def add_log_shipping(
    scope: Construct, cluster: eks.ICluster, cluster_name: str, retention_days: int, pod_exclusion: bool = False
) -> Construct:
    """The key, the log group, the Fluent Bit role and its Pod Identity association, and the Kubernetes side.
    ``pod_exclusion``: pods may opt out with ``fluentbit.io/exclude`` (:class:`LogShippingProps`). Default off."""
    name = container_log_group_name(cluster_name)
    stack = Stack.of(scope)
    key = kms.Key(
        scope,
        "ContainerLogsKey",
        description=f"Encryption of the container logs of EKS cluster {cluster_name}",
        enable_key_rotation=True,
        removal_policy=RemovalPolicy.RETAIN,
    )
    group_arn = stack.format_arn(
        service="logs", resource="log-group", resource_name=name, arn_format=ArnFormat.COLON_RESOURCE_NAME
    )
    key.add_to_resource_policy(
        iam.PolicyStatement(
            principals=[iam.ServicePrincipal(f"logs.{Aws.REGION}.amazonaws.com")],
            actions=["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"],
            resources=["*"],
            conditions={"ArnLike": {"kms:EncryptionContext:aws:logs:arn": group_arn}},
        )
    )
    group = logs.LogGroup(
        scope,
        "ContainerLogs",
        log_group_name=name,
        encryption_key=key,
        # set below: RetentionDays is a jsii enum of names, the config holds days (validated against CloudWatch's)
        retention=logs.RetentionDays.INFINITE,
        removal_policy=RemovalPolicy.RETAIN,
    )
    group.node.default_child.add_property_override("RetentionInDays", retention_days)  # type: ignore[union-attr]
    group.node.add_dependency(key)
    role = pod_identity_role(
        scope,
        "Role-fluent-bit",
        f"Fluent Bit: writes the container logs to {name}",
        namespace=NAMESPACE,
        service_accounts=(NAME,),
        cluster_name=cluster.cluster_name,
    )
    role.add_to_policy(
        iam.PolicyStatement(
            actions=["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
            resources=[group.log_group_arn, f"{group_arn}:log-stream:*"],
        )
    )
    stream = f"Resource::{_nag_string(stack, group_arn)}:log-stream:*"
    acknowledge(role, "IAM5", STREAM_WILDCARD, (stream,))
    association = eks.CfnPodIdentityAssociation(
        scope,
        "Identity-logging-fluent-bit",
        cluster_name=cluster.cluster_name,
        namespace=NAMESPACE,
        service_account=NAME,
        role_arn=role.role_arn,
    )
    props = LogShippingProps(log_group=name, region=Aws.REGION, image=IMAGES["fluent-bit"], pod_exclusion=pod_exclusion)
    manifest = add_chart_manifest(scope, "LogShipping", cluster, LogShippingChart(cdk8s.App(), "log-shipping", props))
    manifest.node.add_dependency(association)  # a Fluent Bit pod started before its association gets no credentials
    return manifest
