"""GATE: checkov, the second scanner (CloudFormation and Kubernetes frameworks), over every synthesized example —
no finding but those tests/gates/checkov_suppressions.yaml accepts, each with its reason, and no suppression that
no finding uses. checkov runs from its own venv (.venv-checkov, `make test` installs it)."""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import synthesized_config
from tests.synth import CONFIGS, ROOT

CHECKOV = ROOT / ".venv-checkov" / "bin" / "checkov"
SUPPRESSIONS = yaml.safe_load((Path(__file__).parent / "checkov_suppressions.yaml").read_text())

pytestmark = pytest.mark.skipif(not CHECKOV.exists(), reason="checkov not installed: run `make test` (.venv-checkov)")


#: The CloudFormation scan is the long one (~18 s of ~23 s): its examples are split over two folders, scanned by two
#: checkov processes beside the Kubernetes one.
CFN_FOLDERS = ("cfn-1", "cfn-2")


def _write(tree: Path) -> None:
    for index, path in enumerate(CONFIGS):
        app = synthesized_config(path)
        cfn = tree / CFN_FOLDERS[index % len(CFN_FOLDERS)] / path.stem
        cfn.mkdir(parents=True)
        for name, template in app.templates.items():
            (cfn / f"{name}.template.json").write_text(json.dumps(template))
        (tree / "k8s").mkdir(exist_ok=True)
        (tree / "k8s" / f"{path.stem}.yaml").write_text(yaml.safe_dump_all(app.kubernetes_objects()))


def _start(tree: Path, framework: str, directory: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(CHECKOV), "-d", str(tree / directory), "--framework", framework, "--compact", "--quiet", "-o", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _report(scan: subprocess.Popen[str]) -> list[dict]:
    stdout, _ = scan.communicate(timeout=600)
    report = json.loads(stdout or "[]")
    return report if isinstance(report, list) else [report]


def _run(tree: Path, framework: str, directory: str) -> list[dict]:
    return _report(_start(tree, framework, directory))


def _failed(tree: Path, framework: str, directory: str) -> list[dict]:
    return [check for r in _run(tree, framework, directory) for check in r.get("results", {}).get("failed_checks", [])]


def _checked(reports: list[dict]) -> int:
    """Checks run (passed + failed): 0 means checkov scanned nothing."""
    return sum(r.get("summary", {}).get("passed", 0) + r.get("summary", {}).get("failed", 0) for r in reports)


def scan_directory() -> Path:
    """A directory of the scan's own, on a path without dot-directories: checkov's runners skip files under any
    ``.``-directory (a TMPDIR such as ``~/.cache/tmp`` made the gate scan nothing and pass)."""
    for base in (os.environ.get("TMPDIR"), tempfile.gettempdir(), "/tmp", "/var/tmp", str(ROOT)):
        if base and Path(base).is_dir() and not any(p.startswith(".") for p in Path(base).resolve().parts[1:]):
            return Path(tempfile.mkdtemp(prefix="inferstack-checkov-", dir=base))
    pytest.fail("no temporary directory outside dot-directories: set TMPDIR to one (checkov skips dot-directories)")


@pytest.fixture(scope="module")
def scans() -> Iterator[dict[str, list[dict]]]:
    tree = scan_directory()
    _write(tree)
    # every scan at once: the machine's two cores, each checkov process on folders of its own
    cloudformation = [_start(tree, "cloudformation", folder) for folder in CFN_FOLDERS]
    kubernetes = _start(tree, "kubernetes", "k8s")
    yield {
        "cloudformation": [report for scan in cloudformation for report in _report(scan)],
        "kubernetes": _report(kubernetes),
    }
    shutil.rmtree(tree, ignore_errors=True)


@pytest.fixture(scope="module")
def findings(scans) -> list[dict]:
    return [
        check for reports in scans.values() for r in reports for check in r.get("results", {}).get("failed_checks", [])
    ]


def test_both_frameworks_scanned_every_example(scans):
    for framework, reports in scans.items():
        assert _checked(reports) > 0, f"{framework}: checkov ran no check"
        files = {
            check["file_path"]
            for r in reports
            for kind in ("passed_checks", "failed_checks")
            for check in r.get("results", {}).get(kind, [])
        }
        scanned = {path.stem for path in CONFIGS if any(f"/{path.stem}" in f for f in files)}
        assert scanned == {path.stem for path in CONFIGS}, framework


def test_the_scan_directory_is_outside_dot_directories(monkeypatch, tmp_path):
    hidden = tmp_path / ".cache" / "tmp"
    hidden.mkdir(parents=True)
    monkeypatch.setenv("TMPDIR", str(hidden))
    monkeypatch.setattr(tempfile, "tempdir", None)
    chosen = scan_directory()
    assert not any(p.startswith(".") for p in chosen.resolve().parts[1:]), chosen
    chosen.rmdir()


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
