"""The baseline for `make bench`: a bare single-stack EKS app — VPC, aws_eks_v2 cluster, one managed node group."""

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_eks_v2 as eks

app = cdk.App()
stack = cdk.Stack(app, "bare-eks")
vpc = ec2.Vpc(stack, "Vpc", max_azs=2, nat_gateways=1)
cluster = eks.Cluster(
    stack,
    "Cluster",
    version=eks.KubernetesVersion.V1_36,
    vpc=vpc,
    default_capacity_type=eks.DefaultCapacityType.NODEGROUP,
    default_capacity=0,
)
cluster.add_nodegroup_capacity("Nodes", instance_types=[ec2.InstanceType("m6i.xlarge")], min_size=2)
app.synth()
