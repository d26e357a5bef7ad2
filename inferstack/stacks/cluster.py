"""ClusterStack: the EKS control plane, its core add-ons, access entries and the managed CPU system node group."""

from __future__ import annotations

import importlib
import json
from typing import Any

import cdk8s
from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_eks_v2 as eks
from aws_cdk import aws_kms as kms
from constructs import Construct

from inferstack.catalog.kubernetes import POOL_LABEL, SYSTEM_POOL
from inferstack.catalog.versions import CORE_ADDONS, KUBERNETES_RELEASES
from inferstack.charts.platform_base import PlatformBaseChart
from inferstack.config.model import CapacityType, ClusterConfig, ControlPlaneLog, EndpointAccess
from inferstack.stacks.log_shipping import add_log_shipping
from inferstack.stacks.nag import (
    EKS_CLUSTER_POLICY,
    EKS_NODE_POLICIES,
    KUBECTL_MANAGED,
    KUBECTL_RUNTIME,
    KUBECTL_WILDCARD,
    acknowledge,
    managed_policy,
)

_LOG_TYPES: dict[ControlPlaneLog, eks.ClusterLoggingTypes] = {
    ControlPlaneLog.API: eks.ClusterLoggingTypes.API,
    ControlPlaneLog.AUDIT: eks.ClusterLoggingTypes.AUDIT,
    ControlPlaneLog.AUTHENTICATOR: eks.ClusterLoggingTypes.AUTHENTICATOR,
    ControlPlaneLog.CONTROLLER_MANAGER: eks.ClusterLoggingTypes.CONTROLLER_MANAGER,
    ControlPlaneLog.SCHEDULER: eks.ClusterLoggingTypes.SCHEDULER,
}
_CAPACITY: dict[CapacityType, eks.CapacityType] = {
    CapacityType.ON_DEMAND: eks.CapacityType.ON_DEMAND,
    CapacityType.SPOT: eks.CapacityType.SPOT,
}


def kubernetes_version(version: str) -> eks.KubernetesVersion:
    """The aws-cdk-lib ``KubernetesVersion`` for a ``"1.36"``-style version from the catalog."""
    return eks.KubernetesVersion.of(version)


def kubectl_layer(scope: Construct, version: str) -> Any:
    """The kubectl/helm Lambda layer pinned in the catalog for ``version``."""
    module = importlib.import_module(KUBERNETES_RELEASES[version].kubectl_layer)
    layer_class = next(getattr(module, name) for name in dir(module) if name.startswith("KubectlV"))
    return layer_class(scope, "KubectlLayer")


def endpoint_access(config: ClusterConfig) -> eks.EndpointAccess:
    """Map the config's endpoint access (and allow-list) onto aws_eks_v2."""
    if config.endpoint_access is EndpointAccess.PRIVATE:
        return eks.EndpointAccess.PRIVATE
    base = (
        eks.EndpointAccess.PUBLIC_AND_PRIVATE
        if config.endpoint_access is EndpointAccess.PUBLIC_AND_PRIVATE
        else eks.EndpointAccess.PUBLIC
    )
    return base.only_from(*config.public_access_cidrs) if config.public_access_cidrs else base


