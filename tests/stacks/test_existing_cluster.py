"""GIVEN a team's own CDK app (examples/existing_cluster_app.py) that builds its VPC and cluster, WHEN inferstack's
stacks are added onto them, THEN they configure that cluster — and the app synthesizes with every gate green."""

from __future__ import annotations

import importlib.util
import json

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from inferstack.cli import kubernetes_objects
from inferstack.rules import evaluate
from tests.gates.test_function import external, pod_security_problems, reference_problems
from tests.synth import ROOT, cdk_context

HELM = "Custom::AWSCDK-EKS-HelmChart"


def load_example():
    """examples/existing_cluster_app.py as a module (registered, as its dataclass needs)."""
    import sys

    if "existing_cluster_app" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "existing_cluster_app", ROOT / "examples" / "existing_cluster_app.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules["existing_cluster_app"] = module
        spec.loader.exec_module(module)
    return sys.modules["existing_cluster_app"]


@pytest.fixture(scope="module")
def example():
    module = load_example()
    app = cdk.App(context=cdk_context())
    _, platform = module.build(app)
    templates = {s.stack_name: Template.from_stack(s).to_json() for s in platform.stacks}
    return module, platform, templates


def test_only_compute_storage_and_workloads_stacks(example):
    _, platform, templates = example
    assert platform.network is None and platform.cluster is None
    assert sorted(templates) == ["team-llm-compute", "team-llm-storage", "team-llm-workloads"]


def test_the_pools_go_to_the_clusters_own_karpenter_with_its_node_role(example):
    module, _, templates = example
    compute = templates["team-llm-compute"]["Resources"]
    charts = {r["Properties"]["Chart"] for r in compute.values() if r["Type"] == HELM}
    assert charts == {"gpu-operator"}  # no Karpenter (the cluster runs one); the GPU operator, as the config asks
    assert not [r for r in compute.values() if r["Type"] in {"AWS::SQS::Queue", "AWS::EKS::AccessEntry"}]
    objects = kubernetes_objects(templates["team-llm-compute"])
    (node_class,) = [o for o in objects if o["kind"] == "EC2NodeClass"]
    assert node_class["spec"]["role"] == module.CONFIG["compute"]["karpenter_node_role"]
    assert [o["metadata"]["name"] for o in objects if o["kind"] == "NodePool"] == ["gpu"]


def test_the_cluster_is_imported_by_its_attributes(example):
    module, _, templates = example
    groups = json.dumps(templates["team-llm-compute"])
    assert module.ATTRIBUTES["cluster_security_group_id"] in groups  # Karpenter's nodes join the cluster's group
    manifests = [
        r["Properties"]
        for r in templates["team-llm-workloads"]["Resources"].values()
        if r["Type"] == "Custom::AWSCDK-EKS-KubernetesResource"
    ]
    assert manifests and {m["ServiceToken"] for m in manifests} == {module.ATTRIBUTES["kubectl_service_token"]}
    assert not [r for t in templates.values() for r in t["Resources"].values() if r["Type"] == "AWS::EKS::Cluster"]


def test_a_missing_cluster_attribute_is_named(example):
    module, _, _ = example
    app = cdk.App(context=cdk_context())
    with pytest.raises(ValueError, match="set cluster_security_group_id, vpc_id"):
        module.TeamCluster.from_context(
            app, {k: v for k, v in module.ATTRIBUTES.items() if k not in {"vpc_id", "cluster_security_group_id"}}
        )


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
    from inferstack.config.existing_cluster import on_a_teams_cluster

    config = on_a_teams_cluster(parse_config(module.CONFIG))
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

        module = load_example()
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
        on = self._platform({"storage": {"install_csi_drivers": True}})
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


class TestTheAddOnSwitches:
    """Every add-on a cluster usually runs has a switch, off on a team's own cluster unless the config sets it."""

    def test_every_switch_is_off_on_a_teams_cluster_unless_set(self):
        from inferstack.config import parse_config
        from inferstack.config.existing_cluster import OFF_ON_A_TEAMS_CLUSTER, on_a_teams_cluster

        config = on_a_teams_cluster(parse_config({}))
        for path in OFF_ON_A_TEAMS_CLUSTER:
            assert _get(config, path) is False, path
        kept = on_a_teams_cluster(parse_config({"observability": {"install_cert_manager": True}}))
        assert kept.observability.install_cert_manager is True and kept.observability.install_metrics_server is False
        assert all(_get(parse_config({}), path) is True for path in OFF_ON_A_TEAMS_CLUSTER)  # inferstack's cluster

    def test_every_install_switch_of_the_config_is_classified(self):
        """A new ``install*`` switch is either off on a team's cluster or named here as an operator a team's cluster
        is not expected to run (it is installed only when a workload needs its CRDs)."""
        from inferstack.config.existing_cluster import OFF_ON_A_TEAMS_CLUSTER
        from inferstack.config.model import InferstackConfig

        workload_operators = {
            "observability.install_keda",
            "observability.install_lws",
            "observability.install_kuberay",
            "observability.install_nim_operator",
            "observability.install_kserve",
            "observability.install_dynamo_operator",
            "observability.install_knative_serving",
            "observability.install_inference_pool_crd",  # a router's CRD
        }
        assert set(_install_switches(InferstackConfig)) == set(OFF_ON_A_TEAMS_CLUSTER) | workload_operators

    def test_pools_for_the_clusters_karpenter_need_its_node_role(self):
        from inferstack.config import ConfigError, parse_config
        from inferstack.config.existing_cluster import on_a_teams_cluster

        pools = {"karpenter_pools": [{"name": "gpu", "instance_families": ["g6e"]}]}
        with pytest.raises(ConfigError, match="karpenter_node_role: required with install_karpenter off"):
            on_a_teams_cluster(parse_config({"compute": pools}))
        with pytest.raises(ConfigError, match="karpenter_node_role 'r': read only with install_karpenter off"):
            parse_config({"compute": {**pools, "install_karpenter": True, "karpenter_node_role": "r"}})

    def test_a_node_role_on_inferstacks_own_cluster_is_refused(self):
        from inferstack.config import ConfigError, parse_config
        from inferstack.stacks import build_platform

        config = parse_config(
            {
                "compute": {
                    "karpenter_pools": [{"name": "gpu", "instance_families": ["g6e"]}],
                    "karpenter_node_role": "r",
                }
            }
        )
        with pytest.raises(ConfigError, match=r"compute\.karpenter_node_role: 'r' — read only on a team's own cluster"):
            build_platform(cdk.App(), config, nag=False)

    def test_a_node_daemon_switched_off_is_not_installed(self):
        templates = TestATeamsClusterWithItsOwnAddOns()._platform(
            {"compute": {**load_example().CONFIG["compute"], "gpu_operator": {"install": False}}}
        )
        charts = {
            r["Properties"]["Chart"] for t in templates.values() for r in t["Resources"].values() if r["Type"] == HELM
        }
        assert "gpu-operator" not in charts


def _get(config, path: str):
    node = config
    for name in path.split("."):
        node = getattr(node, name)
    return node


def _install_switches(model, prefix: str = "") -> list[str]:
    """Config paths of every boolean ``install``/``install_*`` field under ``model`` (sections recursed)."""
    import typing

    from pydantic import BaseModel

    found = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found += _install_switches(annotation, f"{prefix}{name}.")
        elif annotation is bool and (name == "install" or name.startswith("install_")):
            found.append(f"{prefix}{name}")
        elif typing.get_origin(annotation) is not None:
            continue
    return found
