"""GATE: no credential reaches the cloud assembly. inferstack names Secrets created outside it (NGC API key, nvcr.io
pull Secret, Hugging Face token) and never writes one: every file of every example's cdk.out is scanned for
credential-shaped strings, every applied object for a Secret and for an env var with a secret's name and a literal
value."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from inferstack.rules.secrets import CREDENTIAL, inline_secrets

#: Planted credentials the scan must find (shapes only; none is a real key).
PLANTED = ("hf_" + "Q" * 34, "nvapi-" + "q" * 40, "AKIA" + "Q" * 16)


def assembly_hits(directory: Path) -> Iterator[str]:
    """``file: match`` of every credential-shaped string in the cloud assembly's files."""
    for path in sorted(directory.rglob("*")):
        if path.is_file() and path.suffix in {".json", ".yaml", ".txt", ""}:
            text = path.read_text(errors="replace")
            for match in CREDENTIAL.finditer(text):
                yield f"{path.name}: {match.group(0)[:24]}…"


def literal_secret_env(objects: list[dict[str, Any]]) -> list[str]:
    return [f"{o['kind']}/{o['metadata'].get('name')} {p}: {why}" for o in objects for p, why in inline_secrets(o, "")]


def test_cdk_out_holds_no_credential(any_app):
    assert any_app.directory is not None and any(any_app.directory.iterdir())
    assert list(assembly_hits(any_app.directory)) == []


def test_no_object_carries_a_secret_value(any_app):
    objects = any_app.kubernetes_objects()
    assert [o["metadata"]["name"] for o in objects if o["kind"] == "Secret"] == []
    assert literal_secret_env(objects) == []


def _env_named(node: Any, name: str) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if node.get("name") == name and ("value" in node or "valueFrom" in node):
            yield node
        for item in node.values():
            yield from _env_named(item, name)
    elif isinstance(node, list):
        for item in node:
            yield from _env_named(item, name)


def test_secrets_are_referenced_by_name(nim_app, dynamo_app):
    (service,) = [o for o in nim_app.kubernetes_objects() if o["kind"] == "NIMService"]
    assert service["spec"]["authSecret"] == "ngc-api-secret"
    tokens = list(_env_named(dynamo_app.kubernetes_objects(), "HF_TOKEN"))
    assert tokens, "the model-sync Job reads the gated model with the token"
    assert all(
        t == {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "HF_TOKEN"}}}
        for t in tokens
    )


def test_the_scan_finds_a_planted_credential(tmp_path):
    for index, token in enumerate(PLANTED):
        (tmp_path / f"stack{index}.template.json").write_text(json.dumps({"Resources": {"X": {"Value": token}}}))
    assert len(list(assembly_hits(tmp_path))) == len(PLANTED)
    pod = {
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "env": [{"name": "NGC_API_KEY", "value": "not-a-reference"}]}]},
    }
    assert literal_secret_env([pod]) == [
        "Pod/p spec.containers[0].env[0].value: env NGC_API_KEY carries a literal value"
    ]
