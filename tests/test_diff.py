"""``inferstack diff OLD NEW`` (issue 24 §9, "changes that lose nothing"): GIVEN two configs, WHEN both are
synthesized, THEN every stateful resource the change replaces, renames, orphans or deletes is listed with the data
at stake — and a change that loses nothing lists nothing.

The pairs are built from examples/litellm-gateway.yaml (a gateway with its own Postgres, Prometheus, the model
bucket): four synthesized configs in all. The rules themselves are also checked on small hand-made templates."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from inferstack import diff
from inferstack.cli import main
from inferstack.config import parse_config
from inferstack.diff import Change, Snapshot, claims, compare, unaccepted
from tests.synth import ROOT

GATEWAY = ROOT / "examples" / "litellm-gateway.yaml"
POSTGRES_CLAIM = "data-llm-gateway-postgres-0"
PROMETHEUS_CLAIM = "prometheus-kube-prometheus-stack-prometheus-db-prometheus-kube-prometheus-stack-prometheus-0"


def _gateway() -> dict[str, Any]:
    return yaml.safe_load(GATEWAY.read_text())


def with_bucket_name(data: dict[str, Any]) -> dict[str, Any]:
    data.setdefault("storage", {}).setdefault("model_bucket", {})["bucket_name"] = "gateway-models-0123"
    return data


def with_gateway_renamed(data: dict[str, Any]) -> dict[str, Any]:
    (gateway,) = [w for w in data["workloads"] if w["name"] == "llm-gateway"]
    gateway["name"] = "ai-gateway"
    return data


def with_more_replicas(data: dict[str, Any]) -> dict[str, Any]:
    data["workloads"][0]["replicas"] = 3
    return data


VARIANTS = {"bucket_name": with_bucket_name, "renamed": with_gateway_renamed, "replicas": with_more_replicas}


@pytest.fixture(scope="module")
def gateway(gateway_app, synth_config) -> dict[str, Any]:
    """The gateway example and three variants of it, synthesized once."""
    apps = {"base": gateway_app}
    for name, change in VARIANTS.items():
        apps[name] = synth_config(parse_config(change(_gateway())))
    return apps


# -- the two known cases, and changes that lose nothing --------------------------------------------------------------


def test_setting_the_bucket_name_replaces_the_model_bucket(gateway):
    changes = compare(gateway["base"], gateway["bucket_name"])
    (change,) = [c for c in changes if c.kind == "AWS::S3::Bucket"]
    # the model volumes over the new bucket are new claims (charts.workload.model_claim): views, nothing lost
    views = [c for c in changes if c is not change]
    assert views and all(c.kind == "PersistentVolumeClaim" and not c.lost for c in views)
    assert (change.kind, change.where, change.change) == ("AWS::S3::Bucket", "gateway-storage", Change.REPLACED)
    assert change.resource.startswith("ModelBucket")
    assert change.lost
    assert "model weights" in change.at_stake
    assert "BucketName changes" in change.at_stake
    assert "the old one stays with the data, outside the stack (UpdateReplacePolicy: Retain)" in change.at_stake


def test_renaming_a_gateway_with_its_own_postgres_orphans_its_volume(gateway):
    (change,) = compare(gateway["base"], gateway["renamed"])
    assert (change.kind, change.where, change.resource) == ("PersistentVolumeClaim", "gateway", POSTGRES_CLAIM)
    assert change.change is Change.RENAMED
    assert change.lost
    assert "gateway/data-ai-gateway-postgres-0 starts on an empty volume" in change.at_stake
    assert "the old claim stays with the data, used by no pod" in change.at_stake
    assert "virtual keys, teams and spend look lost" in change.at_stake


def test_no_change_reports_nothing(gateway):
    assert compare(gateway["base"], gateway["base"]) == []


def test_more_replicas_reports_nothing(gateway):
    objects = [json.dumps(o, sort_keys=True) for o in gateway["replicas"].kubernetes_objects()]
    assert objects != [json.dumps(o, sort_keys=True) for o in gateway["base"].kubernetes_objects()]  # it did change
    assert compare(gateway["base"], gateway["replicas"]) == []


def test_the_claims_are_the_ones_kubernetes_makes(gateway):
    found = claims(gateway["base"])
    postgres = found[("gateway", POSTGRES_CLAIM)]
    assert (postgres.role, postgres.storage_class, postgres.outlives_owner) == (
        "litellm-postgres",
        "inferstack-gp3",
        True,
    )
    prometheus = found[("monitoring", PROMETHEUS_CLAIM)]
    assert prometheus.role == "prometheus"
    (view,) = [c.view for (namespace, name), c in found.items() if name.startswith("qwen-sglang-model-s3-")]
    assert view is not None and view.startswith("PersistentVolume gateway-qwen-sglang-model-s3-")
    assert view.endswith(", a read-only view of s3://<model bucket>/models/Qwen/Qwen3-8B/main/")


def test_the_command_synthesizes_like_cdk_synth(gateway, monkeypatch):
    """``diff`` synthesizes with ./cdk.json's context, as the tests (and ``cdk synth``) do: same templates."""
    monkeypatch.chdir(ROOT)
    assert diff.synthesize(gateway["base"].config).templates == gateway["base"].templates


