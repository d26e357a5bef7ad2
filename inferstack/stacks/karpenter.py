"""Karpenter (self-managed): node role + access entry, controller with least-privilege Pod Identity, SQS
interruption queue with EventBridge rules, and the Helm chart (version from the catalog) on the system nodes."""

from __future__ import annotations

from dataclasses import dataclass

import aws_cdk as cdk
from aws_cdk import aws_eks_v2 as eks
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from inferstack.catalog.kubernetes import POOL_LABEL, SYSTEM_POOL
from inferstack.catalog.versions import HELM_CHARTS
from inferstack.stacks.nag import acknowledge, managed_policy

NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "karpenter"
NODE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryReadOnly",
    "AmazonSSMManagedInstanceCore",
)
_P, _R, _A = "{partition}", "{region}", "{account}"


@dataclass(frozen=True)
class _Arn:
    """An ARN pattern rendered twice: with CDK pseudo-parameter tokens, and as cdk-nag reports it."""

    pattern: str

    def resolve(self) -> str:
        return self.pattern.format(partition=cdk.Aws.PARTITION, region=cdk.Aws.REGION, account=cdk.Aws.ACCOUNT_ID)

    def nag(self) -> str:
        return "Resource::" + self.pattern.format(
            partition="<AWS::Partition>", region="<AWS::Region>", account="<AWS::AccountId>"
        )


def _ec2(resource: str, account: str = "*") -> _Arn:
    return _Arn(f"arn:{_P}:ec2:{_R}:{account}:{resource}")


_LAUNCH_INPUTS = [
    _ec2("image/*", ""),
    _ec2("snapshot/*", ""),
    _ec2("security-group/*"),
    _ec2("subnet/*"),
    _ec2("capacity-reservation/*"),
    _ec2("placement-group/*"),
]
_LAUNCHED = [
    _ec2("fleet/*"),
    _ec2("instance/*"),
    _ec2("volume/*"),
    _ec2("network-interface/*"),
    _ec2("launch-template/*"),
    _ec2("spot-instances-request/*"),
]
_INSTANCE_PROFILES = _Arn(f"arn:{_P}:iam::{_A}:instance-profile/*")
_SSM_PARAMETERS = _Arn(f"arn:{_P}:ssm:{_R}::parameter/aws/service/*")
_READ_ACTIONS = [
    "ec2:DescribeAvailabilityZones",
    "ec2:DescribeCapacityReservations",
    "ec2:DescribeImages",
    "ec2:DescribeInstances",
    "ec2:DescribeInstanceTypeOfferings",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeLaunchTemplates",
    "ec2:DescribePlacementGroups",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeSpotPriceHistory",
    "ec2:DescribeSubnets",
]

CONTROLLER_WILDCARDS = (
    "Karpenter launches, tags and terminates instances it does not know in advance: every wildcard resource is "
    "bounded by conditions on the cluster's ownership tags (kubernetes.io/cluster/<name>=owned, "
    "eks:eks-cluster-name, karpenter.sh/nodepool), the region, or is a read-only Describe/pricing/SSM call that "
    "supports no resource-level scoping (Karpenter v1 reference policy)"
)
QUEUE_NO_DLQ = (
    "Interruption events are only useful within minutes of arrival (5-minute retention); a dead-letter queue "
    "would keep stale Spot/health notices that Karpenter must never act on"
)
NODE_ROLE_POLICIES = (
    "Karpenter nodes need the EKS worker, CNI, ECR read-only and SSM managed policies (Karpenter node role "
    "requirements); AWS maintains them per EKS release"
)


