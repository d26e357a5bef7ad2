"""What the stacks read of a cluster they did not create (a team's own, imported), with named errors."""

from __future__ import annotations

from aws_cdk import aws_eks_v2 as eks


def cluster_security_group_id(cluster: eks.ICluster) -> str:
    """The cluster security group's id (nodes, Karpenter's nodes and FSx share it).

    :raises ValueError: for an imported cluster without one, naming the attribute to pass — instead of jsii's
        ``ClusterSecurityGroupIdDefined`` error from deep inside a stack."""
    try:
        return cluster.cluster_security_group_id
    except RuntimeError as error:
        if "ClusterSecurityGroupIdDefined" not in str(error):
            raise
        raise ValueError(
            f"cluster {cluster.node.path}: cluster_security_group_id is not set — import the cluster with "
            "eks.Cluster.from_cluster_attributes(..., cluster_security_group_id='sg-…') (the EKS console's "
            "'Cluster security group'): inferstack's node groups, Karpenter's nodes and FSx attach to it"
        ) from None
