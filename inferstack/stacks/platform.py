"""build_platform: every inferstack stack for one config, wired with explicit cross-stack references."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_eks_v2 as eks
from constructs import Construct

from inferstack.config.errors import ConfigError, Problem
from inferstack.config.existing_cluster import on_a_teams_cluster
from inferstack.config.model import InferstackConfig
from inferstack.plan.workloads import workloads_plan
from inferstack.rules import enforce
from inferstack.stacks.cluster import ClusterStack
from inferstack.stacks.compute import ComputeStack
from inferstack.stacks.nag import add_nag
from inferstack.stacks.network import NetworkStack
from inferstack.stacks.storage import StorageStack
from inferstack.stacks.workloads import (
    WorkloadsStack,
    render_workloads,
    shard_workloads,
    shared_chart_bytes,
    with_policies,
)

PLATFORM_TAG = "inferstack:platform"


@dataclass(frozen=True)
class Platform:
    """The stacks of one platform, in deployment order (``network`` and ``cluster`` are None on a team's own
    VPC and cluster)."""

    network: NetworkStack | None
    cluster: ClusterStack | None
    compute: ComputeStack | None = None
    storage: StorageStack | None = None
    workloads: tuple[WorkloadsStack, ...] = ()
    """Workloads stacks: the first owns namespaces and operators; more appear when charts outgrow one template."""

    @property
    def stacks(self) -> list[cdk.Stack]:
        candidates = (self.network, self.cluster, self.compute, self.storage, *self.workloads)
        return [s for s in candidates if s is not None]


def _environment(config: InferstackConfig) -> cdk.Environment | None:
    if config.env.account is None and config.env.region is None:
        return None
    return cdk.Environment(account=config.env.account, region=config.env.region)


def build_platform(
    scope: Construct,
    config: InferstackConfig,
    *,
    vpc: ec2.IVpc | None = None,
    cluster: eks.ICluster | None = None,
    cluster_name: str | None = None,
    nag: bool = True,
) -> Platform:
    """Add the platform's stacks to ``scope`` (an App or Stage), after the same checks ``cdk synth`` of app.py and
    ``inferstack check`` run: every rule first (:class:`~inferstack.rules.RuleViolationError`, listing every
    error with its config path, before any construct is created; warnings are printed on stderr), then, with
    ``nag`` (default True), cdk-nag's AwsSolutions pack over the stacks it adds at synth (an unacknowledged finding
    fails ``app.synth()``; a team's own stacks in the same app are not judged). There is no way around the rules
    but the config's own ``acknowledge``.

    By default inferstack builds the network and the cluster (``<name>-network``, ``<name>-cluster``). Pass a
    team's own ``vpc``, ``cluster`` (with a kubectl provider and the EKS Pod Identity agent) and its literal
    ``cluster_name`` to add only the compute, storage and workloads stacks onto them; the first workloads stack
    then also applies inferstack's PriorityClasses. On such a cluster, the add-ons a cluster usually runs already
    (:data:`~inferstack.config.existing_cluster.OFF_ON_A_TEAMS_CLUSTER`: the CSI drivers, cert-manager,
    metrics-server, kube-prometheus-stack, Karpenter, the GPU operator, the Neuron and EFA plugins) are installed
    only where the config turns them on.
    """
    if cluster is not None:  # a team's own cluster runs its add-ons: inferstack installs them only when told to
        config = on_a_teams_cluster(config)
    elif config.compute.karpenter_node_role is not None:
        raise ConfigError(
            "config",
            [
                Problem(
                    "compute.karpenter_node_role",
                    "read only on a team's own cluster (build_platform with cluster=), whose Karpenter launches the "
                    "nodes; inferstack's cluster gets inferstack's Karpenter and its node role — remove it",
                    config.compute.karpenter_node_role,
                )
            ],
        )
    report = enforce(config)
    for finding in report.warnings:
        print(f"warning: {finding}", file=sys.stderr)
    own = (vpc, cluster, cluster_name)
    if any(v is not None for v in own) and not all(v is not None for v in own):
        raise ValueError("build_platform: pass vpc, cluster and cluster_name together (a team's own cluster), or none")
    env = _environment(config)
    network = cluster_stack = None
    if cluster is None:
        network = NetworkStack(
            scope,
            f"{config.name}-network",
            config=config.network,
            env=env,
            description=f"inferstack {config.name}: VPC, subnets, NAT, S3 endpoint, flow logs",
        )
        cluster_stack = ClusterStack(
            scope,
            f"{config.name}-cluster",
            vpc=network.vpc,
            config=config.cluster,
            cluster_name=config.cluster_name,
            network_policies=config.network_policies.enabled,
            log_retention_days=config.observability.log_retention_days if config.observability.log_shipping else None,
            log_pod_exclusion=config.observability.log_pod_exclusion,
            env=env,
            description=f"inferstack {config.name}: EKS cluster {config.cluster_name}, add-ons, system nodes",
        )
        vpc, cluster, cluster_name = network.vpc, cluster_stack.cluster, config.cluster_name
    assert vpc is not None and cluster is not None and cluster_name is not None
    compute = None
    if config.compute.pools:
        compute = ComputeStack(
            scope,
            f"{config.name}-compute",
            config=config.compute,
            vpc=vpc,
            cluster=cluster,
            cluster_name=cluster_name,
            kubernetes_version=config.cluster.kubernetes_version,
            zones=config.network.availability_zones,
            platform_name=config.name,
            instance_tags=config.tags,
            env=env,
            description=f"inferstack {config.name}: accelerated node groups, Karpenter pools, GPU/Neuron/EFA plugins",
        )
    storage = None
    if config.storage.model_bucket is not None or config.storage.fsx is not None or config.storage.efs is not None:
        storage = StorageStack(
            scope,
            f"{config.name}-storage",
            config=config.storage,
            vpc=vpc,
            cluster=cluster,
            cluster_name=cluster_name,
            zones=config.network.availability_zones,
            env=env,
            description=f"inferstack {config.name}: model bucket, FSx for Lustre, S3/FSx CSI drivers (data retained)",
        )
    workloads: list[WorkloadsStack] = []
    if config.workloads:
        plan = workloads_plan(config)
        rendered = with_policies(plan, render_workloads(plan, storage))
        shards = shard_workloads(rendered, reserved_first=shared_chart_bytes(plan))
        for index, shard in enumerate(shards):
            suffix = "" if index == 0 else f"-{index + 1}"
            stack = WorkloadsStack(
                scope,
                f"{config.name}-workloads{suffix}",
                plan=plan,
                cluster=cluster,
                storage=storage,
                workloads=shard,
                primary=workloads[0] if workloads else None,
                platform_base=cluster_stack is None and index == 0,
                env=env,
                description=f"inferstack {config.name}: workloads {index + 1}/{len(shards)} (identities, Kubernetes "
                "objects)",
            )
            if compute is not None:
                stack.add_stack_dependency(compute)
            if workloads:
                stack.add_stack_dependency(workloads[0])
            workloads.append(stack)
    platform = Platform(
        network=network, cluster=cluster_stack, compute=compute, storage=storage, workloads=tuple(workloads)
    )
    for stack in platform.stacks:
        cdk.Tags.of(stack).add(PLATFORM_TAG, config.name)
        for key, value in sorted(config.tags.items()):
            cdk.Tags.of(stack).add(key, value)
    if nag:
        add_nag(_stage_of(scope), platform.stacks)
    return platform


def _stage_of(scope: Construct) -> Construct:
    """The App or Stage ``scope`` is in (validation plugins register there)."""
    stage = cdk.Stage.of(scope)
    return stage if stage is not None else scope
