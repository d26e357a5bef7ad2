"""build_platform: every inferstack stack for one config, wired with explicit cross-stack references."""

from __future__ import annotations

from dataclasses import dataclass

import aws_cdk as cdk
from constructs import Construct

from inferstack.config.model import InferstackConfig
from inferstack.stacks.cluster import ClusterStack
from inferstack.stacks.compute import ComputeStack
from inferstack.stacks.network import NetworkStack
from inferstack.stacks.storage import StorageStack
from inferstack.stacks.workloads import WorkloadsStack, render_workloads, shard_workloads

PLATFORM_TAG = "inferstack:platform"


@dataclass(frozen=True)
class Platform:
    """The stacks of one platform, in deployment order."""

    network: NetworkStack
    cluster: ClusterStack
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


def build_platform(scope: Construct, config: InferstackConfig) -> Platform:
    """Add the platform's stacks (``<name>-network``, ``<name>-cluster``) to ``scope`` (an App or Stage)."""
    env = _environment(config)
    network = NetworkStack(
        scope,
        f"{config.name}-network",
        config=config.network,
        env=env,
        description=f"inferstack {config.name}: VPC, subnets, NAT, S3 endpoint, flow logs",
    )
    cluster = ClusterStack(
        scope,
        f"{config.name}-cluster",
        vpc=network.vpc,
        config=config.cluster,
        cluster_name=config.cluster_name,
        env=env,
        description=f"inferstack {config.name}: EKS cluster {config.cluster_name}, add-ons, system nodes",
    )
    compute = None
    if config.compute.pools:
        compute = ComputeStack(
            scope,
            f"{config.name}-compute",
            config=config,
            vpc=network.vpc,
            cluster=cluster.cluster,
            cluster_name=config.cluster_name,
            env=env,
            description=f"inferstack {config.name}: accelerated node groups, Karpenter pools, GPU/Neuron/EFA plugins",
        )
    storage = None
    if config.storage.model_bucket is not None or config.storage.fsx is not None:
        storage = StorageStack(
            scope,
            f"{config.name}-storage",
            config=config,
            vpc=network.vpc,
            cluster=cluster.cluster,
            env=env,
            description=f"inferstack {config.name}: model bucket, FSx for Lustre, S3/FSx CSI drivers (data retained)",
        )
    workloads: list[WorkloadsStack] = []
    if config.workloads:
        shards = shard_workloads(render_workloads(config, storage))
        for index, shard in enumerate(shards):
            suffix = "" if index == 0 else f"-{index + 1}"
            stack = WorkloadsStack(
                scope,
                f"{config.name}-workloads{suffix}",
                config=config,
                cluster=cluster.cluster,
                storage=storage,
                workloads=shard,
                primary=workloads[0] if workloads else None,
                env=env,
                description=f"inferstack {config.name}: workloads {index + 1}/{len(shards)} (identities, Kubernetes "
                "objects)",
            )
            if compute is not None:
                stack.add_stack_dependency(compute)
            if workloads:
                stack.add_stack_dependency(workloads[0])
            workloads.append(stack)
    platform = Platform(network=network, cluster=cluster, compute=compute, storage=storage, workloads=tuple(workloads))
    for stack in platform.stacks:
        cdk.Tags.of(stack).add(PLATFORM_TAG, config.name)
        for key, value in sorted(config.tags.items()):
            cdk.Tags.of(stack).add(key, value)
    return platform
