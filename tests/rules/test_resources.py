"""RESOURCE-LIMITS and the limits set apart from requests (issue 26 §2.1): GIVEN ``resources.cpu_limit`` /
``memory_limit_gib``, THEN the plan's pods carry them as limits (requests unchanged), every kind's pod renders them,
KServe's predictor keeps ours over its runtime's, and a limit below a request is a named error — at the field when
both are given, by the rule when the request is derived from the pool."""

from __future__ import annotations

import pytest

from inferstack.charts.kserve import predictor_limits
from inferstack.config import ConfigError, parse_config
from inferstack.plan import resolve
from inferstack.rules import evaluate, resources

POOLS = {"karpenter_pools": [{"name": "l40s", "instance_types": ["g6e.2xlarge"]}]}
MODEL = {"id": "Qwen/Qwen3-8B", "source": {"type": "s3"}}


def config(kind: str = "vllm", **limits):
    model = MODEL if kind == "vllm" else {**MODEL, "source": {"type": "s3_mount"}}
    workload = {"name": "q", "kind": kind, "pool": "l40s", "model": model, "resources": limits}
    return parse_config({"compute": POOLS, "workloads": [workload]})


def test_limits_go_to_the_pods_and_requests_stay_derived():
    (pod,) = [role.pod for role in resolve(config(cpu_limit=8, memory_limit_gib=64)).workloads[0].roles.values()]
    assert pod.limits["cpu"] == "8" and pod.limits["memory"] == "64Gi"
    assert pod.requests["memory"] != "64Gi" and pod.cpu_limit == 8 and pod.memory_limit_gib == 64
    (default,) = [role.pod for role in resolve(config()).workloads[0].roles.values()]
    assert "cpu" not in default.limits and default.limits["memory"] == default.requests["memory"]


def test_kserve_keeps_our_cpu_limit_over_its_runtimes():
    (pod,) = [r.pod for r in resolve(config("kserve", cpu_limit=6)).workloads[0].roles.values()]
    assert predictor_limits(pod.requests, pod.limits)["cpu"] == "6"


def test_a_limit_below_a_given_request_is_refused_at_the_field():
    with pytest.raises(ConfigError) as raised:
        config(cpu=4, cpu_limit=2)
    assert "workloads[0].resources" in str(raised.value) and "cpu_limit: 2 vCPU is below cpu 4" in str(raised.value)


def test_a_limit_below_a_derived_request_is_named_by_the_rule():
    (finding,) = resources.check(config(memory_limit_gib=4))
    assert finding.path == "workloads[0].resources.memory_limit_gib"
    assert "(derived from the pool)" in finding.message and "raise memory_limit_gib to at least" in finding.fix
    (cpu,) = resources.check(config(cpu_limit=0.5))
    assert cpu.path == "workloads[0].resources.cpu_limit"
    assert list(resources.check(config(cpu_limit=64, memory_limit_gib=512))) == []
    assert [f.rule for f in evaluate(config(memory_limit_gib=4)).errors] == ["RESOURCE-LIMITS"]


@pytest.mark.parametrize("kind", ["vllm", "sglang", "tgi"])
def test_the_engine_container_renders_the_limits(kind):
    from inferstack.charts.workload import StorageRefs
    from inferstack.plan.workloads import workloads_plan
    from inferstack.stacks.workloads import render_workloads
    from tests.synth import SYNC_IMAGE

    refs = StorageRefs(region="us-west-2", bucket="team-models", sync_image=SYNC_IMAGE)
    (rendered,) = render_workloads(workloads_plan(config(kind, cpu_limit=8, memory_limit_gib=64)), None, refs=refs)
    (deployment,) = [o for o in rendered.manifest if o["kind"] == "Deployment"]
    (engine,) = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] != "model-sync-wait"]
    assert str(engine["resources"]["limits"]["cpu"]) == "8" and engine["resources"]["limits"]["memory"] == "64Gi"
    assert engine["resources"]["requests"]["memory"] != "64Gi"
