"""Regression tests, with the exact inputs, for what the property gate (tests/test_property.py) and issue 16's list
still found: each gets one named error — or, where the config is a deliberate choice, synth builds it."""

from __future__ import annotations

import copy

import pytest
import yaml

from inferstack.config import ConfigError, load_config, parse_config
from inferstack.config.edit import with_changes
from inferstack.rules import evaluate
from tests.synth import ROOT

DEFAULT = yaml.safe_load((ROOT / "inferstack.yaml").read_text())


def problems(data: dict) -> dict[str, str]:
    with pytest.raises(ConfigError) as raised:
        parse_config(data)
    return {p.path: p.message for p in raised.value.problems}


def default_with(change) -> dict:
    data = copy.deepcopy(DEFAULT)
    change(data)
    return data


def test_a_nul_byte_is_a_named_yaml_error(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_bytes(b"\x00name: x\n")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    (problem,) = raised.value.problems
    assert problem.path == "line 1, column 1" and "#x0000" in problem.message


def test_a_union_field_names_the_users_path():
    found = problems(
        {"compute": {"node_groups": [{"name": "g", "instance_type": "g6e.xlarge", "availability_zone": {"a": 1}}]}}
    )
    assert list(found) == ["compute.node_groups[0].availability_zone"]  # not …function-after[_check_az(), str]
    assert "string" in found["compute.node_groups[0].availability_zone"]
    assert "integer" in found["compute.node_groups[0].availability_zone"]


def test_a_non_string_mapping_key_names_its_mapping():
    assert problems({"tags": {True: "x"}}) == {"tags": "key 1: input should be a valid string (quote it)"}


@pytest.mark.parametrize(("field", "value"), [("memory_gib", 1e6), ("cpu", 1e6), ("shm_gib", 1e7)])
def test_resources_are_bounded_by_real_instances(field, value):
    # 1e6 GiB rendered as "1e+06Gi", which no Kubernetes quantity parser accepts
    found = problems(default_with(lambda d: d["workloads"][0].setdefault("resources", {}).__setitem__(field, value)))
    assert f"workloads[0].resources.{field}" in found


def test_a_prometheus_url_is_keda_server_address():
    bad = default_with(lambda d: d["workloads"][0].__setitem__("autoscaling", {"prometheus_url": "http://x y\n"}))
    assert "workloads[0].autoscaling.prometheus_url" in problems(bad)


def test_an_addon_version_is_an_eks_addon_version():
    found = problems({"cluster": {"addon_versions": {"vpc-cni": " v1\n"}}})
    assert "eksbuild" in found["cluster.addon_versions.vpc-cni"]
    assert parse_config({"cluster": {"addon_versions": {"vpc-cni": "v1.19.2-eksbuild.1"}}})


def test_a_suggestion_into_an_unset_section_is_checked_not_crashed():
    """A Dynamo role left to its default: MODEL-FIT's suggestion sets workloads[0].decode.engine.… (TypeError once)."""
    data = yaml.safe_load((ROOT / "examples" / "dynamo-disagg-efa.yaml").read_text())
    del data["workloads"][0]["decode"]
    config = parse_config(data)
    report = evaluate(config)  # the decode default (TP 1) does not fit: the rule reports it, with checked fixes
    assert any(f.rule == "MODEL-FIT" and f.path.startswith("workloads[0].decode.engine") for f in report.errors)
    assert with_changes(config, {"workloads[0].decode.engine.tensor_parallel_size": 8}) is not None
    assert with_changes(config, {"workloads[5].engine.tensor_parallel_size": 8}) is None


@pytest.mark.slow
@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.setdefault("network", {}).__setitem__("flow_logs", False),
        lambda d: d.setdefault("storage", {}).setdefault("model_bucket", {}).__setitem__("access_logs", False),
    ],
    ids=["flow_logs-false", "access_logs-false"],
)
def test_logs_turned_off_on_purpose_synthesize_with_cdk_nag(change, synth_config):
    """check accepted these and cdk-nag refused them at synth: synth now builds them, the choice recorded."""
    config = parse_config(default_with(change))
    assert not evaluate(config).errors
    synth_config(config, nag=True)


@pytest.mark.parametrize(
    ("path", "change"),
    [
        ("workloads[0].replicas", lambda d: d["workloads"][0].__setitem__("replicas", True)),
        (
            "workloads[0].engine.max_model_len",
            lambda d: d["workloads"][0].setdefault("engine", {}).__setitem__("max_model_len", False),
        ),
    ],
)
def test_a_yaml_boolean_is_not_read_as_a_number(path, change):
    found = problems(default_with(change))
    assert "is a boolean — this field is a number" in found[path]


def test_a_boolean_for_the_workload_list_is_a_named_error():
    """Found by the property gate: ``workloads: true`` hashed the union's annotation arguments (TypeError)."""
    with pytest.raises(ConfigError, match=r"workloads"):
        parse_config({"workloads": True})


def test_a_long_name_with_bench_is_a_named_error_not_a_synth_traceback():
    """A 60-character workload name is valid, but its CronJob <name>-bench would pass Kubernetes' 52."""
    data = {
        "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]},
        "workloads": [{"name": "a" * 60, "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}, "bench": {}}],
    }
    (finding,) = evaluate(parse_config(data)).errors
    assert finding.rule == "BENCH-TARGET" and finding.path == "workloads[0].name"
    assert "at most 46 characters" in finding.fix


def test_network_policy_names_are_dns_subdomains():
    """NetworkPolicy names are DNS subdomains (≤ 253), not labels (≤ 63): a long composed name renders."""
    import cdk8s

    from inferstack.constructs.network_policy import NetworkPolicy, NetworkPolicyProps

    chart = cdk8s.Chart(cdk8s.App(), "c")
    NetworkPolicy(chart, "p", NetworkPolicyProps(name="a" * 70 + ".b", namespace="n", pods={}, ingress=()))
    assert chart.to_json()[0]["metadata"]["name"] == "a" * 70 + ".b"
