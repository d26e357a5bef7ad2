"""GATE: syrupy snapshots of everything the platform deploys, shaped for review in pull requests (the shaping is
:mod:`inferstack.testing`'s, which library users run on their own configs):

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

import pytest
import yaml
from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from inferstack.testing import normalized, readable, snapshot_text


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
