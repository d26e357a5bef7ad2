"""Model sources: what each one adds to a serving pod."""

from __future__ import annotations

import json

from inferstack.constructs.model_source import ModelSourceProps, SourceKind, model_loading


def test_s3_streams_with_runai_and_needs_credentials():
    loading = model_loading(
        ModelSourceProps(
            kind=SourceKind.S3,
            model_id="org/m",
            bucket="b",
            prefix="models/m/",
            region="us-west-2",
            streamer_concurrency=32,
        )
    )
    assert loading.model == "s3://b/models/m/"
    assert loading.args[:2] == ["--load-format", "runai_streamer"]
    assert json.loads(loading.args[3]) == {"concurrency": 32}
    assert loading.needs_aws_credentials and not loading.volumes


def test_s3_mount_reads_the_claim_read_only():
    loading = model_loading(ModelSourceProps(kind=SourceKind.S3_MOUNT, model_id="org/m", claim_name="m-model"))
    assert loading.model == "/models"
    (volume,) = loading.volumes
    assert volume.persistent_volume_claim.claim_name == "m-model" and volume.persistent_volume_claim.read_only
    assert loading.mounts[0].read_only and not loading.needs_aws_credentials


def test_fsx_points_into_the_file_system():
    loading = model_loading(
        ModelSourceProps(kind=SourceKind.FSX, model_id="org/m", claim_name="c", fsx_path="/models/org/m/main")
    )
    assert loading.model == "/fsx/models/org/m/main"


def test_image_uses_the_baked_path():
    assert model_loading(ModelSourceProps(kind=SourceKind.IMAGE, model_id="org/m", image_path="/w")).model == "/w"


def test_hf_downloads_into_a_cache_with_the_token_by_reference():
    loading = model_loading(
        ModelSourceProps(
            kind=SourceKind.HF, model_id="org/m", revision="abc", hf_token_secret=("hf", "token"), hf_cache_gib=50
        )
    )
    assert loading.model == "org/m" and loading.args == ["--revision", "abc"]
    token = next(e for e in loading.env if e.name == "HF_TOKEN")
    assert token.value is None and token.value_from.secret_key_ref.name == "hf"
    assert loading.volumes[0].empty_dir.size_limit.value == "50Gi"
