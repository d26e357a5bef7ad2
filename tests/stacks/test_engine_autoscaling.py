"""SGLang and TGI autoscaling (issue 26: autoscaling beyond vLLM): GIVEN ``autoscaling`` on an ``sglang`` or ``tgi``
workload, THEN a KEDA ScaledObject (or an HPA) scales its Deployment on the engine's own queue gauge —
``sglang:num_queue_reqs`` (the 0.5.19 wheel's metrics_collector.py; exported only with ``--enable-metrics``, always
passed), ``tgi_queue_size`` (TGI v3.3.7 backends/v3/src/queue.rs, on the router's /metrics) — and the autoscaling
rules name that gauge."""

from __future__ import annotations

import pytest
import yaml

from inferstack.charts.workload import StorageRefs
from inferstack.config import parse_config
from inferstack.plan import resolve
from inferstack.plan.workloads import workloads_plan
from inferstack.rules import evaluate
from inferstack.stacks.workloads import render_workloads
from tests.synth import EFS_ID, ROOT, SYNC_IMAGE

REFS = StorageRefs(region="us-west-2", bucket="team-models", efs_id=EFS_ID, sync_image=SYNC_IMAGE)


def config(example: str = "sglang-structured", **scaling):
    data = yaml.safe_load((ROOT / "examples" / f"{example}.yaml").read_text())
    data["workloads"][0].pop("replicas", None)
    data["workloads"][0]["autoscaling"] = scaling
    return parse_config(data)


def objects(example: str = "sglang-structured", **scaling) -> list[dict]:
    (item,) = render_workloads(workloads_plan(config(example, **scaling)), None, REFS)
    return item.manifest


def test_keda_scales_the_deployment_on_sglangs_queue():
    rendered = objects(min_replicas=1, max_replicas=3, target_waiting_requests=8)
    (scaled,) = [o for o in rendered if o["kind"] == "ScaledObject"]
    (deployment,) = [o for o in rendered if o["kind"] == "Deployment"]
    assert scaled["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    assert (scaled["spec"]["minReplicaCount"], scaled["spec"]["maxReplicaCount"]) == (1, 3)
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["type"] == "prometheus" and trigger["metadata"]["query"].startswith("sum(sglang:num_queue_reqs{")
    assert 'namespace="sglang"' in trigger["metadata"]["query"] and trigger["metadata"]["threshold"] == "8"
    # the workload's series by the label the PodMonitor copies (a pod-name pattern misses truncated pod names); with
    # priority scheduling the total is the priority="" series, with pipeline parallelism the first stage's
    assert trigger["metadata"]["query"] == (
        'sum(sglang:num_queue_reqs{namespace="sglang",app_kubernetes_io_name="sglang-qwen",priority="",pp_rank="0"})'
    )
    engine = deployment["spec"]["template"]["spec"]["containers"][0]
    assert "--enable-metrics" in engine["args"]  # without it the gauge does not exist and nothing scales


def test_an_hpa_reads_the_pods_metric():
    (hpa,) = [o for o in objects(kind="hpa") if o["kind"] == "HorizontalPodAutoscaler"]
    (metric,) = hpa["spec"]["metrics"]
    assert metric["pods"]["metric"]["name"] == "sglang_num_queue_reqs"


@pytest.mark.parametrize(
    ("scaling", "rule", "words"),
    [
        ({"min_replicas": 0}, "AUTOSCALING-ZERO", "sglang:num_queue_reqs"),
        ({"kind": "hpa"}, "AUTOSCALING-HPA-ADAPTER", "sglang_num_queue_reqs"),
    ],
)
def test_the_rules_name_sglangs_gauge(scaling, rule, words):
    (finding,) = [f for f in evaluate(config(**scaling)).errors if f.rule == rule]
    assert words in finding.message


def test_keda_is_installed_before_the_scaled_object():
    """The ScaledObject is KEDA's custom resource: the plan lists KEDA among the operators the workload needs (the
    workloads stack installs it, and applies the workload after it); an HPA needs none."""
    (keda,) = resolve(config(min_replicas=1)).workloads
    assert "keda" in keda.operators
    (hpa,) = resolve(config(kind="hpa")).workloads
    assert "keda" not in hpa.operators


def test_tgi_scales_on_its_queue_gauge():
    rendered = objects("tgi", min_replicas=1, max_replicas=2)
    (scaled,) = [o for o in rendered if o["kind"] == "ScaledObject"]
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["metadata"]["query"].startswith("sum(tgi_queue_size{")
    (hpa,) = [o for o in objects("tgi", kind="hpa") if o["kind"] == "HorizontalPodAutoscaler"]
    assert hpa["spec"]["metrics"][0]["pods"]["metric"]["name"] == "tgi_queue_size"
    (keda,) = resolve(config("tgi", min_replicas=1)).workloads
    assert "keda" in keda.operators


def test_a_long_workload_name_is_still_found():
    """Defect: the query matched pods by ``<name>-<hash>-<suffix>``, which a name over ~46 characters never has (the
    API server truncates generated pod names): KEDA read 0 and never scaled. The series carry the workload's name
    label (the PodMonitor's podTargetLabels), whatever the pod is called."""
    name = "a" * 56
    data = yaml.safe_load((ROOT / "examples" / "tgi.yaml").read_text())
    data["workloads"][0].update(name=name, autoscaling={"min_replicas": 1}, replicas=1)
    (item,) = render_workloads(workloads_plan(parse_config(data)), None, REFS)
    (scaled,) = [o for o in item.manifest if o["kind"] == "ScaledObject"]
    (monitor,) = [o for o in item.manifest if o["kind"] == "PodMonitor"]
    assert "app.kubernetes.io/name" in monitor["spec"]["podTargetLabels"]
    assert f'app_kubernetes_io_name="{name}"' in scaled["spec"]["triggers"][0]["metadata"]["query"]
    assert "pod=~" not in scaled["spec"]["triggers"][0]["metadata"]["query"]
