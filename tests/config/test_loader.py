"""The config: defaults, and every kind of mistake reported as ``path: value — what is valid``."""

from __future__ import annotations

import json
import textwrap

import pytest

from inferstack.config import ConfigError, EndpointAccess, InferstackConfig, load_config, parse_config


def problems(data: dict) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        parse_config(data)
    return [str(p) for p in exc.value.problems]


def test_defaults_are_the_secure_foundation():
    config = InferstackConfig()
    assert config.cluster.kubernetes_version == "1.36"
    assert config.cluster.endpoint_access is EndpointAccess.PRIVATE
    assert len(config.cluster.control_plane_logs) == 5
    assert config.network.nat_gateways == 1 and config.network.flow_logs
    assert config.cluster_name == "inferstack"


def test_three_mistakes_are_all_reported_with_their_paths(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        textwrap.dedent("""
        network:
          vpc_cidr: 10.0.0.0/8
        cluster:
          endpoint_acess: private
          system_nodes:
            instance_types: [m6i.xlarg]
    """)
    )
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    report = str(exc.value)
    assert "3 problems" in report
    assert "network.vpc_cidr: '10.0.0.0/8' — a VPC CIDR block must be between /16 and /24" in report
    assert "cluster.endpoint_acess: unknown key — valid keys here: " in report and "endpoint_access" in report
    assert "cluster.system_nodes.instance_types[0]: 'm6i.xlarg' — unknown instance type — did you mean m6i.xlarge" in (
        report
    )


def test_unknown_instance_type_lists_near_matches():
    (line,) = problems({"cluster": {"system_nodes": {"instance_types": ["m7i.xlarge", "c6i.3xlarge"]}}})
    assert line.startswith("cluster.system_nodes.instance_types[1]: 'c6i.3xlarge' — unknown instance type")
    assert "c6i." in line.split("did you mean", 1)[1]


def test_accelerated_types_are_refused_for_system_nodes():
    (line,) = problems({"cluster": {"system_nodes": {"instance_types": ["g6e.2xlarge"]}}})
    assert "g6e.2xlarge carry accelerators" in line and "m6i.xlarge" in line


def test_invalid_kubernetes_version_lists_supported():
    (line,) = problems({"cluster": {"kubernetes_version": "1.29"}})
    assert line == "cluster.kubernetes_version: '1.29' — unsupported Kubernetes version — supported: 1.35, 1.36"


def test_wrong_type_and_bad_enum():
    lines = problems({"network": {"nat_gateways": "two"}, "cluster": {"endpoint_access": "open"}})
    assert any(line.startswith("network.nat_gateways: 'two' — input should be a valid integer") for line in lines)
    assert "cluster.endpoint_access: 'open' — must be one of 'private', 'public_and_private' or 'public'" in lines


def test_bad_cidr_and_bad_names():
    lines = problems(
        {
            "name": "1bad",
            "cluster": {"name": "has space", "public_access_cidrs": ["300.0.0.0/8"], "admin_principal_arns": ["bob"]},
        }
    )
    assert any(line.startswith("name: '1bad' — not a valid stack name prefix") for line in lines)
    assert any(line.startswith("cluster.name: 'has space' — not a valid EKS cluster name") for line in lines)
    assert any(line.startswith("cluster.public_access_cidrs[0]: '300.0.0.0/8' — not an IPv4 CIDR") for line in lines)
    assert any(
        line.startswith("cluster.admin_principal_arns[0]: 'bob' — not an IAM role or user ARN") for line in lines
    )


def test_nat_gateways_cannot_exceed_zones():
    (line,) = problems({"network": {"max_azs": 2, "nat_gateways": 3}})
    assert line == "network.nat_gateways: 3 — at most one per Availability Zone; the VPC has 2"


def test_node_sizes_must_be_ordered():
    (line,) = problems({"cluster": {"system_nodes": {"min_size": 3, "desired_size": 2, "max_size": 4}}})
    assert line == "cluster.system_nodes.desired_size: need min_size ≤ desired_size ≤ max_size, got 3 ≤ 2 ≤ 4"


def test_fixed_environment_requires_zones():
    (line,) = problems({"env": {"account": "123456789012", "region": "us-west-2"}})
    assert line.startswith("network.availability_zones: required when env.account and env.region are set")
    assert "[us-west-2a, us-west-2b]" in line


def test_zones_must_be_in_the_region():
    (line,) = problems(
        {"env": {"region": "eu-west-1"}, "network": {"availability_zones": ["us-west-2a", "us-west-2b"]}}
    )
    assert line.startswith("network.availability_zones: zones are not in env.region eu-west-1")


def test_zones_must_be_distinct_and_at_least_two():
    assert problems({"network": {"availability_zones": ["us-west-2a"]}}) == [
        "network.availability_zones: ['us-west-2a'] — EKS needs subnets in at least 2 Availability Zones; list ≥ 2"
    ]
    assert "only once" in problems({"network": {"availability_zones": ["us-west-2a", "us-west-2a"]}})[0]


def test_unknown_addon_pin_lists_pinnable_addons():
    (line,) = problems({"cluster": {"addon_versions": {"vpc_cni": "v1"}}})
    assert "unknown add-on vpc_cni" in line and "vpc-cni" in line


def test_acknowledgement_needs_a_reason():
    (line,) = problems({"acknowledge": [{"rule": "EKS-LOGS", "reason": "no"}]})
    assert line.startswith("acknowledge[0].reason: 'no' — ")


def test_yaml_syntax_error_names_the_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("network:\n  vpc_cidr: [10.0.0.0/16\n")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert "line " in str(exc.value) and "invalid YAML" in str(exc.value)


def test_duplicate_yaml_keys_are_errors(tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text("name: a\nname: b\n")
    with pytest.raises(ConfigError, match="duplicate key 'name'"):
        load_config(path)


def test_missing_file_and_non_mapping(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the config file"):
        load_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="must be a mapping"):
        parse_config(["a", "b"])


def test_every_example_config_loads():
    from tests.synth import CONFIGS

    for path in CONFIGS:
        assert isinstance(load_config(path), InferstackConfig), path


def test_committed_json_schema_is_current():
    from tests.synth import ROOT

    committed = json.loads((ROOT / "inferstack.schema.json").read_text())
    assert committed == InferstackConfig.model_json_schema(by_alias=True), "run `make schema`"
    assert committed["additionalProperties"] is False


def test_every_config_field_is_described_for_editors():
    """Field docstrings (defaults, units) are the schema's descriptions: hover in an editor shows them."""
    schema = InferstackConfig.model_json_schema(by_alias=True)
    fields = [(name, d.get("properties", {})) for name, d in schema["$defs"].items()]
    fields.append(("InferstackConfig", {k: v for k, v in schema["properties"].items() if k != "$schema"}))
    undescribed = [
        f"{model}.{field}" for model, props in fields for field, spec in props.items() if not spec.get("description")
    ]
    assert undescribed == []
    engine = schema["$defs"]["VllmEngineConfig"]["properties"]["max_model_len"]["description"]
    assert "the model's context" in engine and "8192" in engine
