"""GIVEN ``INFERSTACK_FIELD_DESCRIPTIONS=0`` (what ``app.py`` sets: synth renders no schema), WHEN the config models
are imported, THEN they carry no field descriptions — the import skips reading every model's source — and every
example validates to exactly the config it gives with descriptions; and what prints descriptions refuses to run
without them instead of printing a schema without them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from inferstack.config import InferstackConfig, load_config
from inferstack.config.base import FIELD_DESCRIPTIONS, FIELD_DESCRIPTIONS_ENV
from inferstack.config.workloads import ModelSource
from tests.synth import ROOT

EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
WITHOUT = {**os.environ, FIELD_DESCRIPTIONS_ENV: "0", "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
SCRIPT = """
import json, sys
from inferstack.config import InferstackConfig, load_config
from inferstack.config.workloads import ModelSource
print(json.dumps({
    "description": InferstackConfig.model_fields["workloads"].description,
    "strict_model_description": ModelSource.model_fields["type"].description,
    "configs": {path: load_config(path).model_dump(mode="json") for path in sys.argv[1:]},
}))
"""


def test_app_py_turns_them_off_before_importing_inferstack():
    text = (ROOT / "app.py").read_text()
    assert text.index(f'os.environ.setdefault("{FIELD_DESCRIPTIONS_ENV}", "0")') < text.index("from inferstack")


def test_without_descriptions_every_example_validates_alike():
    # this process: on, for the root model and a StrictModel
    assert FIELD_DESCRIPTIONS and InferstackConfig.model_fields["workloads"].description
    assert ModelSource.model_fields["type"].description
    paths = [str(p) for p in EXAMPLES]
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *paths], cwd=ROOT, env=WITHOUT, capture_output=True, text=True, check=True
    )
    without = json.loads(done.stdout)
    # the switch works on the root model and on every StrictModel: nothing was read
    assert without["description"] is None and without["strict_model_description"] is None
    assert without["configs"] == {path: load_config(path).model_dump(mode="json") for path in paths}


def test_the_schema_command_refuses_to_print_a_schema_without_them():
    done = subprocess.run(
        [sys.executable, "-m", "inferstack.cli", "schema"], cwd=ROOT, env=WITHOUT, capture_output=True, text=True
    )
    assert done.returncode != 0 and f"unset {FIELD_DESCRIPTIONS_ENV}" in done.stderr and not done.stdout
