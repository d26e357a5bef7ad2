"""GIVEN a team's own CDK app (examples/existing_cluster_app.py) that builds its VPC and cluster, WHEN inferstack's
stacks are added onto them, THEN they configure that cluster — and the app synthesizes with every gate green."""

from __future__ import annotations

import importlib.util
import json

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from inferstack.cli import json_property, kubernetes_objects
from inferstack.rules import evaluate
from tests.gates.test_function import external, pod_security_problems, reference_problems
from tests.synth import ROOT, cdk_context

HELM = "Custom::AWSCDK-EKS-HelmChart"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("existing_cluster_app", ROOT / "examples" / "existing_cluster_app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    app = cdk.App(context=cdk_context())
    _, platform = module.build(app)
    templates = {s.stack_name: Template.from_stack(s).to_json() for s in platform.stacks}
    return module, platform, templates


def test_only_compute_storage_and_workloads_stacks(example):
    _, platform, templates = example
    assert platform.network is None and platform.cluster is None
    assert sorted(templates) == ["team-llm-compute", "team-llm-storage", "team-llm-workloads"]


def test_karpenter_is_configured_for_that_cluster(example):
    module, _, templates = example
    compute = templates["team-llm-compute"]["Resources"]
    (chart,) = [
        r["Properties"] for r in compute.values() if r["Type"] == HELM and r["Properties"]["Chart"] == "karpenter"
    ]
    assert json_property(chart["Values"])["settings"]["clusterName"] == module.CLUSTER_NAME
    policies = json.dumps([r for r in compute.values() if r["Type"] == "AWS::IAM::ManagedPolicy"])
    assert f"kubernetes.io/cluster/{module.CLUSTER_NAME}" in policies


def test_priority_classes_come_with_the_workloads(example):
    _, _, templates = example
    objects = [o for t in templates.values() for o in kubernetes_objects(t)]
    assert {o["metadata"]["name"] for o in objects if o["kind"] == "PriorityClass"} == {
        "inferstack-serving",
        "inferstack-batch",
    }


def test_every_gate_holds(example):
    module, _, templates = example
    from inferstack.config import parse_config

    config = parse_config(module.CONFIG)
    assert evaluate(config).errors == []
    objects = [o for t in templates.values() for o in kubernetes_objects(t)]
    assert reference_problems(objects, config) == []
    assert pod_security_problems(objects) == []
    assert external(config).namespaces  # the team's namespace is created by inferstack (not in existing ones)


def test_partial_cluster_arguments_are_refused():
    from inferstack.config import parse_config
    from inferstack.stacks import build_platform

    with pytest.raises(ValueError, match="together"):
        build_platform(cdk.App(), parse_config({}), cluster_name="x")


class TestATeamsClusterWithItsOwnAddOns:
    """Defect: on a team's cluster inferstack created the Mountpoint/FSx CSI add-ons unconditionally (and EBS CSI,
    cert-manager, metrics-server without a word that they can be turned off): a cluster that already runs one
    fails the deploy with "Addon already exists"; an imported cluster without its security group ended in jsii's
    ClusterSecurityGroupIdDefined traceback."""

    def _platform(self, config_changes: dict, cluster_factory=None):
        from inferstack.config import parse_config
        from inferstack.stacks import build_platform

        spec = importlib.util.spec_from_file_location(
            "existing_cluster_app", ROOT / "examples" / "existing_cluster_app.py"
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        config = parse_config({**module.CONFIG, **config_changes})
        app = cdk.App(context=cdk_context())
        if cluster_factory is None:
            _, platform = module.build(app, config)
        else:
            base = cdk.Stack(app, "team-base")
            from aws_cdk import aws_ec2 as ec2

            vpc = ec2.Vpc(base, "Vpc", max_azs=2, nat_gateways=1)
            platform = build_platform(app, config, vpc=vpc, cluster=cluster_factory(base), cluster_name="team-llm")
        return {s.stack_name: Template.from_stack(s).to_json() for s in platform.stacks}

    def test_the_csi_add_ons_can_be_left_to_the_cluster(self):
        off = {"storage": {"install_csi_drivers": False}, "observability": {"install_ebs_csi_driver": False}}
        templates = self._platform(off)
        addons = [r for t in templates.values() for r in t["Resources"].values() if r["Type"] == "AWS::EKS::Addon"]
        assert not [a for a in addons if "csi" in a["Properties"]["AddonName"]]
        outputs = templates["team-llm-storage"]["Outputs"]
        assert any(k.startswith("AwsMountpointS3CsiDriverRoleArn") for k in outputs)
        on = self._platform({})
        names = {
            r["Properties"]["AddonName"]
            for t in on.values()
            for r in t["Resources"].values()
            if r["Type"] == "AWS::EKS::Addon"
        }
        assert "aws-mountpoint-s3-csi-driver" in names

    def test_an_imported_cluster_without_its_security_group_is_a_named_error(self):
        from aws_cdk import aws_eks_v2 as eks
        from aws_cdk.lambda_layer_kubectl_v36 import KubectlV36Layer

        def imported(scope):
            """The team's cluster as another app sees it: name and kubectl provider, no security group."""
            own = eks.Cluster(
                scope,
                "Own",
                version=eks.KubernetesVersion.V1_36,
                kubectl_provider_options=eks.KubectlProviderOptions(kubectl_layer=KubectlV36Layer(scope, "Kubectl")),
                default_capacity_type=eks.DefaultCapacityType.NODEGROUP,
                default_capacity=0,
            )
            return eks.Cluster.from_cluster_attributes(
                scope, "Cluster", cluster_name="team-llm", kubectl_provider=own.kubectl_provider
            )

        with pytest.raises(ValueError, match="cluster_security_group_id is not set"):
            self._platform({}, cluster_factory=imported)
