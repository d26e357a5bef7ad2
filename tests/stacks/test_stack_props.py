"""The compute and storage stacks take their own config section (not the whole platform config) plus the VPC and
cluster they go onto: usable on a team's own VPC and cluster, with zones pinned by name resolved against that VPC."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_eks_v2 as eks
from aws_cdk.assertions import Template

from inferstack.config.compute import ComputeConfig
from inferstack.config.storage import FsxConfig, StorageConfig
from inferstack.stacks import ComputeStack, StorageStack
from tests.synth import cdk_context

ZONES = ["us-west-2a", "us-west-2b"]


def team_cluster(app: cdk.App) -> tuple[ec2.IVpc, eks.ICluster]:
    base = cdk.Stack(app, "team-base", env=cdk.Environment(account="111122223333", region="us-west-2"))
    vpc = ec2.Vpc(base, "Vpc", availability_zones=ZONES)
    provider = eks.KubectlProvider.from_kubectl_provider_attributes(
        base, "Kubectl", service_token="arn:aws:lambda:us-west-2:111122223333:function:kubectl"
    )
    cluster = eks.Cluster.from_cluster_attributes(
        base,
        "Cluster",
        cluster_name="team-cluster",
        cluster_security_group_id="sg-0123456789abcdef0",
        kubectl_provider=provider,
        vpc=vpc,
    )
    return vpc, cluster


def env() -> cdk.Environment:
    return cdk.Environment(account="111122223333", region="us-west-2")


def test_storage_stack_puts_fsx_in_the_zone_named():
    app = cdk.App(context=cdk_context())
    vpc, cluster = team_cluster(app)
    storage = StorageConfig(fsx=FsxConfig(availability_zone="us-west-2b"))
    stack = StorageStack(app, "team-storage", config=storage, vpc=vpc, cluster=cluster, env=env())
    (file_system,) = Template.from_stack(stack).find_resources("AWS::FSx::FileSystem").values()
    (subnet,) = file_system["Properties"]["SubnetIds"]
    assert "PrivateSubnet2" in str(subnet), "the second zone's private subnet"


def test_a_zone_the_vpc_does_not_have_is_an_error_naming_the_valid_ones():
    app = cdk.App(context=cdk_context())
    vpc, cluster = team_cluster(app)
    storage = StorageConfig(fsx=FsxConfig(availability_zone="us-west-2c"))
    with pytest.raises(ValueError, match=r"'us-west-2c' is not one of the VPC's zones — valid: us-west-2a, us-west-2b"):
        StorageStack(app, "team-storage", config=storage, vpc=vpc, cluster=cluster, env=env())


def test_compute_stack_pins_a_pool_by_zone_name():
    app = cdk.App(context=cdk_context())
    vpc, cluster = team_cluster(app)
    compute = ComputeConfig.model_validate(
        {
            "node_groups": [
                {"name": "p5", "instance_type": "p5.48xlarge", "efa": True, "availability_zone": "us-west-2b"}
            ]
        }
    )
    stack = ComputeStack(
        app, "team-compute", config=compute, vpc=vpc, cluster=cluster, cluster_name="team-cluster", env=env()
    )
    (group,) = Template.from_stack(stack).find_resources("AWS::EKS::Nodegroup").values()
    (subnet,) = group["Properties"]["Subnets"]
    assert "PrivateSubnet2" in str(subnet)


@pytest.mark.parametrize("stack", ["NetworkStack", "ClusterStack", "ComputeStack", "StorageStack", "WorkloadsStack"])
def test_no_stack_takes_the_whole_platform_config(stack):
    """Each stack takes its slice: a config section, or (workloads) the plan's :class:`WorkloadsPlan`."""
    import typing

    from inferstack import stacks
    from inferstack.config.model import InferstackConfig

    hints = typing.get_type_hints(getattr(stacks, stack).__init__)
    assert InferstackConfig not in hints.values(), f"{stack}({[k for k, v in hints.items() if v is InferstackConfig]})"


def test_the_workloads_stack_reads_the_plan_not_the_config():
    import inspect

    from inferstack.plan.workloads import WorkloadsPlan
    from inferstack.stacks import WorkloadsStack, workload_operators, workloads

    assert typing_hint(WorkloadsStack.__init__, "plan") is WorkloadsPlan
    for module in (workloads, workload_operators):
        source = inspect.getsource(module)
        assert "InferstackConfig" not in source and "resolve(" not in source, module.__name__


def typing_hint(function, name: str):
    import typing

    return typing.get_type_hints(function)[name]
