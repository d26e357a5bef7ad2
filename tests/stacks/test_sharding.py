"""Workloads are spread over as many stacks as CloudFormation's template limits need."""

from __future__ import annotations

import json
from types import SimpleNamespace

from inferstack.config import parse_config
from inferstack.stacks import workloads as workloads_module
from inferstack.stacks.workloads import shard_workloads


def items(*sizes: int) -> list:
    return [SimpleNamespace(size=size, name=f"w{i}") for i, size in enumerate(sizes)]


def test_shards_by_bytes_keeping_order():
    shards = shard_workloads(items(300, 300, 100, 501), max_bytes=600, max_workloads=10)
    assert [[i.name for i in shard] for shard in shards] == [["w0", "w1"], ["w2"], ["w3"]]


def test_shards_by_count():
    shards = shard_workloads(items(*[10] * 5), max_bytes=10_000, max_workloads=2)
    assert [len(shard) for shard in shards] == [2, 2, 1]


def test_an_oversized_chart_gets_a_stack_of_its_own():
    shards = shard_workloads(items(50, 900, 50), max_bytes=600, max_workloads=10)
    assert [len(shard) for shard in shards] == [1, 1, 1]


def test_many_workloads_spread_over_dependent_stacks(monkeypatch, synth_config):
    monkeypatch.setattr(workloads_module, "SHARD_WORKLOADS", 2)
    config = parse_config(
        {
            "compute": {"karpenter_pools": [{"name": "gpu", "instance_families": ["g6e"]}]},
            "workloads": [{"name": f"qwen-{i}", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}} for i in range(5)],
        }
    )
    app = synth_config(config, nag=False)
    names = sorted(n for n in app.templates if "-workloads" in n)
    assert names == ["inferstack-workloads", "inferstack-workloads-2", "inferstack-workloads-3"]
    kinds = {n: [o["kind"] for t in [app.templates[n]] for o in _objects(t)] for n in names}
    assert kinds["inferstack-workloads"].count("Namespace") == 1
    assert "Namespace" not in kinds["inferstack-workloads-2"]
    assert sum(k.count("Deployment") for k in kinds.values()) == 5
    helm = [
        r for n in names for r in app.templates[n]["Resources"].values() if r["Type"] == "Custom::AWSCDK-EKS-HelmChart"
    ]
    assert len(helm) == 1  # kube-prometheus-stack once, in the first stack
    second = app.stacks["inferstack-workloads-2"]
    assert app.stacks["inferstack-workloads"] in second.dependencies
    for name in names:
        assert len(json.dumps(app.templates[name])) < 1_000_000


def _objects(template: dict) -> list[dict]:
    from inferstack.cli import kubernetes_objects

    return kubernetes_objects(template)


#: CloudFormation limits for a template deployed through S3 (what cdk deploy does): bytes and resources.
TEMPLATE_BYTES, TEMPLATE_RESOURCES = 1_048_576, 500


def test_250_workloads_fit_cloudformation(synth_config):
    """Workload roles shard with their workloads: at 100 workloads the storage stack used to hold 408 of its 500
    resources (and failed near 125)."""
    config = parse_config(
        {
            "compute": {"karpenter_pools": [{"name": "gpu", "instance_families": ["g6e"], "max_accelerators": 1000}]},
            "workloads": [{"name": f"w{i}", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}} for i in range(250)],
        }
    )
    app = synth_config(config, nag=False)
    for name, template in app.templates.items():
        assert len(template["Resources"]) < TEMPLATE_RESOURCES, name
        assert len(json.dumps(template, separators=(",", ":"))) < TEMPLATE_BYTES, name
    assert len(app.template("storage")["Resources"]) < 20, "the storage stack does not grow with the workloads"
    associations = sum(
        len(app.resources(name.split("inferstack-")[1], "AWS::EKS::PodIdentityAssociation"))
        for name in app.templates
        if "-workloads" in name
    )
    assert associations == 500  # reader + sync per workload, each in its workload's stack
