"""A team's own CDK app: inferstack's compute, storage and workloads stacks onto a VPC and an EKS cluster the team
already runs, imported by their attributes (no inferstack network or cluster stack).

    PYTHONPATH=. npx cdk synth --app ".venv/bin/python examples/existing_cluster_app.py" \\
        -c vpc_id=vpc-… -c private_subnet_ids=subnet-…,subnet-… -c availability_zones=us-west-2a,us-west-2b \\
        -c cluster_security_group_id=sg-… -c kubectl_service_token=arn:aws:lambda:…  (or pip install inferstack)

Without ``-c`` values it synthesizes against the placeholders of :data:`ATTRIBUTES`. What inferstack reads of
the team's cluster (:class:`TeamCluster`, every field required; a missing one is a named error):

- ``cluster_name``: its literal EKS name (IAM conditions, Pod Identity associations, Karpenter's settings);
- ``cluster_security_group_id``: the EKS console's "Cluster security group" (inferstack's node groups,
  Karpenter's nodes and FSx attach to it);
- ``kubectl_service_token`` (and ``kubectl_role_arn``, the role the provider's Lambda assumes, when it needs one):
  the cluster's kubectl provider, through which every manifest and Helm chart goes;
- ``vpc_id``, ``private_subnet_ids``, ``availability_zones``: where the nodes and FSx go.

The cluster must also run the EKS Pod Identity agent and a system node group labelled
``inferstack.io/pool: system``. On a team's cluster the add-ons clusters usually run already (the CSI drivers,
cert-manager, metrics-server, kube-prometheus-stack, Karpenter, the GPU operator, the Neuron and EFA plugins) are
off unless the config turns them on; this config's pools go to the cluster's own Karpenter, whose node role it
names.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_eks_v2 as eks
from aws_cdk import aws_iam as iam

from inferstack.config import InferstackConfig, parse_config
from inferstack.stacks import Platform, build_platform

#: inferstack's part: one Karpenter GPU pool (for the cluster's own Karpenter) and one model.
CONFIG = {
    "name": "team-llm",
    "compute": {
        "karpenter_pools": [{"name": "gpu", "instance_families": ["g6e"]}],
        "karpenter_node_role": "KarpenterNodeRole-team-llm",
        "gpu_operator": {"install": True},  # the team's cluster has no GPU operator yet
    },
    "workloads": [{"name": "qwen", "namespace": "team-ml", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}}],
}


@dataclass(frozen=True)
class TeamCluster:
    """The attributes of the team's VPC and cluster that inferstack reads (see the module docstring)."""

    cluster_name: str
    cluster_security_group_id: str
    kubectl_service_token: str
    kubectl_role_arn: str
    vpc_id: str
    private_subnet_ids: tuple[str, ...]
    availability_zones: tuple[str, ...]

    @classmethod
    def from_context(cls, app: cdk.App, defaults: dict[str, str]) -> TeamCluster:
        """Each attribute from ``-c name=value`` (lists comma-separated), else from ``defaults``.

        :raises ValueError: naming every attribute neither gives."""
        values = {f.name: app.node.try_get_context(f.name) or defaults.get(f.name) for f in fields(cls)}
        missing = sorted(name for name, value in values.items() if not value and name != "kubectl_role_arn")
        if missing:
            raise ValueError(f"the team's cluster: set {', '.join(missing)} (cdk synth -c {missing[0]}=…)")
        for name in ("private_subnet_ids", "availability_zones"):
            values[name] = tuple(part.strip() for part in str(values[name]).split(",") if part.strip())
        if len(values["private_subnet_ids"]) != len(values["availability_zones"]):
            raise ValueError("the team's cluster: private_subnet_ids and availability_zones pair up, one per zone")
        return cls(**values)


#: Placeholders that let the example synthesize offline; a real deploy passes the team's values with ``-c``.
ATTRIBUTES = {
    "cluster_name": "team-llm",
    "cluster_security_group_id": "sg-0123456789abcdef0",
    "kubectl_service_token": "arn:aws:lambda:us-west-2:111122223333:function:team-llm-kubectl",
    "kubectl_role_arn": "arn:aws:iam::111122223333:role/team-llm-kubectl",
    "vpc_id": "vpc-0123456789abcdef0",
    "private_subnet_ids": "subnet-0123456789abcdef0,subnet-0fedcba9876543210",
    "availability_zones": "us-west-2a,us-west-2b",
}


def build(app: cdk.App, config: InferstackConfig | None = None) -> tuple[eks.ICluster, Platform]:
    """The team's VPC and cluster, imported into a stack of the app, then inferstack's stacks on that cluster."""
    team = TeamCluster.from_context(app, ATTRIBUTES)
    base = cdk.Stack(app, "team-base")  # holds only the imported references: nothing to deploy
    cdk.Validations.of(base).acknowledge(
        cdk.Acknowledgment(id="CloudFormation-Validate::F0001", reason="only references to the team's VPC and cluster")
    )
    vpc = ec2.Vpc.from_vpc_attributes(
        base,
        "Vpc",
        vpc_id=team.vpc_id,
        availability_zones=list(team.availability_zones),
        private_subnet_ids=list(team.private_subnet_ids),
    )
    provider = eks.KubectlProvider.from_kubectl_provider_attributes(
        base,
        "Kubectl",
        service_token=team.kubectl_service_token,
        role=iam.Role.from_role_arn(base, "KubectlRole", team.kubectl_role_arn) if team.kubectl_role_arn else None,
    )
    cluster = eks.Cluster.from_cluster_attributes(
        base,
        "Cluster",
        cluster_name=team.cluster_name,
        cluster_security_group_id=team.cluster_security_group_id,
        kubectl_provider=provider,
        vpc=vpc,
    )
    platform = build_platform(
        app, config or parse_config(CONFIG), vpc=vpc, cluster=cluster, cluster_name=team.cluster_name
    )
    return cluster, platform


if __name__ == "__main__":
    application = cdk.App()
    build(application)
    application.synth()
