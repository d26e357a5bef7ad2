"""GIVEN a workload whose model is mounted (Mountpoint, FSx, EFS), WHEN what the volume mounts changes, THEN its
PersistentVolume and claim are new objects the pod template names — a PV's source and a claim's access modes are
immutable (the API server refuses the update), and a Mountpoint pod keeps the prefix it mounted, so an edited PV
would fail the deploy or leave the replicas on the old weights — and WHEN nothing it mounts changes, the names hold,
whatever the CDK tokens' numbering."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
import yaml

from inferstack.charts.workload import StorageRefs, storage_identities
from inferstack.cli import placeholder_refs
from inferstack.config import InferstackConfig, load_config, parse_config
from inferstack.plan.workloads import workloads_plan
from inferstack.stacks.workloads import render_workloads
from tests.synth import EFS_ID, ROOT, SYNC_IMAGE

REFS = StorageRefs(
    region="us-east-1",
    bucket="${Token[TOKEN.101]}",
    fsx_id="${Token[TOKEN.102]}",
    fsx_dns_name="${Token[TOKEN.103]}",
    fsx_mount_name="${Token[TOKEN.104]}",
    efs_id="${Token[TOKEN.105]}",
    sync_image=SYNC_IMAGE,
)
RENUMBERED = StorageRefs(
    region="us-east-1",
    bucket="${Token[TOKEN.201]}",
    fsx_id="${Token[TOKEN.202]}",
    fsx_dns_name="${Token[TOKEN.203]}",
    fsx_mount_name="${Token[TOKEN.204]}",
    efs_id="${Token[TOKEN.205]}",
    sync_image=SYNC_IMAGE,
)
SOURCES = {
    "s3_mount": {"type": "s3_mount"},
    "fsx": {"type": "fsx"},
    "efs": {"type": "efs", "path": "/models/qwen3-8b"},
}


STORAGE = {"model_bucket": {}, "fsx": {"storage_capacity_gib": 1200}, "efs": {}}


def config_of(source: dict[str, Any], storage: dict[str, Any] | None = None, **model: Any) -> InferstackConfig:
    return parse_config(
        {
            "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]},
            "storage": STORAGE if storage is None else storage,
            "workloads": [
                {
                    "name": "chat",
                    "pool": "gpu",
                    "sync_model": False,
                    "model": {"id": "Qwen/Qwen3-8B", "source": source, **model},
                }
            ],
        }
    )


def render(
    source: dict[str, Any],
    refs: StorageRefs = REFS,
    storage: dict[str, Any] | None = None,
    *,
    identities: bool = True,
    **model: Any,
) -> list[dict[str, Any]]:
    """The workload's objects, rendered as synth renders them (``refs`` with the config's volume identities)."""
    config = config_of(source, storage, **model)
    if identities:
        refs = dataclasses.replace(refs, volume_identities=storage_identities(config.storage))
    (item,) = render_workloads(workloads_plan(config), None, refs)
    return item.manifest


def claim_of(objects: list[dict[str, Any]]) -> str:
    (claim,) = [o["metadata"]["name"] for o in objects if o["kind"] == "PersistentVolumeClaim"]
    return claim


def template(objects: list[dict[str, Any]]) -> str:
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    return json.dumps(deployment["spec"]["template"], sort_keys=True)


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_the_claim_is_named_after_what_it_mounts_and_the_pods_name_it(source):
    objects = render(SOURCES[source])
    claim = claim_of(objects)
    assert claim.startswith(f"chat-model-{source.split('_')[0]}-") and len(claim.rsplit("-", 1)[1]) == 8
    (volume,) = [o for o in objects if o["kind"] == "PersistentVolume"]
    assert volume["metadata"]["name"] == f"inference-{claim}" and volume["spec"]["claimRef"]["name"] == claim
    assert f'"claimName": "{claim}"' in template(objects)


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("identities", [True, False], ids=["from-config", "from-refs"])
def test_renumbered_tokens_rename_nothing(source, identities):
    """Token text follows construction order (another workload renumbers it): a name built on it would roll every
    workload's pods on an unrelated change — with the config's identities (synth) and without (refs alone)."""
    first = claim_of(render(SOURCES[source], identities=identities))
    assert first == claim_of(render(SOURCES[source], RENUMBERED, identities=identities))


SNAPSHOTS = ROOT / "tests" / "gates" / "__snapshots__" / "test_snapshots"
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.yaml"))


def model_claims(objects: list[dict[str, Any]]) -> set[str]:
    return {
        o["metadata"]["name"]
        for o in objects
        if o and o["kind"] == "PersistentVolumeClaim" and "-model-" in o["metadata"]["name"]
    }


@pytest.mark.parametrize("example", EXAMPLES)
def test_check_names_every_examples_model_claims_as_synth_did(example):
    """What synth rendered (the reviewed snapshots) and what ``inferstack check`` renders name the same claims: an
    override naming a model's PersistentVolume passes both or neither."""
    config = load_config(ROOT / "examples" / f"{example}.yaml")
    checked = model_claims(
        [o for item in render_workloads(workloads_plan(config), None, placeholder_refs(config)) for o in item.manifest]
    )
    synthesized = model_claims(
        [
            o
            for path in SNAPSHOTS.glob(f"test_kubernetes_objects_match_snapshots[[]{example}][[]*.yaml")
            for o in yaml.safe_load_all(path.read_text())
        ]
    )
    assert checked == synthesized


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_check_names_the_claims_as_synth_does(source):
    """``inferstack check`` renders with literal placeholders where synth has tokens: an override naming a model's
    PersistentVolume must be found by both."""
    config = config_of(SOURCES[source])
    (item,) = render_workloads(workloads_plan(config), None, placeholder_refs(config))
    assert claim_of(item.manifest) == claim_of(render(SOURCES[source]))