class ClusterStack(Stack):
    """An EKS cluster (aws_eks_v2) in an existing VPC, ready for accelerated node pools and workloads.

    * control plane in the VPC's private subnets, endpoint access per config (private by default);
    * Kubernetes secrets envelope-encrypted with a customer managed KMS key (rotation on);
    * control-plane logs per config (all five by default);
    * kubectl provider with the catalog's kubectl layer (runs in the private subnets);
    * ``default_capacity_type=NODEGROUP`` with no default capacity: no EKS Auto Mode, the next layers add
      Karpenter and accelerated node groups;
    * with ``log_retention_days`` (default 30; None: off), container logs shipped by Fluent Bit to an encrypted
      CloudWatch Logs group kept that many days (:mod:`inferstack.stacks.log_shipping`); pods may opt out with
      ``fluentbit.io/exclude`` only with ``log_pod_exclusion`` (default False);
    * managed add-ons vpc-cni, coredns, kube-proxy, eks-pod-identity-agent (versions: catalog or config pins);
      with ``network_policies`` (default True) the VPC CNI enforces NetworkPolicies (``enableNetworkPolicy``);
    * access entries (cluster admin) for the configured IAM principals;
    * a managed CPU node group ``system`` (AL2023, IMDSv2 only, encrypted gp3 root volume) in private subnets;
    * the platform base chart (serving/batch PriorityClasses).

    Pass ``vpc`` from :class:`NetworkStack` or from your own stack; exposes :attr:`cluster`.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        vpc: ec2.IVpc,
        config: ClusterConfig,
        cluster_name: str,
        network_policies: bool = True,
        log_retention_days: int | None = 30,
        log_pod_exclusion: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.config = config
        self.network_policies = network_policies
        self.secrets_key = kms.Key(
            self,
            "SecretsKey",
            description=f"Envelope encryption of Kubernetes secrets in EKS cluster {cluster_name}",
            enable_key_rotation=True,
        )
        private = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
        self.cluster = eks.Cluster(
            self,
            "Cluster",
            cluster_name=cluster_name,
            version=kubernetes_version(config.kubernetes_version),
            vpc=vpc,
            vpc_subnets=[private],
            endpoint_access=endpoint_access(config),
            cluster_logging=[_LOG_TYPES[log] for log in config.control_plane_logs],
            secrets_encryption_key=self.secrets_key,
            kubectl_provider_options=eks.KubectlProviderOptions(
                kubectl_layer=kubectl_layer(self, config.kubernetes_version)
            ),
            default_capacity_type=eks.DefaultCapacityType.NODEGROUP,
            default_capacity=0,
        )
        self._acknowledge_cluster_findings()
        self._add_core_addons()
        for index, arn in enumerate(config.admin_principal_arns):
            self.cluster.grant_access(
                f"Admin{index}",
                arn,
                [
                    eks.AccessPolicy.from_access_policy_name(
                        "AmazonEKSClusterAdminPolicy", access_scope_type=eks.AccessScopeType.CLUSTER
                    )
                ],
            )
        self.system_nodegroup = self._add_system_nodegroup(private)
        self.base_manifest = self.cluster.add_cdk8s_chart(
            "PlatformBase", PlatformBaseChart(cdk8s.App(), "platform-base")
        )
        self.log_shipping = None
        if log_retention_days is not None:
            self.log_shipping = add_log_shipping(
                self, self.cluster, cluster_name, log_retention_days, pod_exclusion=log_pod_exclusion
            )
            self.log_shipping.node.add_dependency(self.system_nodegroup)

    def _acknowledge_cluster_findings(self) -> None:
        """cdk-nag findings on constructs aws_eks_v2 owns, each with its reason (see inferstack.stacks.nag)."""
        acknowledge(
            self.cluster.node.find_child("Role"),
            "IAM4",
            EKS_CLUSTER_POLICY,
            (managed_policy("AmazonEKSClusterPolicy"),),
        )
        kubectl = self.cluster.node.find_child("KubectlProvider")
        handler = kubectl.node.find_child("Handler")
        ecr_public = self.resolve(handler.node.find_child("HasEcrPublic").logical_id)  # type: ignore[attr-defined]
        ecr_public_policy = json.dumps(
            {
                "Fn::If": [
                    ecr_public,
                    {
                        "Fn::Join": [
                            "",
                            [
                                "arn:",
                                {"Ref": "AWS::Partition"},
                                ":iam::aws:policy/AmazonElasticContainerRegistryPublicReadOnly",
                            ],
                        ]
                    },
                    {"Ref": "AWS::NoValue"},
                ]
            },
            separators=(",", ":"),
        )
        acknowledge(
            kubectl,
            "IAM4",
            KUBECTL_MANAGED,
            (
                managed_policy("service-role/AWSLambdaBasicExecutionRole"),
                managed_policy("service-role/AWSLambdaVPCAccessExecutionRole"),
                managed_policy("AmazonEC2ContainerRegistryReadOnly"),
                f"Policy::{ecr_public_policy}",
            ),
        )
        handler_arn = self.get_logical_id(handler.node.default_child)  # type: ignore[arg-type]
        acknowledge(kubectl, "IAM5", KUBECTL_WILDCARD, (f"Resource::<{handler_arn}.Arn>:*",))
        acknowledge(kubectl, "L1", KUBECTL_RUNTIME)

    def _add_core_addons(self) -> None:
        pins = {**CORE_ADDONS, **self.config.addon_versions}
        for name, version in pins.items():
            if name == "eks-pod-identity-agent":
                # aws_eks_v2 owns this add-on (service accounts with Pod Identity reuse it): pin it in place.
                agent = self.cluster.eks_pod_identity_agent
                if version and agent is not None:
                    agent.node.default_child.add_property_override("AddonVersion", version)  # type: ignore[union-attr]
                continue
            addon = eks.Addon(
                self,
                f"Addon-{name}",
                cluster=self.cluster,
                addon_name=name,
                addon_version=version,
                preserve_on_delete=False,
            )
            if name == "vpc-cni" and self.network_policies:
                # The VPC CNI enforces NetworkPolicies only with its agent on: the add-on's configuration value
                # ``enableNetworkPolicy`` (EKS user guide, "Configure your cluster for Kubernetes network
                # policies"); without it every policy is accepted and ignored.
                addon.node.default_child.add_property_override(  # type: ignore[union-attr]
                    "ConfigurationValues", json.dumps({"enableNetworkPolicy": "true"})
                )

    def _add_system_nodegroup(self, subnets: ec2.SubnetSelection) -> eks.Nodegroup:
        nodes = self.config.system_nodes
        template = ec2.LaunchTemplate(
            self,
            "SystemNodeTemplate",
            require_imdsv2=True,
            http_put_response_hop_limit=1,
            block_devices=[
                ec2.BlockDevice(
                    device_name="/dev/xvda",
                    volume=ec2.BlockDeviceVolume.ebs(
                        nodes.disk_size_gib, volume_type=ec2.EbsDeviceVolumeType.GP3, encrypted=True
                    ),
                )
            ],
        )
        nodegroup = self.cluster.add_nodegroup_capacity(
            "SystemNodes",
            instance_types=[ec2.InstanceType(t) for t in nodes.instance_types],
            ami_type=eks.NodegroupAmiType.AL2023_X86_64_STANDARD,
            capacity_type=_CAPACITY[nodes.capacity_type],
            min_size=nodes.min_size,
            desired_size=nodes.desired_size,
            max_size=nodes.max_size,
            subnets=subnets,
            labels={POOL_LABEL: SYSTEM_POOL},
            launch_template_spec=eks.LaunchTemplateSpec(
                id=template.launch_template_id or "", version=template.latest_version_number
            ),
        )
        acknowledge(
            nodegroup.role,
            "IAM4",
            EKS_NODE_POLICIES,
            tuple(
                managed_policy(name)
                for name in ("AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly")
            ),
        )
        return nodegroup
