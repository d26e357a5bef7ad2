"""GATE: a syrupy snapshot of every template of every config, for review in pull requests.

Asset content hashes are normalized away. Update on purpose only: ``pytest --snapshot-update`` and say so in the
commit message.
"""

from __future__ import annotations

import pytest
from syrupy.extensions.json import JSONSnapshotExtension

from tests.synth import normalized


@pytest.fixture
def snapshot_json(snapshot):
    return snapshot.use_extension(JSONSnapshotExtension)


def test_templates_match_snapshots(any_app, snapshot_json):
    for name in sorted(any_app.templates):
        assert normalized(any_app.templates[name]) == snapshot_json(name=name)
