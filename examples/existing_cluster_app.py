"""A team's own CDK app: it builds its VPC and EKS cluster itself and adds inferstack's compute, storage and
workloads stacks onto them (no inferstack network or cluster stack).

    PYTHONPATH=. npx cdk synth --app ".venv/bin/python examples/existing_cluster_app.py"  (or pip install inferstack)

What the team's cluster needs for inferstack: a kubectl provider (Helm charts and manifests go through it), a
system node group labelled ``inferstack.io/pool: system`` (controllers run there), and its literal name (IAM
conditions and Karpenter's settings use it). aws-cdk-lib adds the EKS Pod Identity agent add-on to the cluster
itself when inferstack binds the first service account to a role.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_eks_v2 as eks
from aws_cdk.lambda_layer_kubectl_v36 import KubectlV36Layer

from inferstack.config import InferstackConfig, parse_config
from inferstack.stacks import Platform, build_platform

CLUSTER_NAME = "team-llm"

#: inferstack's part: one Karpenter GPU pool and one model (every other section keeps its default).
CONFIG = {
    "name": "team-llm",
    "compute": {"karpenter_pools": [{"name": "gpu", "instance_families": ["g6e"]}]},
    "workloads": [{"name": "qwen", "namespace": "team-ml", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}}],
}


def build(app: cdk.App, config: InferstackConfig | None = None) -> tuple[eks.Cluster, Platform]:
    """The team's stack (VPC + cluster), then inferstack's stacks on that cluster."""
    base = cdk.Stack(app, "team-base")
    vpc = ec2.Vpc(base, "Vpc", max_azs=2, nat_gateways=1)
    cluster = eks.Cluster(
        base,
        "Cluster",
        cluster_name=CLUSTER_NAME,
        version=eks.KubernetesVersion.V1_36,
        vpc=vpc,
        kubectl_provider_options=eks.KubectlProviderOptions(kubectl_layer=KubectlV36Layer(base, "Kubectl")),
        default_capacity_type=eks.DefaultCapacityType.NODEGROUP,
        default_capacity=0,
    )
    cluster.add_nodegroup_capacity(
        "System", instance_types=[ec2.InstanceType("m6i.xlarge")], min_size=2, labels={"inferstack.io/pool": "system"}
    )
    platform = build_platform(app, config or parse_config(CONFIG), vpc=vpc, cluster=cluster, cluster_name=CLUSTER_NAME)
    return cluster, platform


if __name__ == "__main__":
    application = cdk.App()
    build(application)
    application.synth()
