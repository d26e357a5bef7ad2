"""inferstack's Pod Security checker against upstream's own fixtures (kubernetes/pod-security-admission v0.36.2,
Kubernetes 1.36; provenance in tests/fixtures/pod-security-admission/README.md): every ``pass`` pod of a level is
admitted at that level, every ``fail`` pod is refused at its level — for the check its file name names — and a
baseline ``fail`` pod at restricted too."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from inferstack.gates.pod_security import Level, PodSecurityFinding, check_manifests

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pod-security-admission" / "test" / "testdata"
LEVELS = {"baseline": Level.BASELINE, "restricted": Level.RESTRICTED}
#: Baseline checks a restricted check overrides (``OverrideCheckIDs`` in upstream's policy/check_*.go): at
#: restricted the replacement reports the refusal.
OVERRIDDEN_AT_RESTRICTED = {
    "hostpathvolumes": "restrictedvolumes",
    "seccompprofile_baseline": "seccompprofile_restricted",
    "capabilities_baseline": "capabilities_restricted",
    "procmount": "procmount_restricted",
}


def _cases() -> list[tuple[str, str, Path]]:
    return [
        (level, verdict, path)
        for level in LEVELS
        for verdict in ("pass", "fail")
        for path in sorted((FIXTURES / level / "v1.35" / verdict).glob("*.yaml"))
    ]


CASES = _cases()


def _findings(path: Path, level: Level) -> list[PodSecurityFinding]:
    pod = yaml.safe_load(path.read_text())
    pod.setdefault("metadata", {})["namespace"] = "fixture"
    return check_manifests([pod], {"fixture": level})


def _check_of(path: Path) -> str:
    """The check a fixture exercises: its file name without the case number (``runAsNonRoot1`` → runasnonroot)."""
    return path.stem.rstrip("0123456789").lower()


def test_the_fixtures_are_all_there():
    counts = {(level, verdict): 0 for level in LEVELS for verdict in ("pass", "fail")}
    for level, verdict, _ in CASES:
        counts[(level, verdict)] += 1
    assert counts == {
        ("baseline", "pass"): 15,
        ("baseline", "fail"): 34,
        ("restricted", "pass"): 23,
        ("restricted", "fail"): 76,
    }


@pytest.mark.parametrize(("level", "verdict", "path"), CASES, ids=[f"{c[0]}-{c[1]}-{c[2].stem}" for c in CASES])
def test_upstream_fixture(level: str, verdict: str, path: Path):
    findings = _findings(path, LEVELS[level])
    if verdict == "pass":
        assert [str(f) for f in findings] == []
        return
    check = _check_of(path)
    if level == "restricted":
        check = OVERRIDDEN_AT_RESTRICTED.get(check, check)
    assert check in {f.check.lower() for f in findings}, f"{path.name}: refused for {[f.check for f in findings]}"
    if level == "baseline":
        assert _findings(path, Level.RESTRICTED), f"{path.name} is refused at baseline but admitted at restricted"
