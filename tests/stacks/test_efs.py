"""GIVEN ``storage.efs`` and a cache on ``inferstack-efs``, WHEN synthesized, THEN the file system is encrypted,
retained and mountable by the EFS CSI driver's anonymous NFS mounts from the cluster's nodes only, the driver runs as
an add-on whose controller may create tagged access points, and the ``inferstack-efs`` StorageClass hands each claim
an access point owned by the serving uid — applied before the workload whose claim names it."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from inferstack.config import ConfigError, parse_config
from tests.synth import Synthesized, synthesize

SHARED = {"size_gib": 64, "storage_class": "inferstack-efs", "access_mode": "ReadWriteMany"}
CONFIG: dict[str, Any] = {
    "name": "efs",
    "storage": {"efs": {}},
    "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]},
    "workloads": [
        {
            "name": "chat",
            "pool": "gpu",
            "replicas": 2,
            "model": {"id": "Qwen/Qwen3-8B", "source": {"type": "hf"}},
            "caches": {"huggingface": SHARED, "compile": SHARED},
        }
    ],
}


@pytest.fixture(scope="module")
def efs_app() -> Synthesized:
    return synthesize(parse_config(CONFIG))  # with cdk-nag: its EFS and IAM checks pass or are acknowledged


def of_type(app: Synthesized, stack: str, cfn_type: str) -> dict[str, dict[str, Any]]:
    return app.resources(stack, cfn_type)


def test_the_file_system_is_encrypted_elastic_and_retained(efs_app):
    ((_, fs),) = of_type(efs_app, "storage", "AWS::EFS::FileSystem").items()
    props = fs["Properties"]
    assert props["Encrypted"] is True and props["ThroughputMode"] == "elastic"
    assert props["PerformanceMode"] == "generalPurpose"
    assert (fs["DeletionPolicy"], fs["UpdateReplacePolicy"]) == ("Retain", "Retain")


def test_anonymous_nfs_mounts_are_not_denied(efs_app):
    """The EFS CSI driver mounts without the ``iam`` option (aws-efs-csi-driver v3.4.1 docs/parameters.md): a
    file-system policy denying anonymous clients — what CDK adds under the ``@aws-cdk/aws-efs:denyAnonymousAccess``
    flag our cdk.json sets — would refuse every mount."""
    ((_, fs),) = of_type(efs_app, "storage", "AWS::EFS::FileSystem").items()
    assert "FileSystemPolicy" not in fs["Properties"]


def test_one_mount_target_per_zone_behind_a_group_that_admits_nfs_from_the_nodes_only(efs_app):
    targets = of_type(efs_app, "storage", "AWS::EFS::MountTarget").values()
    assert len(targets) == 2  # the default VPC's two zones
    groups = {json.dumps(t["Properties"]["SecurityGroups"]) for t in targets}
    ((group_ref,),) = [json.loads(g) for g in groups]
    group_id = group_ref["Fn::GetAtt"][0]
    group = efs_app.template("storage")["Resources"][group_id]["Properties"]
    (ingress,) = group["SecurityGroupIngress"]
    assert (ingress["IpProtocol"], ingress["FromPort"], ingress["ToPort"]) == ("tcp", 2049, 2049)
    assert "ClusterSecurityGroupId" in json.dumps(ingress["SourceSecurityGroupId"])
    assert group["SecurityGroupEgress"][0]["Description"] == "Disallow all traffic"


def test_the_csi_driver_is_an_addon_whose_controller_has_awss_policy(efs_app):
    addons = of_type(efs_app, "storage", "AWS::EKS::Addon")
    (addon,) = [a for a in addons.values() if a["Properties"]["AddonName"] == "aws-efs-csi-driver"]
    (association,) = addon["Properties"]["PodIdentityAssociations"]
    assert association["ServiceAccount"] == "efs-csi-controller-sa"
    role_id = association["RoleArn"]["Fn::GetAtt"][0]
    role = efs_app.template("storage")["Resources"][role_id]["Properties"]
    assert "AmazonEFSCSIDriverPolicy" in json.dumps(role["ManagedPolicyArns"])


def _manifest(app: Synthesized, prefix: str) -> tuple[str, dict[str, Any]]:
    (found,) = [(k, r) for k, r in app.template("workloads")["Resources"].items() if k.startswith(prefix)]
    return found


def test_the_storage_class_provisions_an_access_point_per_claim_in_the_file_system(efs_app):
    _, resource = _manifest(efs_app, "EfsStorageClass")
    text = json.dumps(resource["Properties"]["Manifest"])
    for fragment in (
        '\\"provisioner\\":\\"efs.csi.aws.com\\"',
        '\\"provisioningMode\\":\\"efs-ap\\"',
        '\\"uid\\":\\"1000\\"',
        '\\"gid\\":\\"1000\\"',
        '\\"directoryPerms\\":\\"700\\"',
        '\\"reclaimPolicy\\":\\"Retain\\"',
        '\\"volumeBindingMode\\":\\"Immediate\\"',  # EFS is regional: nothing to wait for
        '\\"allowVolumeExpansion\\":true',  # EFS ignores the size: growing a claim must not be refused
        '\\"subPathPattern\\":\\"${.PVC.namespace}/${.PVC.name}\\"',  # a claim of the same name finds its files
        '\\"ensureUniqueDirectory\\":\\"false\\"',
    ):
        assert fragment in text, fragment
    assert "EfsFileSystem" in text  # fileSystemId: the storage stack's file system
    # applied, not created, and deleted with storage.efs (a new file system needs a new class)
    assert resource["Properties"]["Overwrite"] is True and resource.get("DeletionPolicy") != "Retain"


def test_the_workload_waits_for_the_storage_class(efs_app):
    storage_class, _ = _manifest(efs_app, "EfsStorageClass")
    _, workload = _manifest(efs_app, "Workloadinferencechat")
    assert storage_class in workload["DependsOn"]


def test_without_efs_there_is_no_file_system(default_app):
    assert not of_type(default_app, "storage", "AWS::EFS::FileSystem")
    assert not [k for k in default_app.template("workloads")["Resources"] if k.startswith("EfsStorageClass")]


EXISTING = {"file_system_id": "fs-0123456789abcdef0", "security_group_id": "sg-0123456789abcdef0"}


@pytest.fixture(scope="module")
def existing_efs_app() -> Synthesized:
    config = copy.deepcopy(CONFIG)
    config["storage"] = {"efs": {"existing": EXISTING}}
    return synthesize(parse_config(config))  # with cdk-nag


def test_an_existing_file_system_is_used_not_created(existing_efs_app):
    """``storage.efs.existing``: no file system, mount target or group of ours; NFS from the nodes added to its
    group; the class provisions access points in it; the driver add-on as for one inferstack creates."""
    assert not of_type(existing_efs_app, "storage", "AWS::EFS::FileSystem")
    assert not of_type(existing_efs_app, "storage", "AWS::EFS::MountTarget")
    (ingress,) = of_type(existing_efs_app, "storage", "AWS::EC2::SecurityGroupIngress").values()
    props = ingress["Properties"]
    assert props["GroupId"] == EXISTING["security_group_id"] and (props["FromPort"], props["ToPort"]) == (2049, 2049)
    assert "ClusterSecurityGroupId" in json.dumps(props["SourceSecurityGroupId"])  # the nodes, nothing wider
    _, resource = _manifest(existing_efs_app, "EfsStorageClass")
    assert '\\"fileSystemId\\":\\"fs-0123456789abcdef0\\"' in json.dumps(resource["Properties"]["Manifest"])
    addons = of_type(existing_efs_app, "storage", "AWS::EKS::Addon").values()
    assert [a for a in addons if a["Properties"]["AddonName"] == "aws-efs-csi-driver"]


def test_an_existing_file_systems_throughput_is_its_owners():
    config = copy.deepcopy(CONFIG)
    config["storage"] = {"efs": {"existing": EXISTING, "throughput_mode": "bursting"}}
    with pytest.raises(ConfigError) as raised:
        parse_config(config)
    assert "storage.efs.throughput_mode" in str(raised.value)
