"""GIVEN the compute examples, WHEN synthesized, THEN node groups, EFA, Karpenter and operators are right."""

from __future__ import annotations

import json

import pytest

from inferstack.catalog.crds import validate_custom_resource
from inferstack.catalog.instances import INSTANCE_TYPES
from inferstack.cli import json_property
from inferstack.config import parse_config

HELM = "Custom::AWSCDK-EKS-HelmChart"


def only(mapping: dict) -> dict:
    (value,) = mapping.values()
    return value


def helm_values(app, chart: str) -> dict:
    for resource in app.resources("compute", HELM).values():
        if resource["Properties"]["Chart"] == chart:
            return json_property(resource["Properties"]["Values"]) if resource["Properties"].get("Values") else {}
    raise AssertionError(f"no Helm chart {chart}")


def helm_charts(app) -> dict[str, dict]:
    return {r["Properties"]["Chart"]: r["Properties"] for r in app.resources("compute", HELM).values()}


def objects(app, kind: str) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in app.kubernetes_objects() if o["kind"] == kind}


class TestEfaNodeGroup:
    def test_launch_template_has_every_efa_interface_of_p5(self, efa_app):
        data = only(efa_app.resources("compute", "AWS::EC2::LaunchTemplate"))["Properties"]["LaunchTemplateData"]
        interfaces = data["NetworkInterfaces"]
        p5 = INSTANCE_TYPES["p5.48xlarge"]
        assert len(interfaces) == p5.max_efa_interfaces == 32
        assert [i["NetworkCardIndex"] for i in interfaces] == list(range(p5.network_cards))
        assert interfaces[0]["InterfaceType"] == "efa" and interfaces[0]["DeviceIndex"] == 0
        assert {i["InterfaceType"] for i in interfaces[1:]} == {"efa-only"}
        assert all(len(i["Groups"]) == 2 for i in interfaces)  # cluster SG + EFA SG

    def test_node_group_sits_in_exactly_one_subnet(self, efa_app):
        group = only(efa_app.resources("compute", "AWS::EKS::Nodegroup"))["Properties"]
        assert len(group["Subnets"]) == 1
        assert group["Labels"]["inferstack.io/efa"] == "true"

    def test_placement_group_is_cluster_and_used(self, efa_app):
        groups = efa_app.resources("compute", "AWS::EC2::PlacementGroup")
        assert {g["Properties"]["Strategy"] for g in groups.values()} == {"cluster"}
        data = only(efa_app.resources("compute", "AWS::EC2::LaunchTemplate"))["Properties"]["LaunchTemplateData"]
        assert data["Placement"]["GroupName"]["Ref"] in groups

    def test_efa_security_group_allows_all_traffic_to_and_from_itself(self, efa_app):
        (sg_id,) = efa_app.resources("compute", "AWS::EC2::SecurityGroup")
        self_ref = {"Fn::GetAtt": [sg_id, "GroupId"]}
        ingress = [r["Properties"] for r in efa_app.resources("compute", "AWS::EC2::SecurityGroupIngress").values()]
        egress = [r["Properties"] for r in efa_app.resources("compute", "AWS::EC2::SecurityGroupEgress").values()]
        assert any(
            r["IpProtocol"] == "-1" and r["SourceSecurityGroupId"] == self_ref and r["GroupId"] == self_ref
            for r in ingress
        )
        assert any(
            r["IpProtocol"] == "-1" and r["DestinationSecurityGroupId"] == self_ref and r["GroupId"] == self_ref
            for r in egress
        )

    def test_p5_gets_the_nvidia_ami_despite_cdks_ami_check(self, efa_app):
        group = only(efa_app.resources("compute", "AWS::EKS::Nodegroup"))["Properties"]
        assert group["AmiType"] == "AL2023_x86_64_NVIDIA"
        assert group["Taints"] == [{"Effect": "NO_SCHEDULE", "Key": "nvidia.com/gpu", "Value": "true"}]

    def test_imdsv2_and_encrypted_root(self, efa_app):
        data = only(efa_app.resources("compute", "AWS::EC2::LaunchTemplate"))["Properties"]["LaunchTemplateData"]
        assert data["MetadataOptions"]["HttpTokens"] == "required"
        assert data["BlockDeviceMappings"][0]["Ebs"] == {
            "VolumeSize": 1000,
            "VolumeType": "gp3",
            "Encrypted": True,
            "DeleteOnTermination": True,
        }