@pytest.mark.parametrize(
    ("source", "storage"),
    [
        ("s3_mount", {**STORAGE, "model_bucket": {"bucket_name": "team-models-2"}}),  # a new bucket
        ("s3_mount", {**STORAGE, "model_bucket": {"existing_bucket_name": "team-models"}}),
        ("fsx", {**STORAGE, "fsx": {"storage_capacity_gib": 1200, "deployment_type": "SCRATCH_2"}}),  # replaced
        ("fsx", {**STORAGE, "fsx": {"storage_capacity_gib": 1200, "availability_zone": 1}}),  # replaced
        (
            "fsx",  # SCRATCH_2 imports through ImportPath, which no update changes: a new bucket replaces it
            {
                "model_bucket": {"bucket_name": "team-models-2"},
                "fsx": {"storage_capacity_gib": 1200, "deployment_type": "SCRATCH_2"},
            },
        ),
        (
            "efs",
            {**STORAGE, "efs": {"existing": {"file_system_id": EFS_ID, "security_group_id": "sg-0123456789abcdef0"}}},
        ),
    ],
)
def test_a_bucket_or_file_system_the_config_changes_is_another_claim(source, storage):
    """A created resource's id is a token: the config section that makes it names the volume instead, so a change
    that replaces the bucket or the file system moves the pods to a new volume."""
    assert claim_of(render(SOURCES[source])) != claim_of(render(SOURCES[source], storage=storage))


@pytest.mark.parametrize(
    ("source", "before", "after"),
    [
        ("fsx", STORAGE, {**STORAGE, "fsx": {"storage_capacity_gib": 2400, "throughput_per_unit_mib": 500}}),
        ("efs", STORAGE, {**STORAGE, "efs": {"throughput_mode": "bursting"}}),
        (
            "efs",
            {**STORAGE, "efs": {"existing": {"file_system_id": EFS_ID, "security_group_id": "sg-0123456789abcdef0"}}},
            {**STORAGE, "efs": {"existing": {"file_system_id": EFS_ID, "security_group_id": "sg-0123456789abcdef1"}}},
        ),
    ],
)
def test_what_changes_in_place_renames_nothing(source, before, after):
    """A larger or faster FSx, EFS's throughput mode, a security group: the file system stays, so its volume does
    (a new name would roll the pods for nothing)."""
    assert claim_of(render(SOURCES[source], storage=before)) == claim_of(render(SOURCES[source], storage=after))


def test_a_scratch_file_systems_bucket_is_part_of_its_name():
    scratch = {"storage_capacity_gib": 1200, "deployment_type": "SCRATCH_2"}
    here = render(SOURCES["fsx"], storage={"model_bucket": {}, "fsx": scratch})
    assert claim_of(here) != claim_of(
        render(SOURCES["fsx"], storage={"model_bucket": {"bucket_name": "team-models-2"}, "fsx": scratch})
    )
    persistent = {"storage_capacity_gib": 1200}  # a data repository association, changed in place of the file system
    assert claim_of(render(SOURCES["fsx"], storage={"model_bucket": {}, "fsx": persistent})) == claim_of(
        render(SOURCES["fsx"], storage={"model_bucket": {"bucket_name": "team-models-2"}, "fsx": persistent})
    )


def test_another_mountpoint_cache_size_is_another_claim():
    """The cache size is a volume attribute of the PV's CSI source: immutable."""
    larger = dataclasses.replace(REFS, mount_cache_gib=20)
    assert claim_of(render(SOURCES["s3_mount"])) != claim_of(render(SOURCES["s3_mount"], larger))


def test_a_new_revision_without_a_sync_job_rolls_the_pods_onto_a_new_volume():
    """sync_model off leaves no init container whose env would change: only the claim name moves the pods."""
    before, after = render(SOURCES["s3_mount"]), render(SOURCES["s3_mount"], revision="0123abcd")
    assert claim_of(before) != claim_of(after) and template(before) != template(after)


def test_another_directory_or_file_system_is_another_efs_volume():
    here = render(SOURCES["efs"])
    assert claim_of(here) != claim_of(render({"type": "efs", "path": "/models/qwen3-8b-v2"}))
    existing = {**STORAGE, "efs": {"existing": {"file_system_id": EFS_ID, "security_group_id": "sg-0123456789abcdef0"}}}
    assert claim_of(here) != claim_of(render(SOURCES["efs"], storage=existing))
    # without the config's identities (a library user's refs), the id names the file system
    literal = StorageRefs(region="us-east-1", bucket="b", efs_id=EFS_ID, sync_image=SYNC_IMAGE)
    assert claim_of(render(SOURCES["efs"], identities=False)) != claim_of(
        render(SOURCES["efs"], literal, identities=False)
    )


def test_switching_the_source_is_a_new_claim():
    """A claim's access modes are immutable: Mountpoint's ReadOnlyMany claim cannot become EFS's ReadWriteMany."""
    assert len({claim_of(render(source)) for source in SOURCES.values()}) == len(SOURCES)
