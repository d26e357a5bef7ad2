"""build_platform: every inferstack stack for one config, wired with explicit cross-stack references."""

from __future__ import annotations

from dataclasses import dataclass

import aws_cdk as cdk
from constructs import Construct

from inferstack.config.model import InferstackConfig
from inferstack.stacks.cluster import ClusterStack
from inferstack.stacks.compute import ComputeStack
from inferstack.stacks.network import NetworkStack

PLATFORM_TAG = "inferstack:platform"


@dataclass(frozen=True)
class Platform:
    """The stacks of one platform, in deployment order."""

    network: NetworkStack
    cluster: ClusterStack
    compute: ComputeStack | None = None

    @property
    def stacks(self) -> list[cdk.Stack]:
        return [s for s in (self.network, self.cluster, self.compute) if s is not None]


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
            env=env,
            description=f"inferstack {config.name}: accelerated node groups, Karpenter pools, GPU/Neuron/EFA plugins",
        )
    platform = Platform(network=network, cluster=cluster, compute=compute)
    for stack in platform.stacks:
        cdk.Tags.of(stack).add(PLATFORM_TAG, config.name)
        for key, value in sorted(config.tags.items()):
            cdk.Tags.of(stack).add(key, value)
    return platform