# -- the command ----------------------------------------------------------------------------------------------------


@pytest.fixture
def command(gateway, monkeypatch, tmp_path):
    """Run ``inferstack diff`` on config files, the variants' synthesis taken from the fixture."""
    synthesized = {app.config.model_dump_json(): app for app in gateway.values()}
    monkeypatch.setattr(diff, "synthesize", lambda config: synthesized[config.model_dump_json()])

    def run(new: str, *flags: str, old: str = "base") -> int:
        paths = []
        for name in (old, new):
            path = tmp_path / f"{name}.yaml"
            data = _gateway() if name == "base" else VARIANTS[name](_gateway())
            path.write_text(yaml.safe_dump(data))
            paths.append(str(path))
        return main(["diff", *paths, *flags])

    return run


def test_the_command_prints_the_replaced_bucket_and_fails(command, capsys):
    assert command("bucket_name") == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["resource", "stack/namespace", "change", "data", "at", "stake"]
    row = next(line for line in out.splitlines() if line.startswith("AWS::S3::Bucket ModelBucket"))
    assert row.split()[2:4] == ["gateway-storage", "replaced"]
    assert "--accept-loss gateway-storage/ModelBucket" in out


def test_an_accepted_loss_is_still_printed_and_passes(command, capsys):
    assert command("renamed", "--accept-loss", f"gateway/{POSTGRES_CLAIM}") == 0
    out = capsys.readouterr().out
    assert f"PersistentVolumeClaim {POSTGRES_CLAIM}" in out
    assert "1 loss accepted" in out


def test_a_loss_accepted_by_its_name_alone_passes_and_a_stale_acceptance_is_named(command, capsys):
    assert command("bucket_name", "--accept-loss", "ModelBucketB33D855B", "--accept-loss", "gateway/nothing") == 0
    captured = capsys.readouterr()
    assert "warning: --accept-loss gateway/nothing: this change loses no such resource" in captured.err


def test_a_change_that_loses_nothing_passes(command, capsys):
    assert command("replicas") == 0
    assert "no stateful resource is replaced, renamed, orphaned or deleted" in capsys.readouterr().out


def test_a_bad_config_exits_2_with_its_problems_and_no_traceback(tmp_path, capsys):
    good, bad = tmp_path / "old.yaml", tmp_path / "new.yaml"
    good.write_text(GATEWAY.read_text())
    bad.write_text(GATEWAY.read_text().replace("routing_strategy: least-busy", "routing_strategy: fastest"))
    assert main(["diff", str(good), str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: 1 problem in the inferstack config" in err
    assert "Traceback" not in err
    assert main(["diff", str(good), str(tmp_path / "missing.yaml")]) == 2
    assert "cannot read the config file" in capsys.readouterr().err


def test_the_help_documents_the_acknowledgement(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["diff", "--help"])
    assert exit_.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--accept-loss RESOURCE" in out
    assert "Exit 0 when nothing stateful is lost, 1 when something is (unless accepted), 2" in out


# -- the rules, on hand-made templates ------------------------------------------------------------------------------

CONFIG = parse_config({"name": "demo"})


def _snapshot(resources: dict[str, Any], stack: str = "demo-storage") -> Snapshot:
    return Snapshot(CONFIG, {stack: {"Resources": resources}})


def _resource(cfn_type: str, retain: bool = True, **properties: Any) -> dict[str, Any]:
    resource: dict[str, Any] = {"Type": cfn_type, "Properties": properties}
    if retain:
        resource |= {"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain"}
    return resource


def _manifest(*objects: dict[str, Any]) -> dict[str, Any]:
    return {"Type": "Custom::AWSCDK-EKS-KubernetesResource", "Properties": {"Manifest": json.dumps(list(objects))}}


def _claim(name: str, storage_class: str, size: str = "20Gi") -> dict[str, Any]:
    spec = {
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": storage_class,
        "resources": {"requests": {"storage": size}},
    }
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "apps"},
        "spec": spec,
    }


