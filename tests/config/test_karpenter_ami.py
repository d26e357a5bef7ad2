"""GIVEN a Karpenter pool's ``ami`` (an EKS-optimized release by alias, or your own AMIs by selector terms), WHEN
parsed and rendered, THEN the EC2NodeClass carries what Karpenter v1.14.1 resolves (alias alone, or terms with
amiFamily; Bottlerocket's OS and data volumes), and what its CRD's CEL rules or its bootstrap would refuse is a config
error naming the field."""

from __future__ import annotations

from typing import ClassVar

import cdk8s
import pytest

from inferstack.catalog.crds import validate_custom_resource
from inferstack.catalog.versions import KARPENTER_AMI_ALIASES
from inferstack.charts.karpenter_pools import KarpenterPoolsChart, KarpenterPoolsProps, PoolPlacement
from inferstack.config import ConfigError, parse_config
from inferstack.rules import karpenter_nodes

G6E = {"name": "gpu", "instance_types": ["g6e.12xlarge"]}
TOML = (
    "[settings.kubernetes]\nmax-pods = 110\nnode-labels = {team = 'ml'}\n"
    "[settings.kubernetes.node-taints]\ndedicated = ['ml:NoSchedule']\n"
    "[settings.host-containers.admin]\nenabled = false\n"
)
NODECONFIG = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {}\n"
#: Your own AMIs, by tag.
OWN = {"terms": [{"tags": {"team": "ml"}}], "family": "AL2023"}


def pools(*pool_list: dict):
    return parse_config({"compute": {"karpenter_pools": list(pool_list)}}).compute.karpenter_pools


def problem(**fields) -> str:
    with pytest.raises(ConfigError) as raised:
        pools({**G6E, **fields})
    return str(raised.value)


def node_classes(*pool_list: dict) -> dict[str, dict]:
    parsed = pools(*pool_list)
    placement = PoolPlacement(subnet_ids=["subnet-1"], security_group_ids=["sg-1"])
    chart = KarpenterPoolsChart(
        cdk8s.App(),
        "pools",
        KarpenterPoolsProps(pools=parsed, node_role_name="nodes", placements={p.name: placement for p in parsed}),
    )
    rendered = chart.to_json()
    assert all(validate_custom_resource(o) == [] for o in rendered)
    return {o["metadata"]["name"]: o["spec"] for o in rendered if o["kind"] == "EC2NodeClass"}


class TestRendered:
    def test_the_default_is_the_catalogs_al2023_release_on_one_root_volume(self):
        spec = node_classes(G6E)["gpu"]
        assert spec["amiSelectorTerms"] == [{"alias": KARPENTER_AMI_ALIASES["al2023"]}] and "amiFamily" not in spec
        (root,) = spec["blockDeviceMappings"]
        assert root["deviceName"] == "/dev/xvda" and root["ebs"]["volumeSize"] == "500Gi"

    def test_a_bottlerocket_release_sizes_its_data_volume_and_keeps_an_encrypted_os_volume(self):
        spec = node_classes({**G6E, "ami": {"alias": "bottlerocket@v1.51.0"}, "root_volume_iops": 6000})["gpu"]
        assert spec["amiSelectorTerms"] == [{"alias": "bottlerocket@v1.51.0"}] and "amiFamily" not in spec
        os_volume, data = spec["blockDeviceMappings"]
        assert os_volume == {
            "deviceName": "/dev/xvda",
            "ebs": {"volumeSize": "4Gi", "volumeType": "gp3", "encrypted": True, "deleteOnTermination": True},
        }
        assert data["deviceName"] == "/dev/xvdb" and data["ebs"]["volumeSize"] == "500Gi"
        assert data["ebs"]["iops"] == 6000 and data["ebs"]["encrypted"] is True

    def test_own_amis_render_their_terms_and_family(self):
        ami = {
            "terms": [{"tags": {"team": "ml-platform", "release": "*"}, "owner": "self"}, {"id": "ami-0abc123"}],
            "family": "Bottlerocket",
        }
        spec = node_classes({**G6E, "ami": ami, "user_data": TOML})["gpu"]
        assert spec["amiSelectorTerms"] == [
            {"owner": "self", "tags": {"team": "ml-platform", "release": "*"}},
            {"id": "ami-0abc123"},
        ]
        assert spec["amiFamily"] == "Bottlerocket" and spec["userData"] == TOML
        assert [m["deviceName"] for m in spec["blockDeviceMappings"]] == ["/dev/xvda", "/dev/xvdb"]

    def test_an_ssm_parameter_and_a_name_are_terms_too(self):
        ami = {"terms": [{"ssm_parameter": "/golden/gpu/ami"}, {"name": "gpu-node-*", "owner": "123456789012"}]}
        spec = node_classes({**G6E, "ami": {**ami, "family": "AL2023"}})["gpu"]
        assert spec["amiSelectorTerms"] == [
            {"ssmParameter": "/golden/gpu/ami"},
            {"name": "gpu-node-*", "owner": "123456789012"},
        ]
        assert spec["amiFamily"] == "AL2023" and len(spec["blockDeviceMappings"]) == 1


