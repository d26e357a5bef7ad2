"""GATE (property-based): no config, however damaged, gets a traceback, a hang or an unnamed error — and a config
``check`` accepts renders its Kubernetes objects without raising.

Configs are the default and every example, mutated at a random place of the schema (a value replaced by a hostile
one, a key removed, an unknown key added), plus YAML-level damage of their text. Each goes through the loader, the
validation and every rule; accepted ones also through the workload charts (the Kubernetes side of synth), and a
small sample through the whole CDK synth (slow). Hypothesis is pinned (requirements.txt) and derandomized, so a run
is reproducible; the examples stay within the suite's time budget."""

from __future__ import annotations

import copy
import math
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from inferstack.charts.workload import StorageRefs
from inferstack.config import ConfigError, load_config, parse_config
from inferstack.constructs.validation import PropError
from inferstack.plan.workloads import workloads_plan
from inferstack.rules import evaluate
from inferstack.stacks.workloads import render_workloads
from tests.synth import ROOT, SYNC_IMAGE

CONFIG_FILES = sorted([ROOT / "inferstack.yaml", *(ROOT / "examples").glob("*.yaml")])
CONFIGS = {path.stem: yaml.safe_load(path.read_text()) for path in CONFIG_FILES}
HOSTILE: list[Any] = [
    None,
    "",
    " ",
    "\x00",
    "line\nbreak",
    "x" * 5000,
    -1,
    0,
    10**400,
    math.inf,
    -math.inf,
    math.nan,
    True,
    [],
    {},
    {"unexpected": 1},
    [{"unexpected": 1}],
    "0.0.0.0/0",
    "*",
    "../..",
    "a" * 64,
    "Ünïcödé",
    1e6,
    "$(reboot)",
]
SETTINGS = settings(
    max_examples=int(os.environ.get("INFERSTACK_PROPERTY_EXAMPLES", "150")),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every location inside ``node`` (mapping keys and list indexes), the root excluded."""
    found: list[tuple[Any, ...]] = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        found.append((*prefix, key))
        found.extend(_paths(value, (*prefix, key)))
    return found


def _parent(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        data = data[key]
    return data


@st.composite
def mutated_configs(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from(sorted(CONFIGS)))
    data = copy.deepcopy(CONFIGS[name])
    path = draw(st.sampled_from(_paths(data)))
    parent, key = _parent(data, path), path[-1]
    action = draw(st.sampled_from(("replace", "replace", "replace", "delete", "add")))
    if action == "delete":
        del parent[key]
    elif action == "add" and isinstance(parent, dict):
        parent[draw(st.sampled_from(("bogus_key", "kind", "pool", "name")))] = draw(st.sampled_from(HOSTILE))
    else:
        parent[key] = draw(st.sampled_from(HOSTILE))
    return data


def _named(error: ConfigError) -> None:
    assert error.problems, "a ConfigError names at least one problem"
    for problem in error.problems:
        assert problem.path, problem
        assert problem.message.strip(), problem
        assert "function-after" not in problem.path and "[key]" not in problem.path, problem


REFS = StorageRefs(
    region="us-east-1",
    bucket="models",
    fsx_id="fs-0",
    fsx_dns_name="fs.local",
    fsx_mount_name="m",
    sync_image=SYNC_IMAGE,
)


@SETTINGS
@given(mutated_configs())
def test_a_damaged_config_gets_named_errors_or_builds(data):
    try:
        config = parse_config(data)
    except ConfigError as error:
        _named(error)
        event("refused by validation")
        return
    report = evaluate(config)  # never raises: every rule handles every valid config
    for finding in [*report.errors, *report.warnings]:
        assert finding.path and finding.message and finding.fix, finding
    if report.errors:
        event("refused by a rule")
        return
    event("accepted and rendered")
    try:
        render_workloads(workloads_plan(config), None, REFS)  # what check accepts, synth's Kubernetes side builds
    except PropError as error:  # a named construct error, never a traceback
        assert str(error).strip()


@SETTINGS
@given(st.sampled_from(CONFIG_FILES), st.integers(min_value=0), st.binary(min_size=1, max_size=64))
def test_damaged_yaml_gets_one_named_error(tmp_path_factory, path, position, junk):
    text = path.read_bytes()
    cut = position % (len(text) + 1)
    damaged = tmp_path_factory.mktemp("yaml") / "config.yaml"
    damaged.write_bytes(text[:cut] + junk + text[cut:])
    try:
        load_config(damaged)
    except ConfigError as error:
        _named(error)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["inferstack", "vllm-gpu-tp4"])
def test_accepted_mutations_synthesize(name, synth_config):
    """A sample through the whole CDK synth: mutations the validation accepts (a changed replica count, a removed
    optional key) build every stack."""
    data = copy.deepcopy(CONFIGS[name])
    data["workloads"][0]["replicas"] = 2
    data["workloads"][0].pop("monitoring", None)
    config = parse_config(data)
    assert not evaluate(config).errors
    synth_config(config, nag=False)


def test_the_gate_sees_a_traceback():
    """The gate fails on what it must catch: a non-ConfigError escaping parse_config is not swallowed."""
    with pytest.raises(TypeError):
        try:
            parse_config(Path("not a mapping"))  # type: ignore[arg-type]
        except ConfigError:
            raise TypeError("parse_config turned a bad type into a ConfigError, as it should") from None
