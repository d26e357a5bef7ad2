"""``inferstack.testing`` as a team uses it: a ten-line test file snapshots its own config; the first run with
``--snapshot-update`` writes readable files (a JSON template per stack, a YAML file per manifest), the next run
passes, and a changed config fails with the changed lines."""

from __future__ import annotations

import json
import shutil

import pytest

from inferstack.testing import snapshot_files
from tests.synth import ROOT

pytest_plugins = ["pytester"]

TEST_FILE = """
pytest_plugins = ["inferstack.testing"]


def test_platform(inferstack_snapshot):
    inferstack_snapshot("platform.yaml", nag=False)
"""


@pytest.fixture
def team(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copy(ROOT / "cdk.json", pytester.path / "cdk.json")
    (pytester.path / "platform.yaml").write_text("name: team\nnetwork: {max_azs: 2}\n")
    pytester.makepyfile(test_platform=TEST_FILE)
    return pytester


def test_a_team_snapshots_its_config_and_sees_what_changed(team):
    team.runpytest_inprocess("--snapshot-update", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    written = sorted(p.relative_to(team.path).as_posix() for p in team.path.rglob("__snapshots__/**/*.*"))
    assert any(p.endswith("[team-cluster].json") for p in written), written
    assert any(p.endswith(".yaml") for p in written), written  # the cluster stack's manifests, as YAML
    cluster = next(p for p in team.path.rglob("*[[]team-cluster[]].json"))
    assert "<see snapshot team-cluster." in cluster.read_text()  # manifests split out of the template
    team.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)

    (team.path / "platform.yaml").write_text("name: team\nnetwork: {max_azs: 3}\n")
    result = team.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert "snapshot" in result.stdout.str().lower()


def test_the_files_are_the_projects_own_snapshots(default_app):
    """What a team's snapshot holds is byte for byte what inferstack's own reviewed snapshots hold."""
    committed = ROOT / "tests" / "gates" / "__snapshots__" / "test_snapshots"
    files = snapshot_files(default_app.templates)
    manifests = [f for f in files if f.format == "yaml"]
    assert manifests
    for file in manifests:
        own = committed / f"test_kubernetes_objects_match_snapshots[inferstack][{file.name}].yaml"
        assert file.text == own.read_text(), file.name
    templates = {f.name: json.loads(f.text) for f in files if f.format == "json"}
    assert set(templates) == set(default_app.templates)
    for name, template in templates.items():
        own = json.loads((committed / f"test_templates_match_snapshots[inferstack][{name}].json").read_text())
        assert template == own, name