class TestDevicePlugin:
    """Bottlerocket's NVIDIA variants run their own device plugin: the GPU operator's operands stay off their nodes
    (``nvidia.com/gpu.deploy.operands=false``, which the operator never strips, unlike its per-operand state labels
    on a node NFD has not labelled yet)."""

    LABEL = "nvidia.com/gpu.deploy.operands"

    def _pool_labels(self, pool: dict) -> dict[str, str]:
        parsed = pools(pool)
        placement = PoolPlacement(subnet_ids=["subnet-1"])
        chart = KarpenterPoolsChart(
            cdk8s.App(), "p", KarpenterPoolsProps(pools=parsed, node_role_name="n", placements={"gpu": placement})
        )
        (node_pool,) = [o for o in chart.to_json() if o["kind"] == "NodePool"]
        return node_pool["spec"]["template"]["metadata"]["labels"]

    def test_a_bottlerocket_gpu_pool_keeps_the_operators_operands_off(self):
        assert self._pool_labels({**G6E, "ami": {"alias": "bottlerocket@v1.51.0"}})[self.LABEL] == "false"
        own = {"terms": [{"id": "ami-0abc"}], "family": "Bottlerocket"}
        assert self._pool_labels({**G6E, "ami": own})[self.LABEL] == "false"

    def test_al2023_gpu_pools_and_bottlerocket_neuron_pools_keep_the_operators_rules(self):
        assert self.LABEL not in self._pool_labels(G6E)
        neuron = {"name": "gpu", "instance_types": ["inf2.8xlarge"], "ami": {"alias": "bottlerocket@v1.51.0"}}
        assert self.LABEL not in self._pool_labels(neuron)

    def test_a_bottlerocket_nvidia_node_group_too(self):
        from inferstack.plan.placement import pool_labels

        config = parse_config(
            {"compute": {"node_groups": [{"name": "br", "instance_type": "g6e.2xlarge", "ami": "bottlerocket_nvidia"}]}}
        )
        assert pool_labels(config.compute.node_groups[0])[self.LABEL] == "false"


class TestRefused:
    @pytest.mark.parametrize(
        ("alias", "named"),
        [
            ("bottlerocket@latest", "pin a release, e.g. bottlerocket@v1.51.0"),
            ("al2023@latest", "pin a release, e.g. al2023@v20260714"),
            ("al2@v20240101", "family@version of al2023, bottlerocket"),
            ("windows2022@latest", "family@version of al2023, bottlerocket"),
            ("al2023", "family@version"),
            ("al2023@v2026", "is not a release of AL2023"),
            ("bottlerocket@1.51", "is not a release of Bottlerocket"),
        ],
    )
    def test_an_alias_that_drifts_or_does_not_exist(self, alias, named):
        message = problem(ami={"alias": alias})
        assert "compute.karpenter_pools[0].ami.alias" in message and named in message

    def test_alias_and_terms_are_one_way_each(self):
        assert "exactly one of alias" in problem(ami={})
        both = {"alias": "al2023@v20260714", "terms": [{"id": "ami-1"}], "family": "AL2023"}
        assert "exactly one of alias" in problem(ami=both)
        assert "family: AL2023 or Bottlerocket" in problem(ami={"terms": [{"id": "ami-1"}]})
        assert "contradicts alias" in problem(ami={"alias": "al2023@v20260714", "family": "Bottlerocket"})

    @pytest.mark.parametrize(
        ("term", "named"),
        [
            ({"owner": "self"}, "selects nothing"),
            ({"id": "ami-1", "owner": "self"}, "id selects one AMI"),
            ({"id": "ami-1", "tags": {"a": "b"}}, "id selects one AMI"),
            ({"id": "i-123"}, "is not an AMI id"),
            ({"id": "ami-0abc\n"}, "is not an AMI id"),
            ({"ssm_parameter": "/golden/ami", "tags": {"team": "ml"}}, "ignores name, tags and owner"),
            ({"ssm_parameter": "/p", "owner": "self"}, "ignores name, tags and owner"),
            ({"id": "ami-1", "ssm_parameter": "/p"}, "id selects one AMI"),
            ({"tags": {"team": ""}}, "AWS tag"),
        ],
    )
    def test_a_term_the_crd_refuses(self, term, named):
        message = problem(ami={"terms": [term], "family": "AL2023"})
        assert "compute.karpenter_pools[0].ami.terms[0]" in message and named in message

    def test_user_data_in_the_other_familys_format(self):
        on_bottlerocket = problem(ami={"alias": "bottlerocket@v1.51.0"}, user_data=NODECONFIG)
        assert "user_data: Bottlerocket reads it as TOML" in on_bottlerocket
        on_al2023 = problem(user_data=TOML)
        assert "user_data: these are Bottlerocket settings" in on_al2023 and "bottlerocket@<release>" in on_al2023

    @pytest.mark.parametrize(
        ("toml", "named"),
        [
            ('[settings.kubernetes]\nmax-pods = "110"\n', "settings.kubernetes.max-pods must be an integer"),
            ("[settings.kubernetes]\nnode-labels = 'x'\n", "settings.kubernetes.node-labels must be a table"),
            ("[settings]\nkubernetes = 1\n", "settings.kubernetes must be a TOML table"),
            ("[settings.kubernetes.node-taints]\ndedicated = 'x:NoSchedule'\n", "node-taints must be a table of lists"),
            ("[settings.kubernetes]\nseccomp-default = 'yes'\n", "must be true or false"),
        ],
    )
    def test_bottlerocket_settings_karpenter_cannot_decode(self, toml, named):
        message = problem(ami={"alias": "bottlerocket@v1.51.0"}, user_data=toml)
        assert named in message and "fail every launch" in message

    def test_the_fix_names_the_field_of_the_pools_ami(self):
        own = problem(ami={"terms": [{"id": "ami-0abc"}], "family": "AL2023"}, user_data=TOML)
        assert "set ami.family: Bottlerocket" in own

    def test_user_data_each_family_reads_is_accepted(self):
        assert pools({**G6E, "ami": {"alias": "bottlerocket@v1.51.0"}, "user_data": TOML})[0].user_data == TOML
        for user_data in (NODECONFIG, "#!/bin/bash\necho ready\n", "MIME-Version: 1.0\nContent-Type: text/plain\n"):
            assert pools({**G6E, "user_data": user_data})[0].user_data == user_data


