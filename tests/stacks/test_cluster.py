"""GIVEN a config, WHEN the cluster stack is synthesized, THEN the EKS cluster, add-ons, access and nodes match."""

from __future__ import annotations

import json

from inferstack.config import parse_config


def cluster_props(app) -> dict:
    (cluster,) = app.resources("cluster", "AWS::EKS::Cluster").values()
    return cluster["Properties"]


def test_kubernetes_version_and_private_endpoint(default_app):
    props = cluster_props(default_app)
    assert props["Version"] == "1.36"
    assert props["ResourcesVpcConfig"]["EndpointPrivateAccess"] is True
    assert props["ResourcesVpcConfig"]["EndpointPublicAccess"] is False


def test_all_control_plane_logs(default_app):
    logging = cluster_props(default_app)["Logging"]["ClusterLogging"]["EnabledTypes"]
    assert sorted(t["Type"] for t in logging) == ["api", "audit", "authenticator", "controllerManager", "scheduler"]


def test_secrets_are_encrypted_with_a_rotating_key(default_app):
    (config,) = cluster_props(default_app)["EncryptionConfig"]
    assert config["Resources"] == ["secrets"]
    keys = default_app.resources("cluster", "AWS::KMS::Key").values()
    (key,) = [k for k in keys if "secrets" in k["Properties"]["Description"]]
    assert key["Properties"]["EnableKeyRotation"] is True


def test_no_auto_mode_and_no_default_capacity(default_app):
    props = cluster_props(default_app)
    assert "ComputeConfig" not in props or props["ComputeConfig"].get("Enabled") is not True
    nodegroups = default_app.resources("cluster", "AWS::EKS::Nodegroup")
    assert len(nodegroups) == 1  # only the system group


def test_core_addons(default_app):
    addons = {a["Properties"]["AddonName"] for a in default_app.resources("cluster", "AWS::EKS::Addon").values()}
    assert addons == {"vpc-cni", "coredns", "kube-proxy", "eks-pod-identity-agent"}


def test_addon_pin_is_applied(pinned_app):
    addons = {
        a["Properties"]["AddonName"]: a["Properties"].get("AddonVersion")
        for a in pinned_app.resources("cluster", "AWS::EKS::Addon").values()
    }
    assert addons["eks-pod-identity-agent"] == "v1.3.10-eksbuild.2"
    assert addons["vpc-cni"] is None


def test_system_nodegroup(default_app):
    (ng,) = default_app.resources("cluster", "AWS::EKS::Nodegroup").values()
    props = ng["Properties"]
    assert props["AmiType"] == "AL2023_x86_64_STANDARD"
    assert props["InstanceTypes"] == ["m6i.xlarge"]
    assert props["ScalingConfig"] == {"MinSize": 2, "DesiredSize": 2, "MaxSize": 4}
    assert props["Labels"] == {"inferstack.io/pool": "system"}
    assert props["CapacityType"] == "ON_DEMAND"
    assert len(props["Subnets"]) == 2


def test_system_nodes_require_imdsv2_and_encrypted_gp3(default_app):
    (template,) = default_app.resources("cluster", "AWS::EC2::LaunchTemplate").values()
    data = template["Properties"]["LaunchTemplateData"]
    assert data["MetadataOptions"]["HttpTokens"] == "required"
    assert data["MetadataOptions"]["HttpPutResponseHopLimit"] == 1
    (device,) = data["BlockDeviceMappings"]
    assert device["Ebs"] == {"VolumeSize": 100, "VolumeType": "gp3", "Encrypted": True}


def test_public_endpoint_is_limited_to_the_allow_list(pinned_app):
    vpc_config = cluster_props(pinned_app)["ResourcesVpcConfig"]
    assert vpc_config["EndpointPublicAccess"] is True and vpc_config["EndpointPrivateAccess"] is True
    assert vpc_config["PublicAccessCidrs"] == ["203.0.113.0/24"]


def test_admin_access_entries(pinned_app):
    entries = [e["Properties"] for e in pinned_app.resources("cluster", "AWS::EKS::AccessEntry").values()]
    admin = [e for e in entries if e["PrincipalArn"] == "arn:aws:iam::123456789012:role/platform-admins"]
    assert len(admin) == 1
    (policy,) = admin[0]["AccessPolicies"]
    assert policy["AccessScope"] == {"Type": "cluster"}
    assert "AmazonEKSClusterAdminPolicy" in json.dumps(policy["PolicyArn"])


def test_named_cluster_in_its_environment(pinned_app):
    assert cluster_props(pinned_app)["Name"] == "llm-prod"
    stack = pinned_app.stacks["llm-prod-cluster"]
    assert (stack.account, stack.region) == ("123456789012", "us-west-2")


def test_cluster_takes_the_vpc_from_the_network_stack(default_app):
    # Cross-stack references read the network stack's outputs (Fn::GetStackOutput: no export lock-in).
    subnets = cluster_props(default_app)["ResourcesVpcConfig"]["SubnetIds"]
    assert [s["Fn::GetStackOutput"]["StackName"] for s in subnets] == ["inferstack-network"] * 2


def test_base_chart_priority_classes(default_app):
    classes = {o["metadata"]["name"]: o for o in default_app.kubernetes_objects() if o["kind"] == "PriorityClass"}
    assert classes["inferstack-serving"]["value"] > classes["inferstack-batch"]["value"]
    assert classes["inferstack-batch"]["preemptionPolicy"] == "Never"


def test_spot_system_nodes(synth_config):
    app = synth_config(parse_config({"cluster": {"system_nodes": {"capacity_type": "spot"}}}), nag=False)
    (ng,) = app.resources("cluster", "AWS::EKS::Nodegroup").values()
    assert ng["Properties"]["CapacityType"] == "SPOT"
