"""The model-sync script against a fake S3 (moto) and a fake Hugging Face hub: copies every file once, writes the
marker last, and does nothing the second time."""

from __future__ import annotations

import json
import runpy
import sys
import types
from importlib import resources
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

SCRIPT = resources.files("inferstack.constructs").joinpath("scripts/model_sync.py")
FILES = {"config.json": b"{}", "model-00001-of-00002.safetensors": b"a" * 1000, "tokenizer.json": b"{}"}


@pytest.fixture
def fake_hub(monkeypatch, tmp_path):
    calls: list[str] = []
    module = types.ModuleType("huggingface_hub")

    class HfApi:
        def __init__(self, token=None):
            self.token = token

        def list_repo_files(self, repo, revision):
            assert (repo, revision) == ("org/model", "abc123")
            return list(FILES)

    def hf_hub_download(repo, name, revision, token, local_dir):
        calls.append(name)
        path = Path(local_dir) / name
        path.write_bytes(FILES[name])
        return str(path)

    module.HfApi, module.hf_hub_download = HfApi, hf_hub_download
    monkeypatch.setitem(sys.modules, "huggingface_hub", module)
    for key, value in {
        "BUCKET": "models",
        "PREFIX": "models/org/model/abc123/",
        "MODEL_ID": "org/model",
        "REVISION": "abc123",
        "WORK_DIR": str(tmp_path),
        "AWS_DEFAULT_REGION": "us-west-2",
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
    }.items():
        monkeypatch.setenv(key, value)
    return calls


@mock_aws
def test_copies_every_file_then_the_marker_and_is_idempotent(fake_hub):
    s3 = boto3.client("s3", region_name="us-west-2")
    s3.create_bucket(Bucket="models", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    runpy.run_path(str(SCRIPT), run_name="__main__")
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket="models")["Contents"]}
    prefix = "models/org/model/abc123/"
    assert keys == {prefix + name for name in FILES} | {prefix + ".inferstack-sync-complete"}
    assert (
        s3.get_object(Bucket="models", Key=prefix + "model-00001-of-00002.safetensors")["Body"].read()
        == (FILES["model-00001-of-00002.safetensors"])
    )
    assert sorted(fake_hub) == sorted(FILES)
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(SCRIPT), run_name="__main__")
    assert done.value.code == 0
    assert sorted(fake_hub) == sorted(FILES)  # nothing downloaded the second time