class Karpenter(Construct):
    """Everything Karpenter needs, for ``cluster`` (which may live in another stack).

    * ``node_role`` — for the instances Karpenter launches (access entry type EC2_LINUX);
    * ``queue`` — SQS interruption queue (SSE, TLS only, 5-minute retention) fed by EventBridge rules for Spot
      interruptions, rebalance recommendations, instance state changes and AWS Health events;
    * ``chart`` — the Helm release in ``kube-system``, two replicas pinned to the system node group, its service
      account bound to a least-privilege role through EKS Pod Identity.

    NodePools and EC2NodeClasses must depend on ``chart`` (it installs their CRDs).
    """

    def __init__(self, scope: Construct, construct_id: str, *, cluster: eks.ICluster, cluster_name: str) -> None:
        super().__init__(scope, construct_id)
        self.node_role = iam.Role(
            self,
            "NodeRole",
            assumed_by=iam.ServicePrincipal("ec2.amazonaws.com"),
            description=f"Nodes launched by Karpenter in EKS cluster {cluster_name}",
            managed_policies=[iam.ManagedPolicy.from_aws_managed_policy_name(n) for n in NODE_POLICIES],
        )
        acknowledge(self.node_role, "IAM4", NODE_ROLE_POLICIES, tuple(managed_policy(n) for n in NODE_POLICIES))
        eks.AccessEntry(
            self,
            "NodeAccess",
            cluster=cluster,
            principal=self.node_role.role_arn,
            access_entry_type=eks.AccessEntryType.EC2_LINUX,
            access_policies=[],
        )
        self.queue = sqs.Queue(
            self,
            "InterruptionQueue",
            retention_period=cdk.Duration.minutes(5),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
        )
        acknowledge(self.queue, "SQS3", QUEUE_NO_DLQ)
        self._add_interruption_rules()
        self.service_account = eks.ServiceAccount(
            self,
            "ControllerServiceAccount",
            cluster=cluster,
            name=SERVICE_ACCOUNT,
            namespace=NAMESPACE,
            identity_type=eks.IdentityType.POD_IDENTITY,
        )
        self.controller_policy = self._grant_controller(self.service_account.role, cluster_name)
        chart = HELM_CHARTS["karpenter"]
        self.chart = eks.HelmChart(
            self,
            "Chart",
            cluster=cluster,
            chart=chart.chart,
            repository=chart.repository,
            version=chart.version,
            namespace=NAMESPACE,
            release="karpenter",
            values={
                "settings": {"clusterName": cluster_name, "interruptionQueue": self.queue.queue_name},
                "serviceAccount": {"create": False, "name": SERVICE_ACCOUNT},
                "replicas": 2,
                "nodeSelector": {POOL_LABEL: SYSTEM_POOL},
                "controller": {
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
                },
            },
        )
        self.chart.node.add_dependency(self.service_account)

    def _add_interruption_rules(self) -> None:
        patterns = {
            "SpotInterruption": events.EventPattern(
                source=["aws.ec2"], detail_type=["EC2 Spot Instance Interruption Warning"]
            ),
            "Rebalance": events.EventPattern(source=["aws.ec2"], detail_type=["EC2 Instance Rebalance Recommendation"]),
            "InstanceStateChange": events.EventPattern(
                source=["aws.ec2"], detail_type=["EC2 Instance State-change Notification"]
            ),
            "ScheduledChange": events.EventPattern(source=["aws.health"], detail_type=["AWS Health Event"]),
        }
        for name, pattern in patterns.items():
            events.Rule(self, f"{name}Rule", event_pattern=pattern, targets=[targets.SqsQueue(self.queue)])

    def _grant_controller(self, role: iam.IRole, cluster_name: str) -> iam.Policy:
        """Attach the controller's least-privilege policy, acknowledging exactly the wildcards it carries."""
        owned = {
            f"aws:RequestTag/kubernetes.io/cluster/{cluster_name}": "owned",
            "aws:RequestTag/eks:eks-cluster-name": cluster_name,
        }
        owned_resource = {f"aws:ResourceTag/kubernetes.io/cluster/{cluster_name}": "owned"}
        nodepool_request = {"aws:RequestTag/karpenter.sh/nodepool": "*"}
        nodepool_resource = {"aws:ResourceTag/karpenter.sh/nodepool": "*"}
        region = {"aws:RequestedRegion": cdk.Aws.REGION}
        profile_tags = {**owned, "aws:RequestTag/topology.kubernetes.io/region": cdk.Aws.REGION}
        profile_resource = {**owned_resource, "aws:ResourceTag/topology.kubernetes.io/region": cdk.Aws.REGION}
        ec2_tagging = ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"]
        statements = [
            iam.PolicyStatement(
                sid="AllowScopedEC2InstanceAccessActions",
                actions=["ec2:RunInstances", "ec2:CreateFleet"],
                resources=[a.resolve() for a in _LAUNCH_INPUTS],
            ),
            iam.PolicyStatement(
                sid="AllowScopedEC2LaunchTemplateAccessActions",
                actions=["ec2:RunInstances", "ec2:CreateFleet"],
                resources=[_ec2("launch-template/*").resolve()],
                conditions={"StringEquals": owned_resource, "StringLike": nodepool_resource},
            ),
            iam.PolicyStatement(
                sid="AllowScopedEC2InstanceActionsWithTags",
                actions=ec2_tagging,
                resources=[a.resolve() for a in _LAUNCHED],
                conditions={"StringEquals": owned, "StringLike": nodepool_request},
            ),
            iam.PolicyStatement(
                sid="AllowScopedResourceCreationTagging",
                actions=["ec2:CreateTags"],
                resources=[a.resolve() for a in _LAUNCHED],
                conditions={"StringEquals": {**owned, "ec2:CreateAction": ec2_tagging}, "StringLike": nodepool_request},
            ),
            iam.PolicyStatement(
                sid="AllowScopedResourceTagging",
                actions=["ec2:CreateTags"],
                resources=[_ec2("instance/*").resolve()],
                conditions={
                    "StringEquals": owned_resource,
                    "StringLike": nodepool_resource,
                    "ForAllValues:StringEquals": {
                        "aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]
                    },
                },
            ),
            iam.PolicyStatement(
                sid="AllowScopedDeletion",
                actions=["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
                resources=[_ec2("instance/*").resolve(), _ec2("launch-template/*").resolve()],
                conditions={"StringEquals": owned_resource, "StringLike": nodepool_resource},
            ),
            iam.PolicyStatement(
                sid="AllowRegionalReadActions",
                actions=_READ_ACTIONS,
                resources=["*"],
                conditions={"StringEquals": region},
            ),
            iam.PolicyStatement(
                sid="AllowSSMReadActions", actions=["ssm:GetParameter"], resources=[_SSM_PARAMETERS.resolve()]
            ),
            iam.PolicyStatement(sid="AllowPricingReadActions", actions=["pricing:GetProducts"], resources=["*"]),
            iam.PolicyStatement(
                sid="AllowInterruptionQueueActions",
                actions=["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
                resources=[self.queue.queue_arn],
            ),
            iam.PolicyStatement(
                sid="AllowPassingInstanceRole",
                actions=["iam:PassRole"],
                resources=[self.node_role.role_arn],
                conditions={"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}},
            ),
            iam.PolicyStatement(
                sid="AllowScopedInstanceProfileCreationActions",
                actions=["iam:CreateInstanceProfile", "iam:TagInstanceProfile"],
                resources=[_INSTANCE_PROFILES.resolve()],
                conditions={
                    "StringEquals": profile_tags,
                    "StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"},
                },
            ),
            iam.PolicyStatement(
                sid="AllowScopedInstanceProfileActions",
                actions=[
                    "iam:AddRoleToInstanceProfile",
                    "iam:RemoveRoleFromInstanceProfile",
                    "iam:DeleteInstanceProfile",
                ],
                resources=[_INSTANCE_PROFILES.resolve()],
                conditions={
                    "StringEquals": profile_resource,
                    "StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"},
                },
            ),
            iam.PolicyStatement(
                sid="AllowInstanceProfileReadActions",
                actions=["iam:GetInstanceProfile"],
                resources=[_INSTANCE_PROFILES.resolve()],
            ),
            iam.PolicyStatement(
                # Garbage collection of instance profiles Karpenter created (it filters by its own tags).
                sid="AllowUnscopedInstanceProfileListAction",
                actions=["iam:ListInstanceProfiles"],
                resources=["*"],
            ),
            iam.PolicyStatement(
                sid="AllowAPIServerEndpointDiscovery",
                actions=["eks:DescribeCluster"],
                resources=[
                    cdk.Stack.of(self).format_arn(service="eks", resource="cluster", resource_name=cluster_name)
                ],
            ),
        ]
        policy = iam.Policy(self, "ControllerPolicy", statements=statements)
        policy.attach_to_role(role)
        wildcards = {a.nag() for a in [*_LAUNCH_INPUTS, *_LAUNCHED, _INSTANCE_PROFILES, _SSM_PARAMETERS]}
        acknowledge(policy, "IAM5", CONTROLLER_WILDCARDS, (*sorted(wildcards), "Resource::*"))
        return policy