def _storage_class(name: str, policy: str) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "reclaimPolicy": policy,
    }


@pytest.mark.parametrize(
    ("retain", "expected"), [(True, Change.ORPHANED), (False, Change.DELETED)], ids=["retained", "not-retained"]
)
def test_a_removed_logical_id_is_orphaned_when_retained_else_deleted(retain, expected):
    old = _snapshot({"LogsAB12CD34": _resource("AWS::Logs::LogGroup", retain=retain)})
    (change,) = compare(old, _snapshot({}))
    assert (change.resource, change.change, change.lost) == ("LogsAB12CD34", expected, True)


def test_a_changed_logical_id_is_a_rename():
    old = _snapshot({"ModelBucketB33D855B": _resource("AWS::S3::Bucket")})
    new = _snapshot({"ModelsBucket0A1B2C3D": _resource("AWS::S3::Bucket")})
    (change,) = compare(old, new)
    assert (change.resource, change.change) == ("ModelBucketB33D855B", Change.RENAMED)
    assert "ModelsBucket0A1B2C3D is a new, empty bucket" in change.at_stake


def test_a_renamed_platform_is_new_stacks_that_start_empty():
    old = _snapshot({"ModelBucketB33D855B": _resource("AWS::S3::Bucket")})
    other = Snapshot(parse_config({"name": "other"}), {"other-storage": old.templates["demo-storage"]})
    (change,) = compare(old, other)
    assert (change.where, change.change, change.lost) == ("demo-storage", Change.REPLACED, True)
    assert "the stack is now other-storage, a new stack with a new, empty bucket" in change.at_stake


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ({"SubnetIds": ["a"]}, {"SubnetIds": ["b"]}, Change.REPLACED),
        (
            {"LustreConfiguration": {"DeploymentType": "PERSISTENT_2"}},
            {"LustreConfiguration": {"DeploymentType": "SCRATCH_2"}},
            Change.REPLACED,
        ),
        ({"StorageCapacity": 4800}, {"StorageCapacity": 2400}, Change.REFUSED),
        ({"StorageCapacity": 2400}, {"StorageCapacity": 4800}, None),
        ({"Tags": [{"Key": "a", "Value": "1"}]}, {"Tags": [{"Key": "a", "Value": "2"}]}, None),
    ],
    ids=["subnet", "deployment-type", "smaller", "larger", "tags"],
)
def test_fsx_is_replaced_by_the_properties_cloudformation_documents(before, after, expected):
    old = _snapshot({"FileSystem8A8E25C0": _resource("AWS::FSx::FileSystem", **before)})
    new = _snapshot({"FileSystem8A8E25C0": _resource("AWS::FSx::FileSystem", **after)})
    assert [c.change for c in compare(old, new)] == ([expected] if expected else [])


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ({"PerformanceMode": "generalPurpose"}, {"PerformanceMode": "maxIO"}, Change.REPLACED),
        ({"Encrypted": True}, {"Encrypted": False}, Change.REPLACED),
        ({"ThroughputMode": "elastic"}, {"ThroughputMode": "bursting"}, None),
    ],
    ids=["performance-mode", "encryption", "throughput"],
)
def test_efs_is_replaced_by_the_properties_cloudformation_documents(before, after, expected):
    old = _snapshot({"EfsFileSystem37910666": _resource("AWS::EFS::FileSystem", **before)})
    new = _snapshot({"EfsFileSystem37910666": _resource("AWS::EFS::FileSystem", **after)})
    assert [c.change for c in compare(old, new)] == ([expected] if expected else [])


