"""Snapshot tests of your own platform, shaped for review as inferstack's own snapshots are (a pytest plugin).

.. code-block:: python

    # conftest.py
    pytest_plugins = ["inferstack.testing"]

    # test_platform.py
    def test_platform(inferstack_snapshot):
        inferstack_snapshot("platform.yaml")  # a path, or an InferstackConfig

``inferstack_snapshot(config)`` synthesizes the config with every check ``build_platform`` runs (the rules, then
cdk-nag) and compares one syrupy snapshot file per stack template (JSON: each Kubernetes manifest replaced by a
reference to its own snapshot, each Helm release's values parsed) and one per manifest (YAML, one object per
document; a ConfigMap's files as literal blocks, one-line JSON files such as Grafana dashboards indented). Asset
content hashes are normalized away, so the files change only when what deploys does. ``pytest --snapshot-update``
writes them; a pull request then shows a changed volume list as a three-line diff. Needs syrupy and pytest
(``pip install inferstack[testing]``).

The pure parts — :func:`synthesize`, :func:`snapshot_files`, :func:`readable`, :func:`snapshot_text` — serve any
other test runner.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from inferstack.assembly import HELM_TYPE, MANIFEST_TYPE
from inferstack.assembly import cdk_context as cdk_context

_ASSET_HASH = re.compile(r"[0-9a-f]{64}")


def synthesize(config: Any, *, context: Mapping[str, Any] | None = None, nag: bool = True) -> dict[str, dict[str, Any]]:
    """Every stack template of ``config`` (an :class:`~inferstack.config.InferstackConfig` or a config file's
    path), by stack name, synthesized in-process with :func:`~inferstack.stacks.build_platform`'s checks.
    ``context``: the CDK context. Default :func:`cdk_context`.

    :raises ConfigError: a bad config. :raises RuleViolationError: a config the rules refuse."""
    import aws_cdk as cdk

    from inferstack.config import InferstackConfig, load_config
    from inferstack.stacks import build_platform

    if not isinstance(config, InferstackConfig):
        config = load_config(Path(config))
    app = cdk.App(context=dict(context if context is not None else cdk_context()))
    platform = build_platform(app, config, nag=nag)
    assembly = app.synth()
    return {s.stack_name: assembly.get_stack_by_name(s.stack_name).template for s in platform.stacks}


def normalized(template: dict[str, Any]) -> dict[str, Any]:
    """``template`` with asset content hashes replaced by ``<asset-hash>`` (they change with every dependency
    bump, not with what the template says)."""
    return json.loads(_ASSET_HASH.sub("<asset-hash>", json.dumps(template, sort_keys=True)))


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
    """``template`` with each manifest split out (by logical id; the template keeps a ``<see snapshot …>``
    reference) and each Helm release's values parsed; deploy-time values shown as ``${Ref:LogicalId}``,
    ``${LogicalId.Attribute}``, ``${AWS::Region}``."""
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

    __slots__ = ()


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
    """The YAML one manifest's snapshot holds."""
    return yaml.dump_all(
        with_readable_files(objects),
        Dumper=_SnapshotDumper,
        sort_keys=False,
        default_flow_style=False,
        width=120,
        allow_unicode=False,
    )


@dataclass(frozen=True)
class SnapshotFile:
    """One snapshot: a stack's readable template (``json``) or one manifest's objects (``yaml``)."""

    name: str
    """``<stack>`` or ``<stack>.<manifest logical id>``."""
    format: str
    """``json`` or ``yaml`` (the file extension)."""
    text: str
    """The file's content."""


def snapshot_files(templates: Mapping[str, dict[str, Any]]) -> list[SnapshotFile]:
    """The snapshots of ``templates`` (stack name → template), asset hashes normalized: per stack its readable
    template as indented JSON (:func:`readable`), then per manifest its objects as YAML (:func:`snapshot_text`)."""
    files: list[SnapshotFile] = []
    for stack in sorted(templates):
        template, manifests = readable(normalized(templates[stack]), stack)
        files.append(SnapshotFile(stack, "json", json.dumps(template, indent=2, sort_keys=True) + "\n"))
        files += [SnapshotFile(f"{stack}.{i}", "yaml", snapshot_text(objects)) for i, objects in manifests.items()]
    return files


def _snapshot_extension(extension: str) -> type:
    from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

    class TextSnapshotExtension(SingleFileSnapshotExtension):
        """One text file per snapshot."""

        _write_mode = WriteMode.TEXT
        file_extension = extension

    return TextSnapshotExtension


try:  # the plugin's fixture, when pytest is there (``pytest_plugins = ["inferstack.testing"]``)
    import pytest
except ImportError:  # pragma: no cover - a runtime without pytest still imports the pure helpers
    pytest = None  # type: ignore[assignment]

if pytest is not None:

    @pytest.fixture
    def inferstack_snapshot(snapshot: Any) -> Callable[..., None]:
        """``inferstack_snapshot(config, *, nag=True, context=None)``: synthesize ``config`` (a path or an
        :class:`~inferstack.config.InferstackConfig`) and assert every file of :func:`snapshot_files` against
        syrupy's snapshot of the same name (``pytest --snapshot-update`` writes them)."""
        extensions = {fmt: snapshot.use_extension(_snapshot_extension(fmt)) for fmt in ("json", "yaml")}

        def check(config: Any, *, nag: bool = True, context: Mapping[str, Any] | None = None) -> None:
            for file in snapshot_files(synthesize(config, context=context, nag=nag)):
                assert file.text == extensions[file.format](name=file.name)

        return check