@mock_aws
def test_copies_only_the_file_set_the_format_reads(fake_hub, monkeypatch):
    """A Mistral-format repo with HF shards too: the Run:ai streamer would read every top-level safetensors."""
    monkeypatch.setenv("EXCLUDE", "model*.safetensors,model.safetensors.index.json")
    s3 = boto3.client("s3", region_name="us-west-2")
    s3.create_bucket(Bucket="models", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    runpy.run_path(str(SCRIPT), run_name="__main__")
    prefix = "models/org/model/abc123/"
    keys = {o["Key"][len(prefix) :] for o in s3.list_objects_v2(Bucket="models")["Contents"]}
    assert keys == {"config.json", "tokenizer.json", ".inferstack-sync-complete"}
    assert "model-00001-of-00002.safetensors" not in fake_hub


@mock_aws
def test_a_file_set_matching_nothing_fails_without_a_marker(fake_hub, monkeypatch):
    monkeypatch.setenv("INCLUDE", "consolidated*.safetensors")
    s3 = boto3.client("s3", region_name="us-west-2")
    s3.create_bucket(Bucket="models", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    with pytest.raises(SystemExit) as failed:
        runpy.run_path(str(SCRIPT), run_name="__main__")
    assert "no file" in str(failed.value.code)
    assert "Contents" not in s3.list_objects_v2(Bucket="models")


@mock_aws
def test_a_changed_file_set_resyncs_and_removes_what_it_leaves_out(fake_hub, monkeypatch):
    """A prefix synced with both layouts (an older inferstack): the new file set removes the stray shards."""
    s3 = boto3.client("s3", region_name="us-west-2")
    s3.create_bucket(Bucket="models", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    runpy.run_path(str(SCRIPT), run_name="__main__")  # everything
    first = list(fake_hub)
    monkeypatch.setenv("EXCLUDE", "model*.safetensors")
    runpy.run_path(str(SCRIPT), run_name="__main__")
    prefix = "models/org/model/abc123/"
    keys = {o["Key"][len(prefix) :] for o in s3.list_objects_v2(Bucket="models")["Contents"]}
    assert keys == {"config.json", "tokenizer.json", ".inferstack-sync-complete"}
    assert fake_hub == first, "files already in the prefix are not downloaded again"
    marker = json.loads(s3.get_object(Bucket="models", Key=prefix + ".inferstack-sync-complete")["Body"].read())
    assert marker["exclude"] == ["model*.safetensors"]
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(SCRIPT), run_name="__main__")
    assert done.value.code == 0


class _PrefixConditionedS3:
    """S3 as the sync role sees it: its s3:ListBucket is conditioned on s3:prefix, so GetObject/HeadObject of a
    missing key answers 403 AccessDenied, not 404 (API_GetObject, "Permissions"). Everything else is moto's."""

    def __init__(self, client):
        self._client = client

    def __getattr__(self, name):
        return getattr(self._client, name)

    def _missing_is_forbidden(self, operation, **kwargs):
        from botocore.exceptions import ClientError

        listed = self._client.list_objects_v2(Bucket=kwargs["Bucket"], Prefix=kwargs["Key"], MaxKeys=1)
        if not any(item["Key"] == kwargs["Key"] for item in listed.get("Contents", [])):
            raise ClientError({"Error": {"Code": "AccessDenied", "Message": "Access Denied"}}, operation)
        return getattr(self._client, {"GetObject": "get_object", "HeadObject": "head_object"}[operation])(**kwargs)

    def get_object(self, **kwargs):
        return self._missing_is_forbidden("GetObject", **kwargs)

    def head_object(self, **kwargs):
        return self._missing_is_forbidden("HeadObject", **kwargs)


@mock_aws
def test_the_first_sync_runs_when_a_missing_marker_answers_403(fake_hub, monkeypatch):
    """Defect: the first sync read the marker with GetObject, which answers 403 to this role — every first sync
    failed, the default's included."""
    real = boto3.client
    s3 = real("s3", region_name="us-west-2")
    s3.create_bucket(Bucket="models", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    monkeypatch.setattr(boto3, "client", lambda *a, **k: _PrefixConditionedS3(real(*a, **k)))
    runpy.run_path(str(SCRIPT), run_name="__main__")
    assert sorted(fake_hub) == sorted(FILES)
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket="models")["Contents"]}
    assert "models/org/model/abc123/.inferstack-sync-complete" in keys


@mock_aws
def test_a_new_revision_on_the_same_prefix_replaces_every_file(fake_hub, monkeypatch):
    """Issue 24 §6: a revision bump under an explicit prefix kept the old weights while the marker claimed the new
    revision. Now every file is copied again and what the new revision lacks is removed."""
    s3 = boto3.client("s3", region_name="us-west-2")
    s3.create_bucket(Bucket="models", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    runpy.run_path(str(SCRIPT), run_name="__main__")  # abc123
    prefix = "models/org/model/abc123/"
    s3.put_object(Bucket="models", Key=prefix + "model-00002-of-00002.safetensors", Body=b"old shard")
    new_files = {"config.json": b'{"v": 2}', "model.safetensors": b"b" * 500, "tokenizer.json": b"{}"}

    class NewRevision:
        def __init__(self, token=None):
            pass

        def list_repo_files(self, repo, revision):
            assert revision == "def456"
            return list(new_files)

    def download(repo, name, revision, token, local_dir):
        fake_hub.append(f"def456/{name}")
        path = Path(local_dir) / name
        path.write_bytes(new_files[name])
        return str(path)

    hub = sys.modules["huggingface_hub"]
    monkeypatch.setattr(hub, "HfApi", NewRevision)
    monkeypatch.setattr(hub, "hf_hub_download", download)
    monkeypatch.setenv("REVISION", "def456")
    runpy.run_path(str(SCRIPT), run_name="__main__")
    keys = {o["Key"][len(prefix) :] for o in s3.list_objects_v2(Bucket="models")["Contents"]}
    assert keys == {*new_files, ".inferstack-sync-complete"}
    assert s3.get_object(Bucket="models", Key=prefix + "config.json")["Body"].read() == b'{"v": 2}'
    assert sorted(n for n in fake_hub if n.startswith("def456/")) == sorted(f"def456/{n}" for n in new_files)
    marker = json.loads(s3.get_object(Bucket="models", Key=prefix + ".inferstack-sync-complete")["Body"].read())
    assert marker["revision"] == "def456"


@mock_aws
def test_files_without_a_marker_are_overwritten_not_deleted(fake_hub):
    """No marker (a first or interrupted sync): everything is copied, nothing under the prefix is removed."""
    s3 = boto3.client("s3", region_name="us-west-2")
    s3.create_bucket(Bucket="models", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    prefix = "models/org/model/abc123/"
    s3.put_object(Bucket="models", Key=prefix + "README.md", Body=b"mine")
    s3.put_object(Bucket="models", Key=prefix + "config.json", Body=b"partial")
    runpy.run_path(str(SCRIPT), run_name="__main__")
    keys = {o["Key"][len(prefix) :] for o in s3.list_objects_v2(Bucket="models")["Contents"]}
    assert keys == {*FILES, "README.md", ".inferstack-sync-complete"}
    assert s3.get_object(Bucket="models", Key=prefix + "config.json")["Body"].read() == FILES["config.json"]
