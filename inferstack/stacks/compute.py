"""ComputeStack: accelerated managed node groups (EFA launch templates, placement groups, reservations),
Karpenter with its pools, and the operators / device plugins the configured accelerators need."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import aws_cdk as cdk
import cdk8s
from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_eks_v2 as eks
from constructs import Construct

from inferstack.catalog.efa_layout import launch_template_interfaces
from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.versions import DEFAULT_KUBERNETES_VERSION
from inferstack.charts.karpenter_pools import KarpenterPoolsChart, KarpenterPoolsProps, PoolPlacement
from inferstack.config.compute import AcceleratedNodeGroupConfig, AmiVariant, ComputeConfig, NodeCapacity, NodeDaemon
from inferstack.plan.placement import pool_labels, pool_node_taints
from inferstack.stacks.cluster_refs import cluster_security_group_id
from inferstack.stacks.delivery import HandedToGitOps, handed_to_gitops
from inferstack.stacks.karpenter import Karpenter
from inferstack.stacks.nag import EKS_NODE_POLICIES, acknowledge, managed_policy
from inferstack.stacks.operators import add_efa_device_plugin, add_gpu_operator, add_neuron_chart
from inferstack.stacks.zones import zone_subnet

#: CloudFormation ``AmiType`` per variant (CFN spelling; aws-cdk-lib's AMI check rejects p5/p5en/trn2 with the
#: right type, so the property is set on the CFN resource directly — see TOOLCHAIN.md).
CFN_AMI_TYPE: dict[AmiVariant, str] = {
    AmiVariant.AL2023_NVIDIA: "AL2023_x86_64_NVIDIA",
    AmiVariant.AL2023_NEURON: "AL2023_x86_64_NEURON",
    AmiVariant.AL2023_STANDARD: "AL2023_x86_64_STANDARD",
    AmiVariant.BOTTLEROCKET_NVIDIA: "BOTTLEROCKET_x86_64_NVIDIA",
    AmiVariant.BOTTLEROCKET: "BOTTLEROCKET_x86_64",
}
_CAPACITY: dict[NodeCapacity, eks.CapacityType] = {
    NodeCapacity.ON_DEMAND: eks.CapacityType.ON_DEMAND,
    NodeCapacity.SPOT: eks.CapacityType.SPOT,
    NodeCapacity.CAPACITY_BLOCK: eks.CapacityType.CAPACITY_BLOCK,
    NodeCapacity.RESERVED: eks.CapacityType.ON_DEMAND,
}


def add_chart_manifest(
    scope: Construct,
    construct_id: str,
    cluster: eks.ICluster,
    chart: cdk8s.Chart,
    *,
    durable: bool = False,
    rendered: list[Any] | None = None,
    overwrite: bool = False,
) -> Construct:
    """Apply a cdk8s chart through ``cluster``'s kubectl provider, owned by ``scope``'s stack. ``rendered``: the
    chart's ``to_json()`` when the caller has it already (it is not rendered twice). Default: rendered here.

    ``durable``: for objects whose deletion destroys what others put inside them (Namespaces: every object and
    Secret in them). Such a manifest is never pruned (an object left out of a later version stays on the cluster,
    unmanaged) and is retained when the resource is removed from the template. Default False.

    ``overwrite``: ``kubectl apply`` objects that exist (another stack's manifest may have held them before: a
    workload's NetworkPolicies move with its shard). Default False (``kubectl create``).

    In a stack that hands its Kubernetes side to GitOps, a :class:`~inferstack.stacks.delivery.HandedToGitOps`
    (nothing applied)."""
    if handed_to_gitops(scope):
        return HandedToGitOps(scope, construct_id)
    manifest = eks.KubernetesManifest(
        scope,
        construct_id,
        cluster=cluster,
        manifest=chart.to_json() if rendered is None else rendered,
        prune=False if durable else None,
        overwrite=overwrite or None,
    )
    if durable:
        resource = manifest.node.find_child("Resource")
        assert isinstance(resource, cdk.CustomResource)
        resource.apply_removal_policy(cdk.RemovalPolicy.RETAIN)
    return manifest


class ComputeStack(Stack):
    """Accelerated capacity for the cluster of ``ClusterStack``, from the ``compute`` section of the config.

    * node groups: one instance type each, AL2023 NVIDIA/Neuron AMI (or Bottlerocket), accelerator taint and
      labels, encrypted gp3 root volume, IMDSv2; EFA groups sit in one subnet with every EFA interface of the type
      (:mod:`inferstack.catalog.efa_layout`), a security group open to itself and a cluster placement group;
    * Karpenter (when pools are configured, unless ``install_karpenter`` is off) and one EC2NodeClass + NodePool
      per pool;
    * GPU operator / Neuron chart / EFA device plugin, each only when a pool needs it and its ``install`` is on.

    :param cluster: the cluster (``ClusterStack.cluster``, or a team's own, imported with
        ``eks.Cluster.from_cluster_attributes``).
    :param cluster_name: its EKS name as a literal string (Karpenter's settings and IAM condition keys use it).
    :param kubernetes_version: the cluster's minor version (the Neuron scheduler's kube-scheduler image follows it).
        Default: the catalog's default.
    :param zones: the VPC's zones in order, for pools pinned by zone name. Default: ``vpc.availability_zones``.
    :param platform_name: tagged on Karpenter's instances (``inferstack:platform``). Default ``inferstack``.
    :param instance_tags: more tags for Karpenter's instances and volumes (the EC2NodeClasses' ``spec.tags``), e.g.
        the config's ``tags`` for cost allocation: CloudFormation's tags never reach what Karpenter launches.
        Default none.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: ComputeConfig,
        vpc: ec2.IVpc,
        cluster: eks.ICluster,
        cluster_name: str,
        kubernetes_version: str = DEFAULT_KUBERNETES_VERSION,
        zones: Sequence[str] | None = None,
        platform_name: str = "inferstack",
        instance_tags: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.config = config
        self.vpc = vpc
        self.cluster = cluster
        self.cluster_name = cluster_name
        self.zones = zones
        self.platform_name = platform_name
        self.instance_tags = dict(instance_tags or {})
        compute = config
        self.efa_security_group = self._efa_security_group() if compute.has_efa else None
        self.node_groups = {g.name: self._add_node_group(g) for g in compute.node_groups}
        self.operators: dict[str, Construct] = {}
        if compute.has(AcceleratorKind.NVIDIA) and compute.gpu_operator.install:
            tolerations = compute.daemon_tolerations(NodeDaemon.GPU_OPERATOR)
            self.operators["gpu-operator"] = add_gpu_operator(self, cluster, tolerations)
        if compute.has(AcceleratorKind.NEURON) and compute.neuron_plugin.install:
            tolerations = compute.daemon_tolerations(NodeDaemon.NEURON_PLUGIN)
            self.operators["neuron"] = add_neuron_chart(self, cluster, tolerations, kubernetes_version)
        if compute.has_efa and compute.efa_plugin.install:
            self.operators["efa"] = add_efa_device_plugin(
                self, cluster, compute.daemon_tolerations(NodeDaemon.EFA_PLUGIN)
            )
        self.karpenter: Karpenter | None = None
        self.pools_manifest: Construct | None = None
        if compute.karpenter_pools:
            self._add_karpenter()

    # -- helpers -------------------------------------------------------------------------------------------------
    def _subnets(self, zone: str | int | None) -> list[ec2.ISubnet]:
        if zone is None:
            return list(self.vpc.private_subnets)
        return [zone_subnet(self.vpc, zone, self.zones, "ComputeStack")]

    def _efa_security_group(self) -> ec2.SecurityGroup:
        group = ec2.SecurityGroup(
            self,
            "EfaSecurityGroup",
            vpc=self.vpc,
            description="EFA: all traffic to and from members of this group (required by EFA)",
            allow_all_outbound=True,
        )
        group.add_ingress_rule(group, ec2.Port.all_traffic(), "EFA: all inbound from itself")
        # Covered by allow-all-outbound too; stated explicitly because EFA requires it (and a later tightening of
        # outbound rules must keep it).
        ec2.CfnSecurityGroupEgress(
            self,
            "EfaSelfEgress",
            group_id=group.security_group_id,
            ip_protocol="-1",
            destination_security_group_id=group.security_group_id,
            description="EFA: all outbound to itself",
        )
        return group

    def _placement_group(self, name: str) -> ec2.CfnPlacementGroup:
        return ec2.CfnPlacementGroup(self, f"PlacementGroup-{name}", strategy="cluster")

    # -- managed node groups --------------------------------------------------------------------------------------
    def _launch_template(self, group: AcceleratedNodeGroupConfig) -> ec2.CfnLaunchTemplate:
        bottlerocket = group.ami_variant in (AmiVariant.BOTTLEROCKET, AmiVariant.BOTTLEROCKET_NVIDIA)
        data: dict[str, Any] = {
            "MetadataOptions": {"HttpEndpoint": "enabled", "HttpTokens": "required", "HttpPutResponseHopLimit": 1},
            "BlockDeviceMappings": [
                {
                    # Bottlerocket keeps images and containers on its data volume, /dev/xvdb.
                    "DeviceName": "/dev/xvdb" if bottlerocket else "/dev/xvda",
                    "Ebs": {
                        "VolumeSize": group.disk_size_gib,
                        "VolumeType": "gp3",
                        "Encrypted": True,
                        "DeleteOnTermination": True,
                    },
                }
            ],
        }
        if group.efa:
            groups = [cluster_security_group_id(self.cluster), self.efa_security_group.security_group_id]  # type: ignore[union-attr]
            data["NetworkInterfaces"] = [
                {
                    "NetworkCardIndex": i.network_card_index,
                    "DeviceIndex": i.device_index,
                    "InterfaceType": i.interface_type,
                    "Groups": groups,
                    "DeleteOnTermination": True,
                }
                for i in launch_template_interfaces(group.instance)
            ]
        if group.uses_placement_group:
            data["Placement"] = {"GroupName": self._placement_group(group.name).ref}
        if group.capacity_reservation_id:
            data["CapacityReservationSpecification"] = {
                "CapacityReservationTarget": {"CapacityReservationId": group.capacity_reservation_id}
            }
        if group.capacity_type is NodeCapacity.CAPACITY_BLOCK:
            data["InstanceMarketOptions"] = {"MarketType": "capacity-block"}
        template = ec2.CfnLaunchTemplate(self, f"LaunchTemplate-{group.name}", launch_template_data={})
        # CloudFormation spelling, set verbatim (the L1 struct drops keys it does not know, e.g. InterfaceType).
        template.add_property_override("LaunchTemplateData", data)
        return template

    def _add_node_group(self, group: AcceleratedNodeGroupConfig) -> eks.Nodegroup:
        template = self._launch_template(group)
        taints = [
            eks.TaintSpec(effect=_TAINT_EFFECT[t.effect], key=t.key, value=t.value) for t in pool_node_taints(group)
        ]
        nodegroup = eks.Nodegroup(
            self,
            f"NodeGroup-{group.name}",
            cluster=self.cluster,
            instance_types=[ec2.InstanceType(group.instance_type)],
            subnets=ec2.SubnetSelection(subnets=self._subnets(group.availability_zone)),
            min_size=group.min_size,
            desired_size=group.desired_size,
            max_size=group.max_size,
            labels=pool_labels(group),
            taints=taints,
            capacity_type=_CAPACITY[group.capacity_type],
            launch_template_spec=eks.LaunchTemplateSpec(id=template.ref, version=template.attr_latest_version_number),
        )
        nodegroup.node.default_child.add_property_override("AmiType", CFN_AMI_TYPE[group.ami_variant])  # type: ignore[union-attr]
        acknowledge(
            nodegroup.role,
            "IAM4",
            EKS_NODE_POLICIES,
            tuple(
                managed_policy(n)
                for n in ("AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly")
            ),
        )
        return nodegroup

    # -- Karpenter -----------------------------------------------------------------------------------------------
    def _add_karpenter(self) -> None:
        """inferstack's pools (an EC2NodeClass and a NodePool each), with the Karpenter inferstack installs — or,
        with ``install_karpenter`` off, for the cluster's own Karpenter and its ``karpenter_node_role``."""
        if self.config.install_karpenter:
            self.karpenter = Karpenter(self, "Karpenter", cluster=self.cluster, cluster_name=self.cluster_name)
            node_role = self.karpenter.node_role.role_name
        else:
            assert self.config.karpenter_node_role is not None  # ComputeConfig requires it then
            node_role = self.config.karpenter_node_role
        placements: dict[str, PoolPlacement] = {}
        for pool in self.config.karpenter_pools:
            subnets = self._subnets(pool.availability_zone)
            groups = [cluster_security_group_id(self.cluster)]
            if pool.efa and self.efa_security_group is not None:
                groups.append(self.efa_security_group.security_group_id)
            placements[pool.name] = PoolPlacement(
                subnet_ids=[s.subnet_id for s in subnets],
                zone=subnets[0].availability_zone if pool.availability_zone is not None else None,
                security_group_ids=groups,
                placement_group=self._placement_group(pool.name).ref if pool.uses_placement_group else None,
            )
        chart = KarpenterPoolsChart(
            cdk8s.App(),
            "karpenter-pools",
            KarpenterPoolsProps(
                pools=self.config.karpenter_pools,
                placements=placements,
                node_role_name=node_role,
                tags={**self.instance_tags, "inferstack:platform": self.platform_name},
            ),
        )
        #: The EC2NodeClasses and NodePools as rendered (cdk8s), before they become the manifest below.
        self.pools_chart = chart
        self.pools_manifest = add_chart_manifest(self, "KarpenterPools", self.cluster, chart)
        if self.karpenter is not None:
            self.pools_manifest.node.add_dependency(self.karpenter.chart)


_TAINT_EFFECT = {
    "NoSchedule": eks.TaintEffect.NO_SCHEDULE,
    "PreferNoSchedule": eks.TaintEffect.PREFER_NO_SCHEDULE,
    "NoExecute": eks.TaintEffect.NO_EXECUTE,
}
