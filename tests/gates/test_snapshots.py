"""GATE: syrupy snapshots of everything the platform deploys, shaped for review in pull requests.

* every CloudFormation template as JSON, with each Kubernetes manifest replaced by a reference to its own snapshot
  and each Helm release's values parsed (not one escaped line);
* the Kubernetes objects of each manifest as YAML (one file per manifest), so a changed volume list is a
  three-line diff.

Deploy-time values inside manifests and values are shown as ``${Ref:LogicalId}`` / ``${LogicalId.Attribute}`` /
``${AWS::Region}``; asset content hashes are normalized away. Update on purpose only:
``pytest --snapshot-update`` and say so in the commit message.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from inferstack.cli import HELM_TYPE, MANIFEST_TYPE
from tests.synth import normalized


class YamlSnapshotExtension(SingleFileSnapshotExtension):
    """One ``.yaml`` file per snapshot, holding a text."""

    _write_mode = WriteMode.TEXT
    file_extension = "yaml"


@pytest.fixture
def snapshot_json(snapshot):
    return snapshot.use_extension(JSONSnapshotExtension)


@pytest.fixture
def snapshot_yaml(snapshot):
    return snapshot.use_extension(YamlSnapshotExtension)


def _intrinsic(value: dict[str, Any]) -> str:
    """A readable stand-in for a CloudFormation intrinsic inside a joined string."""
    if "Ref" in value:
        ref = value["Ref"]
        return "${" + ref + "}" if ref.startswith("AWS::") else "${Ref:" + ref + "}"
    if "Fn::GetAtt" in value:
        return "${" + ".".join(value["Fn::GetAtt"]) + "}"
    if "Fn::GetStackOutput" in value:
        return "${Output:" + value["Fn::GetStackOutput"]["OutputName"] + "}"
    if "Fn::ImportValue" in value and isinstance(value["Fn::ImportValue"], str):
        return "${Import:" + value["Fn::ImportValue"] + "}"
    return "${" + json.dumps(value, sort_keys=True).replace('"', "'") + "}"  # stays valid inside a JSON string


def _text(value: str | dict[str, Any]) -> str:
    """A template property holding text: a literal, or an ``Fn::Join`` rendered with :func:`_intrinsic`."""
    if isinstance(value, str):
        return value
    separator, parts = value["Fn::Join"]
    return separator.join(p if isinstance(p, str) else _intrinsic(p) for p in parts)


def readable(template: dict[str, Any], stack: str) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """The template with manifests split out (by logical id) and Helm values parsed."""
    template = json.loads(json.dumps(template))
    manifests: dict[str, list[Any]] = {}
    for logical_id, resource in sorted(template.get("Resources", {}).items()):
        props = resource.get("Properties", {})
        if resource.get("Type") == MANIFEST_TYPE:
            manifests[logical_id] = json.loads(_text(props["Manifest"]))
            props["Manifest"] = f"<see snapshot {stack}.{logical_id}.yaml>"
        elif resource.get("Type") == HELM_TYPE and "Values" in props:
            props["Values"] = json.loads(_text(props["Values"]))
    return template, manifests


def test_templates_match_snapshots(any_app, snapshot_json):
    for name in sorted(any_app.templates):
        template, _ = readable(normalized(any_app.templates[name]), name)
        assert template == snapshot_json(name=name)


def test_kubernetes_objects_match_snapshots(any_app, snapshot_yaml):
    for name in sorted(any_app.templates):
        _, manifests = readable(normalized(any_app.templates[name]), name)
        for logical_id, objects in manifests.items():
            text = yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False, width=120)
            assert text == snapshot_yaml(name=f"{name}.{logical_id}")


def test_snapshots_show_manifests_as_yaml_not_escaped_json(default_app):
    template, manifests = readable(normalized(default_app.template("workloads")), "workloads")
    assert manifests, "the workloads stack applies manifests"
    text = json.dumps(template)
    assert '\\"apiVersion\\"' not in text and "<see snapshot" in text
