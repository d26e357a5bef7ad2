"""``storage.fsx.existing`` (issue 26 §2.10): GIVEN a file system the team runs, WHEN synthesized, THEN inferstack
creates no file system and no data repository association, lets the cluster's nodes reach the team's file
system on Lustre's ports through its security group, and mounts it by the given id, DNS name and mount name."""

from __future__ import annotations

import json

import pytest

from inferstack.config import ConfigError, load_config, parse_config
from tests.synth import ROOT

EXISTING = {
    "file_system_id": "fs-0123456789abcdef0",
    "dns_name": "fs-0123456789abcdef0.fsx.us-west-2.amazonaws.com",
    "mount_name": "abcdefgh",
    "security_group_id": "sg-0123456789abcdef0",
}


def _config(**fsx):
    base = load_config(ROOT / "examples" / "fsx-large-model.yaml")
    data = base.model_dump(mode="json", by_alias=True, exclude_unset=True)
    data["storage"]["fsx"] = {"availability_zone": 1, "import_prefix": "models/", **fsx}
    return parse_config(data)


@pytest.fixture(scope="module")
def app(synth_config):
    return synth_config(_config(existing=EXISTING), nag=True)


def test_no_file_system_is_created_or_linked(app):
    storage = app.template("storage")["Resources"]
    assert not [r for r in storage.values() if r["Type"].startswith("AWS::FSx::")]
    outputs = app.template("storage")["Outputs"]
    assert outputs["FsxFileSystemId"]["Value"] == "fs-0123456789abcdef0"
    assert outputs["FsxMountName"]["Value"] == "abcdefgh"


def test_the_nodes_reach_it_on_lustres_ports(app):
    rules = [
        r["Properties"]
        for r in app.template("storage")["Resources"].values()
        if r["Type"] == "AWS::EC2::SecurityGroupIngress"
    ]
    ours = [r for r in rules if r["GroupId"] == "sg-0123456789abcdef0"]
    assert sorted((r["FromPort"], r["ToPort"]) for r in ours) == [(988, 988), (1018, 1023)]
    assert all(r["IpProtocol"] == "tcp" and "SourceSecurityGroupId" in r for r in ours)


def test_the_volume_mounts_the_given_file_system(app):
    (volume,) = [o for o in app.kubernetes_objects() if o["kind"] == "PersistentVolume" and "csi" in o["spec"]]
    csi = volume["spec"]["csi"]
    assert csi["volumeHandle"] == "fs-0123456789abcdef0"
    assert csi["volumeAttributes"]["dnsname"] == EXISTING["dns_name"]
    assert csi["volumeAttributes"]["mountname"] == "abcdefgh"
    assert "Fn::" not in json.dumps(volume)


def test_what_belongs_to_the_team_is_refused_by_name():
    with pytest.raises(ConfigError, match="storage_capacity_gib"):
        _config(existing=EXISTING, storage_capacity_gib=4800)
    with pytest.raises(ConfigError, match="file_system_id"):
        _config(existing={**EXISTING, "file_system_id": "fs-XYZ"})