class TestCustomAmiRule:
    """KARPENTER-CUSTOM-AMI: an accelerator pool on its own AMIs is warned that the drivers must be on them."""

    def _findings(self, pool):
        return list(karpenter_nodes.check_custom_ami(parse_config({"compute": {"karpenter_pools": [pool]}})))

    def test_a_gpu_pool_on_its_own_amis_is_warned_about_the_nvidia_driver(self):
        (finding,) = self._findings({**G6E, "ami": OWN})
        assert finding.path == "compute.karpenter_pools[0].ami.terms" and finding.severity == "warning"
        assert "NVIDIA driver and container toolkit" in finding.message and "ami.alias" in finding.fix

    def test_a_neuron_pool_is_warned_about_the_neuron_driver(self):
        (finding,) = self._findings({"name": "inf", "instance_types": ["inf2.8xlarge"], "ami": OWN})
        assert "Neuron driver" in finding.message

    def test_releases_and_cpu_pools_are_compliant(self):
        assert self._findings({**G6E, "ami": {"alias": "bottlerocket@v1.51.0"}}) == []
        assert self._findings({"name": "cpu", "instance_types": ["m7i.2xlarge"], "ami": OWN}) == []


class TestNeuronDevicesRule:
    """BOTTLEROCKET-NEURON-DEVICES: a Bottlerocket Neuron pool hands the devices to the non-root serving user."""

    INF2: ClassVar[dict] = {"name": "inf", "instance_types": ["inf2.8xlarge"], "ami": {"alias": "bottlerocket@v1.51.0"}}

    def _findings(self, pool):
        from inferstack.rules import bottlerocket

        return list(bottlerocket.check_neuron_devices(parse_config({"compute": {"karpenter_pools": [pool]}})))

    def test_without_device_ownership_it_warns_naming_the_setting(self):
        (finding,) = self._findings(self.INF2)
        assert finding.path == "compute.karpenter_pools[0].user_data" and finding.severity == "warning"
        assert "device-ownership-from-security-context" in finding.fix and "not confirmed offline" in finding.message
        other = "[settings.kubernetes]\nmax-pods = 50\n"
        assert len(self._findings({**self.INF2, "user_data": other})) == 1

    def test_with_it_on_or_on_al2023_or_a_gpu_pool_it_is_silent(self):
        on = "[settings.kubernetes]\ndevice-ownership-from-security-context = true\n"
        assert self._findings({**self.INF2, "user_data": on}) == []
        assert self._findings({**self.INF2, "ami": {"alias": "al2023@v20260714"}}) == []
        assert self._findings({**G6E, "ami": {"alias": "bottlerocket@v1.51.0"}}) == []
