"""The model-sync Job installs nothing at start: its tools come in an image inferstack builds from pinned parts
(the catalog's Python image and hash-locked wheels), so no unpinned code from a package index runs while the pod
holds write credentials for the bucket."""

from __future__ import annotations

import ast
import json
import re

import cdk8s
import pytest
import yaml

from inferstack.catalog.versions import IMAGES, MODEL_SYNC_PACKAGES
from inferstack.config import ConfigError, parse_config
from inferstack.constructs.model_sync import MODEL_SYNC_IMAGE_DIR, ModelSyncJob, ModelSyncJobProps, dockerfile
from tests.synth import ROOT

REQUIREMENT = re.compile(
    r"^(?P<name>[a-z0-9.-]+)==(?P<version>\S+) \\\n    --hash=sha256:(?P<hash>[0-9a-f]{64})$", re.M
)


def _requirements() -> dict[str, str]:
    text = (MODEL_SYNC_IMAGE_DIR / "requirements.txt").read_text()
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    entries = list(REQUIREMENT.finditer(body))
    assert len(entries) == body.count("==") == body.count("--hash=sha256:")  # every pin carries exactly one hash
    names = [m["name"] for m in entries]
    assert len(names) == len(set(names))
    return {m["name"]: m["version"] for m in entries}


def test_the_image_installs_exactly_the_hash_locked_wheels_of_the_catalogs_pins():
    pins = _requirements()
    for package in MODEL_SYNC_PACKAGES:
        name, version = package.split("==")
        assert pins[name.replace("_", "-").lower()] == version
    text = (MODEL_SYNC_IMAGE_DIR / "Dockerfile").read_text()
    assert text == dockerfile(IMAGES["model-sync-base"])  # regenerated with the catalog (make images)
    assert f"FROM {IMAGES['model-sync-base']}\n" in text
    assert "--require-hashes" in text and "--no-deps" in text and "--only-binary=:all:" in text
    assert text.rstrip().endswith("USER 65534:65534")


def test_the_sync_script_imports_only_what_the_image_carries():
    source = (MODEL_SYNC_IMAGE_DIR.parent.parent / "constructs" / "scripts" / "model_sync.py").read_text()
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    third_party = {m for m in imported if m not in __import__("sys").stdlib_module_names}
    assert third_party == {"boto3", "huggingface_hub"}
    assert {name.replace("-", "_") for name in _requirements()} >= third_party


def _job(**overrides) -> dict:
    chart = cdk8s.Chart(cdk8s.App(), "t")
    props = {
        "name": "qwen-model-sync",
        "namespace": "inference",
        "service_account": "qwen-model-sync",
        "bucket": "models",
        "prefix": "models/qwen/",
        "region": "us-west-2",
        "model_id": "Qwen/Qwen3-8B",
        "image": "registry.example.com/model-sync:1.0",
        **overrides,
    }
    ModelSyncJob(chart, "sync", ModelSyncJobProps(**props))
    return next(o for o in chart.to_json() if o["kind"] == "Job")


def test_the_job_runs_the_script_and_installs_nothing():
    (container,) = _job()["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["python", "/scripts/model_sync.py"] and "args" not in container
    assert container["image"] == "registry.example.com/model-sync:1.0"
    assert "PYTHONPATH" not in {e["name"] for e in container["env"]}


def test_hf_xet_downloads_fast_without_a_second_copy_in_the_scratch_volume():
    """huggingface_hub 2.x downloads through hf-xet: its high-performance mode on, its 10 GB chunk cache off (each
    file is read once; the cache would write every byte twice under HOME, in the scratch emptyDir)."""
    (container,) = _job()["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["HF_XET_HIGH_PERFORMANCE"] == "1" and env["HF_XET_CHUNK_CACHE_SIZE_BYTES"] == "0"
    assert "HF_HUB_ENABLE_HF_TRANSFER" not in env  # hf_transfer is not in the image


def test_a_new_image_behind_a_token_is_a_new_job():
    """A Job's pod template is immutable: the asset's content hash names the Job, although its URI is a token."""
    first = _job(image_identity="aaaa")["metadata"]["name"]
    assert first != _job(image_identity="bbbb")["metadata"]["name"]
    assert first == _job(image_identity="aaaa")["metadata"]["name"]


def test_an_unpinned_sync_image_is_refused_at_the_field():
    with pytest.raises(ConfigError, match=r"storage\.model_sync_image"):
        parse_config({"storage": {"model_sync_image": "python:latest"}})


def test_no_container_of_any_config_installs_packages_at_start(any_app):
    for obj in any_app.kubernetes_objects():
        text = json.dumps(obj)
        assert "pip install" not in text and "pip3 install" not in text, obj["metadata"]["name"]


def test_the_platform_builds_the_image_as_a_container_asset(default_app):
    sync = next(
        o for o in default_app.kubernetes_objects() if o["kind"] == "Job" and "model-sync" in o["metadata"]["name"]
    )
    image = sync["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image.startswith(
        "${AWS::AccountId}.dkr.ecr.${AWS::Region}.${AWS::URLSuffix}/cdk-hnb659fds-container-assets-"
    )
    assert len(image.rsplit(":", 1)[1]) == 64  # tagged with the asset's content hash
    workloads = json.dumps(default_app.template("workloads"))
    assert "/cdk-hnb659fds-container-assets-${AWS::AccountId}-${AWS::Region}:" in workloads
    assets = json.loads(next(default_app.directory.glob("*-storage.assets.json")).read_text())
    (docker,) = assets["dockerImages"].values()
    staged = default_app.directory / docker["source"]["directory"]
    assert (staged / "Dockerfile").read_text() == (MODEL_SYNC_IMAGE_DIR / "Dockerfile").read_text()
    assert docker["source"]["platform"] == "linux/amd64"


def test_a_configured_sync_image_replaces_the_built_one(synth_config):
    data = yaml.safe_load((ROOT / "inferstack.yaml").read_text())
    data["storage"]["model_sync_image"] = "registry.example.com/sync:2.0@sha256:" + "a" * 64
    config = parse_config(data)
    app = synth_config(config, nag=False)
    sync = next(o for o in app.kubernetes_objects() if o["kind"] == "Job" and "model-sync" in o["metadata"]["name"])
    assert sync["spec"]["template"]["spec"]["containers"][0]["image"].startswith("registry.example.com/sync:2.0@")
    assets = json.loads(next(app.directory.glob("*-storage.assets.json")).read_text())
    assert not assets.get("dockerImages")


@pytest.mark.parametrize(
    ("image", "pinned"),
    [
        ("registry.example.com/sync:2.0", True),
        ("registry.example.com/sync@sha256:" + "a" * 64, True),
        ("registry.example.com/sync:2.0@sha256:" + "a" * 64, True),  # tag plus digest: the digest pins it
        ("registry.example.com/sync:latest", False),
        ("registry.example.com/sync", False),
        ("registry.example.com/sync:2.0@sha256:abc", False),
    ],
)
def test_a_sync_image_is_pinned_by_tag_or_digest_or_both(image, pinned):
    data = {"storage": {"model_sync_image": image}}
    if pinned:
        assert parse_config(data).storage.model_sync_image == image
    else:
        with pytest.raises(ConfigError, match=r"storage\.model_sync_image: .*not a pinned image reference"):
            parse_config(data)
