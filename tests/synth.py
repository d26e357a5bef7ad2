"""Synthesize inferstack apps the way ``cdk synth`` does (cdk.json context), once per config per test session."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aws_cdk as cdk

from inferstack.app import build_app
from inferstack.cli import kubernetes_objects
from inferstack.config import InferstackConfig, load_config
from inferstack.testing import normalized as normalized

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = [ROOT / "inferstack.yaml", *sorted((ROOT / "examples").glob("*.yaml"))]
#: The model-sync image tests pass where they build StorageRefs by hand (a platform passes its built asset's URI).
SYNC_IMAGE = "registry.example.com/inferstack/model-sync:test"
#: The EFS file system examples with ``storage.efs`` render against (``efs`` model sources need one).
EFS_ID = "fs-0123456789abcdef1"


def cdk_context() -> dict[str, Any]:
    """The context ``cdk synth`` passes (cdk.json), plus no asset staging (57 MB of layer zips per synth)."""
    context = dict(json.loads((ROOT / "cdk.json").read_text())["context"])
    context["aws:cdk:disable-asset-staging"] = True
    return context


@dataclass
class Synthesized:
    """One synthesized app: templates by stack name, and every Kubernetes object they apply."""

    config: InferstackConfig
    templates: dict[str, dict[str, Any]]
    stacks: dict[str, cdk.Stack] = field(repr=False)
    directory: Path | None = None
    """The cloud assembly (what ``cdk synth`` writes to cdk.out)."""

    def template(self, suffix: str) -> dict[str, Any]:
        """The template of the stack whose name ends with ``-suffix`` (``network``, ``cluster``)."""
        return next(t for name, t in self.templates.items() if name.endswith(f"-{suffix}"))

    def resources(self, suffix: str, cfn_type: str) -> dict[str, dict[str, Any]]:
        return {k: r for k, r in self.template(suffix)["Resources"].items() if r["Type"] == cfn_type}

    def kubernetes_objects(self) -> list[dict[str, Any]]:
        return [obj for t in self.templates.values() for obj in kubernetes_objects(t)]


def synthesize(config: InferstackConfig, *, nag: bool = True) -> Synthesized:
    app = cdk.App(context=cdk_context())
    _, platform = build_app(config, app, nag=nag)
    assembly = app.synth()
    manifest = json.loads((Path(assembly.directory) / "manifest.json").read_text())
    missing = [m["key"] for m in manifest.get("missing", [])]
    assert not missing, f"synth needs context lookups (AWS credentials): {missing}"
    templates = {s.stack_name: assembly.get_stack_by_name(s.stack_name).template for s in platform.stacks}
    return Synthesized(
        config=config,
        templates=templates,
        stacks={s.stack_name: s for s in platform.stacks},
        directory=Path(assembly.directory),
    )


def synthesize_file(path: Path) -> Synthesized:
    return synthesize(load_config(path))
