"""aws-cdk-lib stacks: network, cluster (and, in later layers, compute, storage, workloads).

Use :func:`build_platform` for the whole platform from one config, or the stacks on their own — for example
:class:`ClusterStack` in your own VPC.
"""

from inferstack.stacks.cluster import ClusterStack
from inferstack.stacks.network import NetworkStack
from inferstack.stacks.platform import Platform, build_platform

__all__ = ["ClusterStack", "NetworkStack", "Platform", "build_platform"]
