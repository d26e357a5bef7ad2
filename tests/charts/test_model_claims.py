"""GIVEN a workload whose model is mounted (Mountpoint, FSx, EFS), WHEN what the volume mounts changes, THEN its
PersistentVolume and claim are new objects the pod template names — a PV's source and a claim's access modes are
immutable (the API server refuses the update), and a Mountpoint pod keeps the prefix it mounted, so an edited PV
would fail the deploy or leave the replicas on the old weights — and WHEN nothing it mounts changes, the names hold,
whatever the CDK tokens' numbering."""

from __future__ import annotations

import json
from typing import Any

import pytest

from inferstack.charts.workload import StorageRefs
from inferstack.config import parse_config
from inferstack.plan.workloads import workloads_plan
from inferstack.stacks.workloads import render_workloads
from tests.synth import EFS_ID, SYNC_IMAGE

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


def render(source: dict[str, Any], refs: StorageRefs = REFS, **model: Any) -> list[dict[str, Any]]:
    config = parse_config(
        {
            "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]},
            "storage": {"model_bucket": {}, "fsx": {"storage_capacity_gib": 1200}, "efs": {}},
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
def test_renumbered_tokens_rename_nothing(source):
    """Token text follows construction order (another workload renumbers it): a name built on it would roll every
    workload's pods on an unrelated change."""
    assert claim_of(render(SOURCES[source])) == claim_of(render(SOURCES[source], RENUMBERED))


def test_a_new_revision_without_a_sync_job_rolls_the_pods_onto_a_new_volume():
    """sync_model off leaves no init container whose env would change: only the claim name moves the pods."""
    before, after = render(SOURCES["s3_mount"]), render(SOURCES["s3_mount"], revision="0123abcd")
    assert claim_of(before) != claim_of(after) and template(before) != template(after)


def test_another_directory_or_file_system_is_another_efs_volume():
    here = render(SOURCES["efs"])
    assert claim_of(here) != claim_of(render({"type": "efs", "path": "/models/qwen3-8b-v2"}))
    existing = StorageRefs(region="us-east-1", bucket="b", efs_id=EFS_ID, sync_image=SYNC_IMAGE)
    assert claim_of(here) != claim_of(render(SOURCES["efs"], existing))


def test_switching_the_source_is_a_new_claim():
    """A claim's access modes are immutable: Mountpoint's ReadOnlyMany claim cannot become EFS's ReadWriteMany."""
    assert len({claim_of(render(source)) for source in SOURCES.values()}) == len(SOURCES)