def test_a_removed_efs_is_orphaned_with_its_files():
    old = _snapshot({"EfsFileSystem37910666": _resource("AWS::EFS::FileSystem")})
    (change,) = compare(old, _snapshot({}))
    assert change.change is Change.ORPHANED and "EFS caches" in change.at_stake


def test_a_key_spec_change_is_refused_and_loses_nothing():
    old = _snapshot({"KeyAB12CD34": _resource("AWS::KMS::Key", KeySpec="SYMMETRIC_DEFAULT")})
    new = _snapshot({"KeyAB12CD34": _resource("AWS::KMS::Key", KeySpec="RSA_2048")})
    (change,) = compare(old, new)
    assert (change.change, change.lost) == (Change.REFUSED, False)
    assert unaccepted([change], []) == []


@pytest.mark.parametrize(
    ("policy", "expected"), [("Retain", Change.ORPHANED), ("Delete", Change.DELETED)], ids=["retain", "delete"]
)
def test_a_removed_claim_orphans_or_deletes_its_volume_by_its_storage_class(policy, expected):
    old = _snapshot({"Apps": _manifest(_storage_class("fast", policy), _claim("cache", "fast"))}, "demo-workloads")
    new = _snapshot({"Apps": _manifest(_storage_class("fast", policy))}, "demo-workloads")
    (change,) = compare(old, new)
    assert (change.resource, change.where, change.change, change.lost) == ("cache", "apps", expected, True)
    assert f"reclaims {policy}" in change.at_stake


def test_a_claim_moving_to_another_manifest_comes_back_empty():
    old = _snapshot({"A": _manifest(_claim("cache", "fast"))}, "demo-workloads")
    new = _snapshot({"B": _manifest(_claim("cache", "fast"))}, "demo-workloads")
    (change,) = compare(old, new)
    assert (change.change, change.lost) == (Change.REPLACED, True)
    assert "it moves from A (workloads) to B (workloads)" in change.at_stake


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        (_claim("cache", "fast", "10Gi"), [Change.REFUSED]),
        (_claim("cache", "fast", "40Gi"), []),
        (_claim("cache", "slow"), [Change.REFUSED]),
    ],
    ids=["smaller", "larger", "other-class"],
)
def test_a_claim_only_grows(after, expected):
    old = _snapshot({"A": _manifest(_claim("cache", "fast"))}, "demo-workloads")
    assert [c.change for c in compare(old, _snapshot({"A": _manifest(after)}, "demo-workloads"))] == expected


def _cache_claims(workload: str) -> list[dict[str, Any]]:
    """The claims inferstack renders for ``workload``'s compile and Hub caches (the chart's own labels)."""
    from tests.charts.conftest import render

    data = {
        "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"], "availability_zone": 0}]},
        "workloads": [
            {
                "name": workload,
                "namespace": "apps",
                "pool": "gpu",
                "model": {"id": "Qwen/Qwen3-8B", "source": {"type": "hf"}},
                "caches": {"compile": {"size_gib": 64}, "huggingface": {"size_gib": 64}},
            }
        ],
    }
    return [o for o in render(data) if o["kind"] == "PersistentVolumeClaim"]


def test_a_renamed_workloads_caches_are_paired_cache_for_cache():
    """Each cache claim pairs with the same cache of the renamed workload (not a compile cache with a Hub cache),
    and the finding says what an empty cache costs: a recompile or a download, nothing lost."""
    classes = (_storage_class("inferstack-gp3", "Retain"), _storage_class("inferstack-model-cache", "Retain"))
    old = _snapshot({"Apps": _manifest(*classes, *_cache_claims("chat"))}, "demo-workloads")
    new = _snapshot({"Apps": _manifest(*classes, *_cache_claims("talk"))}, "demo-workloads")
    changes = {c.resource: c for c in compare(old, new)}
    assert set(changes) == {"chat-compile-cache", "chat-hf-cache"}
    assert all(c.change is Change.RENAMED for c in changes.values())
    assert "apps/talk-compile-cache starts on an empty volume" in changes["chat-compile-cache"].at_stake
    assert "compiled again at the next start" in changes["chat-compile-cache"].at_stake
    assert "apps/talk-hf-cache starts on an empty volume" in changes["chat-hf-cache"].at_stake
    assert "downloaded again" in changes["chat-hf-cache"].at_stake
