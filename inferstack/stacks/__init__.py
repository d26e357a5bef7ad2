"""aws-cdk-lib stacks: network, cluster, compute, storage, workloads.

Use :func:`build_platform` for the whole platform from one config, or the stacks on their own — for example
:class:`ClusterStack` in your own VPC, or :class:`ComputeStack` on your own (imported) cluster.
"""

from inferstack.stacks.cluster import ClusterStack
from inferstack.stacks.compute import ComputeStack
from inferstack.stacks.network import NetworkStack
from inferstack.stacks.platform import Platform, build_platform
from inferstack.stacks.storage import StorageStack
from inferstack.stacks.workloads import WorkloadsStack

__all__ = [
    "ClusterStack",
    "ComputeStack",
    "NetworkStack",
    "Platform",
    "StorageStack",
    "WorkloadsStack",
    "build_platform",
]