def test_capacity_block_node_group(synth_config):
    config = parse_config(
        {
            "compute": {
                "node_groups": [
                    {
                        "name": "block",
                        "instance_type": "p5en.48xlarge",
                        "efa": True,
                        "availability_zone": 1,
                        "capacity_type": "capacity_block",
                        "capacity_reservation_id": "cr-0123456789abcdef0",
                    }
                ]
            }
        }
    )
    app = synth_config(config, nag=False)
    group = only(app.resources("compute", "AWS::EKS::Nodegroup"))["Properties"]
    assert group["CapacityType"] == "CAPACITY_BLOCK"
    data = only(app.resources("compute", "AWS::EC2::LaunchTemplate"))["Properties"]["LaunchTemplateData"]
    assert data["InstanceMarketOptions"] == {"MarketType": "capacity-block"}
    assert data["CapacityReservationSpecification"] == {
        "CapacityReservationTarget": {"CapacityReservationId": "cr-0123456789abcdef0"}
    }
    assert "Placement" not in data and not app.resources("compute", "AWS::EC2::PlacementGroup")
    assert len(data["NetworkInterfaces"]) == INSTANCE_TYPES["p5en.48xlarge"].max_efa_interfaces == 16


class TestKarpenter:
    def test_pools_and_classes_are_valid_against_the_karpenter_crds(self, efa_app, gpu_mixed_app, neuron_app):
        for app in (efa_app, gpu_mixed_app, neuron_app):
            crs = [o for o in app.kubernetes_objects() if o["kind"] in ("NodePool", "EC2NodeClass")]
            assert len(crs) == 2 * len(app.config.compute.karpenter_pools)
            assert all(validate_custom_resource(o) == [] for o in crs)

    def test_efa_pool_class_has_interfaces_placement_and_reservation(self, efa_app):
        spec = objects(efa_app, "EC2NodeClass")["p5-burst"]["spec"]
        assert len([i for i in spec["networkInterfaces"] if i["interfaceType"] == "efa-only"]) == 32
        assert spec["networkInterfaces"][0] == {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}
        assert "name" in spec["placementGroupSelector"]
        assert spec["capacityReservationSelectorTerms"] == [{"id": "cr-0a1b2c3d4e5f60718"}]
        assert len(spec["subnetSelectorTerms"]) == 1 and len(spec["securityGroupSelectorTerms"]) == 2

    def test_efa_pool_is_pinned_to_one_zone(self, efa_app):
        requirements = objects(efa_app, "NodePool")["p5-burst"]["spec"]["template"]["spec"]["requirements"]
        zone = [r for r in requirements if r["key"] == "topology.kubernetes.io/zone"]
        assert len(zone) == 1 and len(zone[0]["values"]) == 1

    def test_gpu_pool_taint_limits_and_business_hours_budget(self, gpu_mixed_app):
        pool = objects(gpu_mixed_app, "NodePool")["l40s"]["spec"]
        assert {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"} in pool["template"]["spec"]["taints"]
        assert pool["limits"] == {"nvidia.com/gpu": 64}
        assert pool["disruption"]["consolidationPolicy"] == "WhenEmpty"
        assert {
            "nodes": "0",
            "schedule": "0 8 * * mon-fri",
            "duration": "10h",
            "reasons": ["Underutilized", "Empty", "Drifted"],
        } in pool["disruption"]["budgets"]
        types = pool["template"]["spec"]["requirements"][0]["values"]
        assert "g6e.2xlarge" in types and all(t.startswith("g6e.") for t in types)

    def test_node_class_defaults(self, gpu_mixed_app):
        spec = objects(gpu_mixed_app, "EC2NodeClass")["l40s"]["spec"]
        assert spec["amiSelectorTerms"] == [{"alias": "al2023@v20260714"}]
        assert spec["metadataOptions"]["httpTokens"] == "required"
        assert spec["blockDeviceMappings"][0]["ebs"]["volumeSize"] == "500Gi"

    def test_controller_installation(self, efa_app):
        values = helm_values(efa_app, "karpenter")
        assert values["settings"]["clusterName"] == "efa-p5"
        assert values["serviceAccount"] == {"create": False, "name": "karpenter"}
        assert values["nodeSelector"] == {"inferstack.io/pool": "system"}
        assert helm_charts(efa_app)["karpenter"]["Version"] == "1.14.1"
        association = only(efa_app.resources("compute", "AWS::EKS::PodIdentityAssociation"))["Properties"]
        assert (association["Namespace"], association["ServiceAccount"]) == ("kube-system", "karpenter")
        entries = [e["Properties"] for e in efa_app.resources("compute", "AWS::EKS::AccessEntry").values()]
        assert [e["Type"] for e in entries] == ["EC2_LINUX"]

    def test_interruption_queue_and_rules(self, efa_app):
        queue = only(efa_app.resources("compute", "AWS::SQS::Queue"))["Properties"]
        assert queue["MessageRetentionPeriod"] == 300 and queue["SqsManagedSseEnabled"] is True
        rules = efa_app.resources("compute", "AWS::Events::Rule").values()
        detail_types = {d for r in rules for d in r["Properties"]["EventPattern"]["detail-type"]}
        assert detail_types == {
            "EC2 Spot Instance Interruption Warning",
            "EC2 Instance Rebalance Recommendation",
            "EC2 Instance State-change Notification",
            "AWS Health Event",
            "EC2 Capacity Reservation Instance Interruption Warning",
        }

    def test_controller_policy_is_scoped(self, efa_app):
        policies = [
            p["Properties"]["PolicyDocument"]["Statement"]
            for p in efa_app.resources("compute", "AWS::IAM::ManagedPolicy").values()
        ]
        statements = {s.get("Sid"): s for doc in policies for s in doc if s.get("Sid")}
        assert all("*" not in json.dumps(s["Action"]) for s in statements.values())
        assert "Condition" in statements["AllowScopedEC2InstanceActionsWithTags"]
        assert "Condition" in statements["AllowScopedDeletion"]
        tagging = statements["AllowScopedInstanceProfileTagActions"]["Condition"]["StringEquals"]
        assert tagging["aws:ResourceTag/kubernetes.io/cluster/efa-p5"] == "owned", "only profiles it created"

    def test_crds_come_from_the_karpenter_crd_chart(self, efa_app):
        charts = helm_charts(efa_app)
        assert charts["karpenter-crd"]["Version"] == charts["karpenter"]["Version"]
        assert charts["karpenter"]["SkipCrds"] is True and "SkipCrds" not in charts["karpenter-crd"]

    def test_pools_wait_for_the_karpenter_chart(self, efa_app):
        manifests = efa_app.resources("compute", "Custom::AWSCDK-EKS-KubernetesResource")
        pools = [r for r in manifests.values() if "NodePool" in json.dumps(r["Properties"]["Manifest"])]
        (chart_id,) = [
            k for k, r in efa_app.resources("compute", HELM).items() if r["Properties"]["Chart"] == "karpenter"
        ]
        assert chart_id in pools[0]["DependsOn"]


class TestOperators:
    def test_gpu_operator_disables_driver_and_toolkit(self, gpu_mixed_app):
        values = helm_values(gpu_mixed_app, "gpu-operator")
        assert values["driver"] == {"enabled": False} and values["toolkit"] == {"enabled": False}
        assert values["dcgmExporter"] == {"enabled": True}
        keys = {t["key"] for t in values["daemonsets"]["tolerations"]}
        assert keys == {"nvidia.com/gpu", "dedicated"}
        assert values["operator"]["nodeSelector"] == {"inferstack.io/pool": "system"}

    def test_only_needed_operators_are_installed(self, gpu_mixed_app, neuron_app, efa_app):
        karpenter = {"karpenter", "karpenter-crd"}
        assert set(helm_charts(gpu_mixed_app)) == {*karpenter, "gpu-operator"}
        assert set(helm_charts(neuron_app)) == {*karpenter, "neuron-helm-chart"}
        assert set(helm_charts(efa_app)) == {*karpenter, "gpu-operator", "aws-efa-k8s-device-plugin"}

    def test_efa_plugin_runs_only_on_efa_nodes(self, efa_app):
        values = helm_values(efa_app, "aws-efa-k8s-device-plugin")
        assert values["nodeSelector"] == {"inferstack.io/efa": "true"}
        assert {t["key"] for t in values["tolerations"]} == {"nvidia.com/gpu"}  # the taints of its (GPU) pools


class TestNeuron:
    def test_neuron_node_group(self, neuron_app):
        group = only(neuron_app.resources("compute", "AWS::EKS::Nodegroup"))["Properties"]
        assert group["AmiType"] == "AL2023_x86_64_NEURON"
        assert group["Taints"] == [{"Effect": "NO_SCHEDULE", "Key": "aws.amazon.com/neuron", "Value": "true"}]

    def test_the_neuron_chart_owns_the_device_plugin(self, neuron_app):
        """aws-cdk-lib adds its own Neuron DaemonSet for add_nodegroup_capacity; inferstack never does."""
        daemonsets = [o["metadata"]["name"] for o in neuron_app.kubernetes_objects() if o["kind"] == "DaemonSet"]
        assert daemonsets == ["fluent-bit"]  # the log shipper only: no device plugin of aws-cdk-lib's
        values = helm_values(neuron_app, "neuron-helm-chart")
        assert values["devicePlugin"]["tolerations"][0]["key"] == "aws.amazon.com/neuron"
        assert values["scheduler"]["enabled"] is True

    def test_neuron_pool_limits_neuron_devices(self, neuron_app):
        pool = objects(neuron_app, "NodePool")["inf2"]["spec"]
        assert pool["limits"] == {"aws.amazon.com/neuron": 48}
        assert pool["template"]["spec"]["taints"][0]["key"] == "aws.amazon.com/neuron"


def test_no_compute_stack_without_pools(synth_config):
    app = synth_config(parse_config({}), nag=False)
    assert not any(name.endswith("-compute") for name in app.templates)


class TestImportedCluster:
    """GIVEN a team's own cluster (imported, named unlike config.cluster_name) WHEN ComputeStack is added to it
    THEN Karpenter's settings and every IAM condition name that cluster."""

    @pytest.fixture(scope="class")
    @classmethod
    def template(cls):
        import aws_cdk as cdk
        from aws_cdk import aws_ec2 as ec2
        from aws_cdk import aws_eks_v2 as eks
        from aws_cdk.assertions import Template

        from inferstack.config import parse_config
        from inferstack.stacks import ComputeStack
        from tests.synth import cdk_context

        config = parse_config(
            {"name": "platform", "compute": {"karpenter_pools": [{"name": "gpu", "instance_families": ["g6e"]}]}}
        )
        app = cdk.App(context=cdk_context())
        base = cdk.Stack(app, "team-base")
        vpc = ec2.Vpc(base, "Vpc", max_azs=2)
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
        stack = ComputeStack(
            app, "team-compute", config=config.compute, vpc=vpc, cluster=cluster, cluster_name="team-cluster"
        )
        return Template.from_stack(stack).to_json()

    def test_karpenter_settings_name_the_imported_cluster(self, template):
        (chart,) = [
            r["Properties"]
            for r in template["Resources"].values()
            if r["Type"] == HELM and r["Properties"]["Chart"] == "karpenter"
        ]
        values = json.loads(chart["Values"]) if isinstance(chart["Values"], str) else json_property(chart["Values"])
        assert values["settings"]["clusterName"] == "team-cluster"

    def test_iam_conditions_name_the_imported_cluster(self, template):
        text = json.dumps([r for r in template["Resources"].values() if r["Type"] == "AWS::IAM::ManagedPolicy"])
        assert "kubernetes.io/cluster/team-cluster" in text and "cluster/team-cluster" in text
        assert "kubernetes.io/cluster/platform" not in text

    def test_a_token_cluster_name_is_refused(self):
        import aws_cdk as cdk

        from inferstack.stacks.karpenter import Karpenter

        stack = cdk.Stack(cdk.App())
        with pytest.raises(ValueError, match="literal EKS name"):
            Karpenter(stack, "K", cluster=None, cluster_name=cdk.Aws.STACK_NAME)  # type: ignore[arg-type]


def test_node_class_and_pool_carry_the_node_knobs():
    """instance_store_policy, the root volume's IOPS and throughput, user_data and termination_grace_period land in
    the EC2NodeClass and NodePool as Karpenter v1 names them, and validate against the vendored CRDs."""
    import cdk8s

    from inferstack.charts.karpenter_pools import KarpenterPoolsChart, KarpenterPoolsProps, PoolPlacement
    from inferstack.config import parse_config

    user_data = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {}\n"
    pool = {
        "name": "cache",
        "instance_types": ["g6e.12xlarge"],
        "instance_store_policy": "RAID0",
        "root_volume_iops": 6000,
        "root_volume_throughput_mibps": 500,
        "user_data": user_data,
        "termination_grace_period": "2h",
        "max_memory_gib": 4096,
        "subnet_tags": {"karpenter.sh/discovery": "llm-prod", "tier": "*"},
    }
    pools = parse_config({"compute": {"karpenter_pools": [pool, {"name": "plain", "instance_families": ["g6e"]}]}})
    placement = PoolPlacement(subnet_ids=["subnet-1"], zone=None, security_group_ids=["sg-1"])
    chart = KarpenterPoolsChart(
        cdk8s.App(),
        "pools",
        KarpenterPoolsProps(
            pools=pools.compute.karpenter_pools,
            node_role_name="nodes",
            placements={"cache": placement, "plain": placement},
        ),
    )
    rendered = {(o["kind"], o["metadata"]["name"]): o for o in chart.to_json()}
    node_class = rendered[("EC2NodeClass", "cache")]["spec"]
    assert node_class["instanceStorePolicy"] == "RAID0" and node_class["userData"] == user_data
    ebs = node_class["blockDeviceMappings"][0]["ebs"]
    assert (ebs["iops"], ebs["throughput"], ebs["volumeType"]) == (6000, 500, "gp3")
    assert rendered[("NodePool", "cache")]["spec"]["template"]["spec"]["terminationGracePeriod"] == "2h"
    assert rendered[("NodePool", "cache")]["spec"]["limits"]["memory"] == "4096Gi"
    assert node_class["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "llm-prod", "tier": "*"}}]
    assert rendered[("EC2NodeClass", "plain")]["spec"]["subnetSelectorTerms"] == [{"id": "subnet-1"}]
    plain_class, plain_pool = rendered[("EC2NodeClass", "plain")]["spec"], rendered[("NodePool", "plain")]["spec"]
    assert "instanceStorePolicy" not in plain_class and "userData" not in plain_class
    assert "iops" not in plain_class["blockDeviceMappings"][0]["ebs"]
    assert "terminationGracePeriod" not in plain_pool["template"]["spec"] and "memory" not in plain_pool["limits"]
    assert all(validate_custom_resource(o) == [] for o in rendered.values())


def test_subnet_tags_are_aws_tags():
    from inferstack.config import ConfigError, parse_config

    for tags in ({"bad key!": "x"}, {"tier": ""}):  # an empty value: the EC2NodeClass CRD's CEL rule refuses it
        pool = {"name": "p", "instance_types": ["g6e.2xlarge"], "subnet_tags": tags}
        with pytest.raises(ConfigError) as raised:
            parse_config({"compute": {"karpenter_pools": [pool]}})
        assert "compute.karpenter_pools[0].subnet_tags" in str(raised.value) and "AWS tag" in str(raised.value)


def test_the_node_knobs_refuse_what_ec2_would():
    from inferstack.config import ConfigError, parse_config

    def problems(**fields):
        pool = {"name": "p", "instance_types": ["g6e.2xlarge"], **fields}
        with pytest.raises(ConfigError) as raised:
            parse_config({"compute": {"karpenter_pools": [pool]}})
        return str(raised.value)

    assert "needs at least 4000 IOPS" in problems(root_volume_throughput_mibps=1000)
    assert "root_volume_iops" in problems(root_volume_iops=20000)
    assert "Never is not allowed" in problems(termination_grace_period="Never")
    assert "user_data" in problems(user_data="   ")
    assert "RAID0" in problems(instance_store_policy="RAID5")


def test_the_platform_tags_reach_karpenters_instances():
    """CloudFormation's tags never reach what Karpenter launches: the config's ``tags`` (cost allocation) go into
    every EC2NodeClass's ``spec.tags``, which Karpenter puts on the instances and volumes at launch (its controller
    policy allows any tag on create: AllowScopedResourceCreationTagging), with ``inferstack:platform``."""
    import aws_cdk as cdk

    from inferstack.config import parse_config
    from inferstack.stacks.platform import build_platform

    config = parse_config(
        {
            "name": "llm-prod",
            "tags": {"team": "ml-platform", "cost-center": "4711"},
            "compute": {"karpenter_pools": [{"name": "l40s", "instance_types": ["g6e.2xlarge"]}]},
            "workloads": [{"name": "q", "pool": "l40s", "model": {"id": "Qwen/Qwen3-8B"}}],
        }
    )
    platform = build_platform(cdk.App(), config, nag=False)
    assert platform.compute is not None
    (node_class,) = [o for o in platform.compute.pools_chart.to_json() if o["kind"] == "EC2NodeClass"]
    assert node_class["spec"]["tags"] == {
        "team": "ml-platform",
        "cost-center": "4711",
        "inferstack:platform": "llm-prod",
        "inferstack.io/pool": "l40s",
    }


def test_a_memory_limit_below_the_smallest_node_is_named():
    """KARPENTER-LIMITS: a limit Karpenter can never launch a node under (g6e.2xlarge has 64 GiB)."""
    from inferstack.config import parse_config
    from inferstack.rules import karpenter_limits

    def findings(limit: int) -> list:
        pool = {"name": "p", "instance_types": ["g6e.2xlarge"], "max_memory_gib": limit}
        return list(karpenter_limits.check(parse_config({"compute": {"karpenter_pools": [pool]}})))

    (finding,) = findings(32)
    assert finding.path == "compute.karpenter_pools[0].max_memory_gib" and "raise max_memory_gib to ≥ 64" in finding.fix
    assert findings(64) == []


def test_security_group_tags_add_groups_beside_the_clusters():
    """``security_group_tags``: one more selector term (terms are ORed), so the cluster's (and an EFA pool's own)
    security groups stay on the nodes; the tags are AWS tags like ``subnet_tags``."""
    import cdk8s

    from inferstack.charts.karpenter_pools import KarpenterPoolsChart, KarpenterPoolsProps, PoolPlacement
    from inferstack.config import ConfigError, parse_config

    pools = [{"name": "p", "instance_types": ["g6e.2xlarge"], "security_group_tags": {"team": "ml-egress"}}]
    parsed = parse_config({"compute": {"karpenter_pools": pools}}).compute.karpenter_pools
    placement = PoolPlacement(subnet_ids=["subnet-1"], security_group_ids=["sg-cluster", "sg-efa"])
    chart = KarpenterPoolsChart(
        cdk8s.App(), "pools", KarpenterPoolsProps(pools=parsed, node_role_name="n", placements={"p": placement})
    )
    (node_class,) = [o for o in chart.to_json() if o["kind"] == "EC2NodeClass"]
    assert node_class["spec"]["securityGroupSelectorTerms"] == [
        {"id": "sg-cluster"},
        {"id": "sg-efa"},
        {"tags": {"team": "ml-egress"}},
    ]
    assert validate_custom_resource(node_class) == []
    with pytest.raises(ConfigError) as raised:
        parse_config({"compute": {"karpenter_pools": [{**pools[0], "security_group_tags": {"team": ""}}]}})
    assert "compute.karpenter_pools[0].security_group_tags" in str(raised.value) and "AWS tag" in str(raised.value)
