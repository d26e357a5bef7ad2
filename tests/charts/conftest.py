"""Shared by the chart tests: every kind's examples rendered once as they are (render_workloads with placeholder
storage), for the tests that compare a customised render with the plain one."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from inferstack.charts.workload import StorageRefs
from inferstack.config import parse_config
from inferstack.config.kinds import KINDS
from inferstack.plan.workloads import workloads_plan
from inferstack.stacks.workloads import render_workloads
from tests.synth import EFS_ID, ROOT, SYNC_IMAGE

REFS = StorageRefs(region="us-west-2", bucket="team-models", efs_id=EFS_ID, sync_image=SYNC_IMAGE)
KIND_EXAMPLES = sorted({example for kind in KINDS.values() for example in kind.examples})


def render(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every workload object of the config ``data`` (a parsed YAML mapping), rendered."""
    config = parse_config(data)
    return [obj for item in render_workloads(workloads_plan(config), None, REFS) for obj in item.manifest]


@pytest.fixture(scope="session")
def plain_examples() -> dict[str, list[dict[str, Any]]]:
    """example file name → its workload objects, rendered as the example is."""
    return {e: render(yaml.safe_load((ROOT / "examples" / e).read_text())) for e in KIND_EXAMPLES}


def engine_args(example: str, command_tail: list[str]) -> list[str]:
    """The args of the one Deployment container of ``example`` whose command ends with ``command_tail`` (the engine
    server as the pod runs it)."""
    objects = render(yaml.safe_load((ROOT / "examples" / example).read_text()))
    (container,) = [
        c
        for o in objects
        if o["kind"] == "Deployment"
        for c in o["spec"]["template"]["spec"]["containers"]
        if c.get("command", [])[-len(command_tail) :] == command_tail
    ]
    return list(container["args"])
