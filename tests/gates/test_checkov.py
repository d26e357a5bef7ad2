"""GATE: checkov, the second scanner (CloudFormation and Kubernetes frameworks), over every synthesized example —
no finding but those tests/gates/checkov_suppressions.yaml accepts, each with its reason, and no suppression that
no finding uses. checkov runs from its own venv (.venv-checkov, `make test` installs it)."""

from __future__ import annotations

import fnmatch
import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import synthesized_config
from tests.synth import CONFIGS, ROOT

CHECKOV = ROOT / ".venv-checkov" / "bin" / "checkov"
SUPPRESSIONS = yaml.safe_load((Path(__file__).parent / "checkov_suppressions.yaml").read_text())

pytestmark = pytest.mark.skipif(not CHECKOV.exists(), reason="checkov not installed: run `make test` (.venv-checkov)")


def _write(tree: Path) -> None:
    for path in CONFIGS:
        app = synthesized_config(path)
        cfn = tree / "cfn" / path.stem
        cfn.mkdir(parents=True)
        for name, template in app.templates.items():
            (cfn / f"{name}.template.json").write_text(json.dumps(template))
        (tree / "k8s").mkdir(exist_ok=True)
        (tree / "k8s" / f"{path.stem}.yaml").write_text(yaml.safe_dump_all(app.kubernetes_objects()))


def _failed(tree: Path, framework: str, directory: str) -> list[dict]:
    result = subprocess.run(
        [str(CHECKOV), "-d", str(tree / directory), "--framework", framework, "--compact", "--quiet", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(result.stdout or "[]")
    reports = report if isinstance(report, list) else [report]
    return [check for r in reports for check in r.get("results", {}).get("failed_checks", [])]


@pytest.fixture(scope="module")
def findings(tmp_path_factory) -> list[dict]:
    tree = tmp_path_factory.mktemp("checkov")
    _write(tree)
    return _failed(tree, "cloudformation", "cfn") + _failed(tree, "kubernetes", "k8s")


def _suppressed(finding: dict) -> bool:
    rule = SUPPRESSIONS.get(finding["check_id"])
    return rule is not None and any(fnmatch.fnmatchcase(finding["resource"], p) for p in rule["resources"])


def test_no_unsuppressed_finding(findings):
    open_ = sorted({(f["check_id"], f["resource"], f["file_path"]) for f in findings if not _suppressed(f)})
    assert open_ == []


def test_every_suppression_is_used_and_says_why(findings):
    used = {f["check_id"] for f in findings if _suppressed(f)}
    assert sorted(set(SUPPRESSIONS) - used) == []
    for check_id, rule in SUPPRESSIONS.items():
        assert len(rule["reason"]) >= 80, check_id


def test_the_gate_sees_a_real_finding(tmp_path):
    """An unencrypted bucket is reported (the scanner runs and reads our layout)."""
    (tmp_path / "cfn").mkdir()
    template = {"Resources": {"Plain": {"Type": "AWS::S3::Bucket", "Properties": {}}}}
    (tmp_path / "cfn" / "t.template.json").write_text(json.dumps(template))
    assert any(f["resource"] == "AWS::S3::Bucket.Plain" for f in _failed(tmp_path, "cloudformation", "cfn"))
