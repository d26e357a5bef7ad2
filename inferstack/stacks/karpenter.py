"""Karpenter (self-managed): node role + access entry, controller with least-privilege Pod Identity, SQS
interruption queue with EventBridge rules, and the Helm chart (version from the catalog) on the system nodes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_eks_v2 as eks
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from inferstack.catalog.kubernetes import POOL_LABEL, SYSTEM_POOL
from inferstack.stacks.helm import helm_chart
from inferstack.stacks.nag import acknowledge, managed_policy
from inferstack.stacks.pod_identity import pod_identity_trust

NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "karpenter"
NODE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryPullOnly",
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
#: Describe calls Karpenter makes (upstream ``AllowRegionalReadActions``). ``DescribeInstanceStatus`` feeds
#: instance health and scheduled-event handling.
_READ_ACTIONS = [
    "ec2:DescribeCapacityReservations",
    "ec2:DescribeImages",
    "ec2:DescribeInstances",
    "ec2:DescribeInstanceStatus",
    "ec2:DescribeInstanceTypeOfferings",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeLaunchTemplates",
    "ec2:DescribePlacementGroups",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeSpotPriceHistory",
    "ec2:DescribeSubnets",
]
#: API names that may tag on create. The values of ``ec2:CreateAction`` are bare API names (``RunInstances``),
#: never ``ec2:RunInstances`` — that spelling matches nothing and denies every tagged launch.
TAG_ON_CREATE_ACTIONS = ("RunInstances", "CreateFleet", "CreateLaunchTemplate")
#: EventBridge detail types Karpenter handles (upstream reference template, one rule each).
INTERRUPTION_EVENTS: dict[str, tuple[str, str]] = {
    "ScheduledChange": ("aws.health", "AWS Health Event"),
    "SpotInterruption": ("aws.ec2", "EC2 Spot Instance Interruption Warning"),
    "Rebalance": ("aws.ec2", "EC2 Instance Rebalance Recommendation"),
    "InstanceStateChange": ("aws.ec2", "EC2 Instance State-change Notification"),
    "CapacityReservationInterruption": ("aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"),
}

#: Every intended difference from upstream's reference CloudFormation for the pinned Karpenter version
#: (website/content/en/v1.14/getting-started/getting-started-with-karpenter/cloudformation.yaml), by what differs.
#: The conformance test compares the controller policies statement by statement and allows exactly these.
UPSTREAM_DIFFERENCES: dict[str, str] = {
    "policy names": "upstream names the six managed policies KarpenterController*Policy-<cluster>; CDK generates "
    "unique names so two platforms (or a re-created stack) never collide. Statements are identical.",
    "queue name": "upstream names the interruption queue after the cluster; CDK generates the name and the Helm "
    "value settings.interruptionQueue passes it to Karpenter.",
    "queue policy": "upstream lets events.amazonaws.com and sqs.amazonaws.com send to the queue from anywhere; "
    "CDK's EventBridge target allows events.amazonaws.com only, conditioned on each rule's ARN (aws:SourceArn). "
    "The TLS-only deny is the same.",
    "interruption rule targets": "upstream gives every rule the target id KarpenterInterruptionQueueTarget; CDK "
    "generates the id. Event patterns are identical.",
}
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
    """Everything Karpenter needs, for ``cluster`` (which may live in another stack, or be imported).

    * ``node_role`` — for the instances Karpenter launches (access entry type EC2_LINUX);
    * ``queue`` — SQS interruption queue (SSE, TLS only, 5-minute retention) fed by EventBridge rules for Spot
      interruptions, rebalance recommendations, instance state changes, AWS Health events and capacity-reservation
      interruptions;
    * ``controller_policies`` — upstream's reference controller policies for the pinned version (node lifecycle,
      IAM integration, EKS integration, interruption, resource discovery, zonal shift), statement for statement
      (intended differences: :data:`UPSTREAM_DIFFERENCES`), bound to the controller through EKS Pod Identity;
    * ``crd_chart`` + ``chart`` — the ``karpenter-crd`` release (Helm upgrades CRDs only from templates, never from
      a chart's ``crds/``) and the controller release in ``kube-system`` with ``skipCrds``, two replicas pinned to
      the system node group.

    :param cluster_name: the EKS name of ``cluster``, as a literal string (it is part of IAM condition keys,
        where CloudFormation allows no tokens).

    NodePools and EC2NodeClasses must depend on ``chart``.
    """

    def __init__(self, scope: Construct, construct_id: str, *, cluster: eks.ICluster, cluster_name: str) -> None:
        super().__init__(scope, construct_id)
        if cdk.Token.is_unresolved(cluster_name) or not cluster_name:
            raise ValueError(
                f"Karpenter cluster_name: {cluster_name!r} — must be the cluster's literal EKS name (it is part of "
                "IAM condition keys, which cannot hold CloudFormation tokens)"
            )
        self.cluster_name = cluster_name
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
        for name, (source, detail_type) in INTERRUPTION_EVENTS.items():
            events.Rule(
                self,
                f"{name}Rule",
                event_pattern=events.EventPattern(source=[source], detail_type=[detail_type]),
                targets=[targets.SqsQueue(self.queue)],
            )
        self.service_account = eks.ServiceAccount(
            self,
            "ControllerServiceAccount",
            cluster=cluster,
            name=SERVICE_ACCOUNT,
            namespace=NAMESPACE,
            identity_type=eks.IdentityType.POD_IDENTITY,
        )
        # aws-eks-v2's ServiceAccount trusts Pod Identity without conditions, in two statements (Role assumedBy the
        # service principal, then addStatements AssumeRole + TagSession: aws-eks-v2/lib/service-account.js at
        # aws-cdk-lib 2.275.0), merged into one only under @aws-cdk/aws-iam:minimizePolicies. Replace the whole
        # document with the one conditioned statement inferstack's own roles carry (stacks/pod_identity.py), so the
        # narrowing holds in any app, whatever its feature flags.
        trust = self.service_account.role.node.default_child
        trust.add_property_override(  # type: ignore[union-attr]
            "AssumeRolePolicyDocument",
            pod_identity_trust(NAMESPACE, (SERVICE_ACCOUNT,), cluster.cluster_name),
        )
        self.controller_policies = self._grant_controller(self.service_account.role)
        self.crd_chart = helm_chart(self, "CrdChart", cluster, "karpenter-crd", NAMESPACE, {})
        self.chart = helm_chart(
            self, "Chart", cluster, "karpenter", NAMESPACE, self.chart_values(), release="karpenter", skip_crds=True
        )
        # aws-cdk-lib 2.275's aws-eks-v2 Helm handler does not pass skipCrds to `helm upgrade` (the aws-eks v1
        # handler does); the property states the intent. Helm skips crds/ that already exist, and karpenter-crd
        # installs them first, so the controller release never owns them either way.
        self.chart.node.add_dependency(self.crd_chart)
        self.chart.node.add_dependency(self.service_account)
        for policy in self.controller_policies.values():
            self.chart.node.add_dependency(policy)

    def chart_values(self) -> dict[str, Any]:
        """Helm values of the controller release (keys of the pinned chart's values.yaml)."""
        return {
            "settings": {"clusterName": self.cluster_name, "interruptionQueue": self.queue.queue_name},
            "serviceAccount": {"create": False, "name": SERVICE_ACCOUNT},
            "replicas": 2,
            "nodeSelector": {POOL_LABEL: SYSTEM_POOL},
            "controller": {
                "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
            },
        }

    def _statements(self) -> dict[str, list[iam.PolicyStatement]]:
        """Upstream's controller policies, by policy."""
        name = self.cluster_name
        cluster_tag = f"kubernetes.io/cluster/{name}"
        request_owned = {f"aws:RequestTag/{cluster_tag}": "owned", "aws:RequestTag/eks:eks-cluster-name": name}
        resource_owned = {f"aws:ResourceTag/{cluster_tag}": "owned"}
        request_nodepool = {"aws:RequestTag/karpenter.sh/nodepool": "*"}
        resource_nodepool = {"aws:ResourceTag/karpenter.sh/nodepool": "*"}
        request_region = {"aws:RequestTag/topology.kubernetes.io/region": cdk.Aws.REGION}
        resource_region = {"aws:ResourceTag/topology.kubernetes.io/region": cdk.Aws.REGION}
        request_nodeclass = {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"}
        resource_nodeclass = {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"}
        launch_template = _ec2("launch-template/*").resolve()
        instance = _ec2("instance/*").resolve()
        profiles = _INSTANCE_PROFILES.resolve()
        cluster_arn = cdk.Stack.of(self).format_arn(service="eks", resource="cluster", resource_name=name)
        statement = iam.PolicyStatement
        return {
            "NodeLifecycle": [
                statement(
                    sid="AllowScopedEC2InstanceAccessActions",
                    actions=["ec2:RunInstances", "ec2:CreateFleet"],
                    resources=[a.resolve() for a in _LAUNCH_INPUTS],
                ),
                statement(
                    sid="AllowScopedEC2LaunchTemplateAccessActions",
                    actions=["ec2:RunInstances", "ec2:CreateFleet"],
                    resources=[launch_template],
                    conditions={"StringEquals": resource_owned, "StringLike": resource_nodepool},
                ),
                statement(
                    sid="AllowScopedEC2InstanceActionsWithTags",
                    actions=["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
                    resources=[a.resolve() for a in _LAUNCHED],
                    conditions={"StringEquals": request_owned, "StringLike": request_nodepool},
                ),
                statement(
                    sid="AllowScopedResourceCreationTagging",
                    actions=["ec2:CreateTags"],
                    resources=[a.resolve() for a in _LAUNCHED],
                    conditions={
                        "StringEquals": {**request_owned, "ec2:CreateAction": list(TAG_ON_CREATE_ACTIONS)},
                        "StringLike": request_nodepool,
                    },
                ),
                statement(
                    sid="AllowScopedResourceTagging",
                    actions=["ec2:CreateTags"],
                    resources=[instance],
                    conditions={
                        "StringEquals": resource_owned,
                        "StringLike": resource_nodepool,
                        "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": name},
                        "ForAllValues:StringEquals": {
                            "aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]
                        },
                    },
                ),
                statement(
                    sid="AllowScopedDeletion",
                    actions=["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
                    resources=[instance, launch_template],
                    conditions={"StringEquals": resource_owned, "StringLike": resource_nodepool},
                ),
            ],
            "IAMIntegration": [
                statement(
                    sid="AllowPassingInstanceRole",
                    actions=["iam:PassRole"],
                    resources=[self.node_role.role_arn],
                    conditions={"StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}},
                ),
                statement(
                    sid="AllowScopedInstanceProfileCreationActions",
                    actions=["iam:CreateInstanceProfile"],
                    resources=[profiles],
                    conditions={"StringEquals": {**request_owned, **request_region}, "StringLike": request_nodeclass},
                ),
                statement(
                    sid="AllowScopedInstanceProfileTagActions",
                    actions=["iam:TagInstanceProfile"],
                    resources=[profiles],
                    conditions={
                        "StringEquals": {**resource_owned, **resource_region, **request_owned, **request_region},
                        "StringLike": {**resource_nodeclass, **request_nodeclass},
                    },
                ),
                statement(
                    sid="AllowScopedInstanceProfileActions",
                    actions=[
                        "iam:AddRoleToInstanceProfile",
                        "iam:RemoveRoleFromInstanceProfile",
                        "iam:DeleteInstanceProfile",
                    ],
                    resources=[profiles],
                    conditions={
                        "StringEquals": {**resource_owned, **resource_region},
                        "StringLike": resource_nodeclass,
                    },
                ),
            ],
            "EKSIntegration": [
                statement(
                    sid="AllowAPIServerEndpointDiscovery", actions=["eks:DescribeCluster"], resources=[cluster_arn]
                )
            ],
            "Interruption": [
                statement(
                    sid="AllowInterruptionQueueActions",
                    actions=["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
                    resources=[self.queue.queue_arn],
                )
            ],
            "ZonalShift": [
                statement(
                    sid="AllowZonalShiftStatusReadOnly",
                    actions=["arc-zonal-shift:GetManagedResource"],
                    resources=["*"],
                    conditions={"StringEquals": {"arc-zonal-shift:ResourceIdentifier": cluster_arn}},
                )
            ],
            "ResourceDiscovery": [
                statement(
                    sid="AllowRegionalReadActions",
                    actions=_READ_ACTIONS,
                    resources=["*"],
                    conditions={"StringEquals": {"aws:RequestedRegion": cdk.Aws.REGION}},
                ),
                statement(
                    sid="AllowSSMReadActions", actions=["ssm:GetParameter"], resources=[_SSM_PARAMETERS.resolve()]
                ),
                statement(sid="AllowPricingReadActions", actions=["pricing:GetProducts"], resources=["*"]),
                statement(
                    sid="AllowUnscopedInstanceProfileListAction", actions=["iam:ListInstanceProfiles"], resources=["*"]
                ),
                statement(
                    sid="AllowInstanceProfileReadActions", actions=["iam:GetInstanceProfile"], resources=[profiles]
                ),
            ],
        }

    def _grant_controller(self, role: iam.IRole) -> dict[str, iam.ManagedPolicy]:
        """Attach the controller's policies, acknowledging exactly the wildcards each carries."""
        policies: dict[str, iam.ManagedPolicy] = {}
        # Each jsii round trip costs: resolve every ARN once, read each statement's resources once.
        patterns = {a.resolve(): a.nag() for a in [*_LAUNCH_INPUTS, *_LAUNCHED, _INSTANCE_PROFILES, _SSM_PARAMETERS]}
        for name, statements in self._statements().items():
            policy = iam.ManagedPolicy(
                self,
                f"Controller{name}Policy",
                description=f"Karpenter controller {name} ({self.cluster_name}): upstream reference policy",
                statements=statements,
            )
            policy.attach_to_role(role)
            resources = {r for statement in statements for r in statement.resources}
            wildcards = sorted(nag for arn, nag in patterns.items() if arn in resources)
            if "*" in resources:
                wildcards.append("Resource::*")
            if wildcards:
                acknowledge(policy, "IAM5", CONTROLLER_WILDCARDS, tuple(wildcards))
            policies[name] = policy
        return policies
