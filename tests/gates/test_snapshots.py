"""GATE: syrupy snapshots of everything the platform deploys, shaped for review in pull requests.

* every CloudFormation template as JSON, with each Kubernetes manifest replaced by a reference to its own snapshot
  and each Helm release's values parsed (not one escaped line);
* the Kubernetes objects of each manifest as YAML (one file per manifest), so a changed volume list is a
  three-line diff; a ConfigMap's files as literal blocks, and its one-line ``*.json`` files (Grafana
  dashboards) pretty-printed, so a changed panel or script line is a one-line diff, not one 10,000-character line.

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


class _Block(str):
    """A string shown as a YAML literal block (``|``)."""


class _SnapshotDumper(yaml.SafeDumper):
    pass


_SnapshotDumper.add_representer(
    _Block, lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style="|")
)


def _file(key: str, value: Any) -> Any:
    """A ConfigMap file as a block: multi-line text as it is, a one-line ``*.json`` indented (the same JSON)."""
    if not isinstance(value, str):
        return value
    if key.endswith(".json") and "\n" not in value:
        return _Block(json.dumps(json.loads(value), indent=2, ensure_ascii=True))
    return _Block(value) if "\n" in value else value


def with_readable_files(objects: list[Any]) -> list[Any]:
    """``objects`` with each ConfigMap's files shown as blocks (:func:`_file`); other objects as they are."""
    shown = []
    for obj in objects:
        data = obj.get("data") if isinstance(obj, dict) and obj.get("kind") == "ConfigMap" else None
        if isinstance(data, dict):
            obj = {**obj, "data": {key: _file(key, value) for key, value in data.items()}}
        shown.append(obj)
    return shown


def snapshot_text(objects: list[Any]) -> str:
    """The YAML a manifest's snapshot holds."""
    return yaml.dump_all(
        with_readable_files(objects),
        Dumper=_SnapshotDumper,
        sort_keys=False,
        default_flow_style=False,
        width=120,
        allow_unicode=False,
    )


def test_templates_match_snapshots(any_app, snapshot_json):
    for name in sorted(any_app.templates):
        template, _ = readable(normalized(any_app.templates[name]), name)
        assert template == snapshot_json(name=name)


def test_kubernetes_objects_match_snapshots(any_app, snapshot_yaml):
    for name in sorted(any_app.templates):
        _, manifests = readable(normalized(any_app.templates[name]), name)
        for logical_id, objects in manifests.items():
            assert snapshot_text(objects) == snapshot_yaml(name=f"{name}.{logical_id}")


def test_snapshots_show_manifests_as_yaml_not_escaped_json(default_app):
    template, manifests = readable(normalized(default_app.template("workloads")), "workloads")
    assert manifests, "the workloads stack applies manifests"
    text = json.dumps(template)
    assert '\\"apiVersion\\"' not in text and "<see snapshot" in text


def test_config_map_files_are_blocks_and_other_objects_are_unchanged(default_app):
    _, manifests = readable(normalized(default_app.template("workloads")), "workloads")
    objects = [o for objects in manifests.values() for o in objects]
    dashboards = [o for o in objects if o["kind"] == "ConfigMap" and "grafana_dashboard" in o["metadata"]["labels"]]
    assert dashboards
    text = snapshot_text(dashboards)
    assert '.json: |-\n    {\n      "panels": [' in text
    assert yaml.safe_load_all(text) and [json.loads(v) for d in yaml.safe_load_all(text) for v in d["data"].values()]
    files = [o for o in objects if o["kind"] == "ConfigMap" and o not in dashboards]
    assert files and [o["data"] for o in yaml.safe_load_all(snapshot_text(files))] == [o["data"] for o in files]
    others = [o for o in objects if o["kind"] != "ConfigMap"]
    plain = yaml.safe_dump_all(others, sort_keys=False, default_flow_style=False, width=120)
    assert snapshot_text(others) == plain
