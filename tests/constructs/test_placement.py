"""PodPlacement: one value for where pods run, checked when it is made and rendered the same way by every
construct (an empty placement renders what the constructs always rendered)."""

from __future__ import annotations

import dataclasses

import cdk8s
import pytest

from inferstack.constructs.batch import BATCH_PLACEMENT, BATCH_PRIORITY_CLASS
from inferstack.constructs.bench import BenchJob, BenchJobProps, BenchLoad
from inferstack.constructs.model_sync import ModelSyncJob, ModelSyncJobProps
from inferstack.constructs.pod import PodPlacement, ServingWorkload
from inferstack.constructs.pod.group import ServingGroup, ServingGroupProps
from inferstack.constructs.validation import PropError
from tests.constructs.test_serving_pod import TOY

ZONE = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "topology.kubernetes.io/zone"}
        ]
    }
}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"node_selector": {"bad key!": "x"}}, r"node_selector key 'bad key!' — must be \[prefix/\]name"),
        ({"node_selector": {"Bad.Prefix/pool": "x"}}, "node_selector key 'Bad.Prefix/pool'"),
        ({"node_selector": {"inferstack.io/pool": "a b"}}, r"node_selector\['inferstack.io/pool'\] 'a b'"),
        ({"tolerations": ["nvidia.com/gpu/x"]}, r"tolerations\[\] 'nvidia.com/gpu/x'"),
        ({"tolerations": [("dedicated", "NoRun")]}, r"tolerations\['dedicated'\] effect 'NoRun' — valid: NoExecute"),
        (
            {"tolerations": [("dedicated",)]},
            r"tolerations\[\] \('dedicated',\) — a taint key or a \(key, effect\) pair",
        ),
        ({"tolerations": "nvidia.com/gpu"}, "tolerations 'nvidia.com/gpu' — a sequence of keys"),
        ({"affinity": {"nodeAfinity": {}}}, r"affinity keys \['nodeAfinity'\] — valid: nodeAffinity"),
        ({"scheduler_name": "My_Scheduler"}, "scheduler_name 'My_Scheduler'"),
        ({"priority_class": ""}, "priority_class ''"),
    ],
)
def test_bad_values_are_refused_when_the_placement_is_made(fields, message):
    with pytest.raises(PropError, match=f"PodPlacement: {message}"):
        PodPlacement(**fields)


def test_tokens_and_valid_values_pass():
    PodPlacement(
        node_selector={"karpenter.sh/nodepool": "gpu", "topology.kubernetes.io/zone": "${Token[Zone.12]}", "a": ""},
        tolerations=["nvidia.com/gpu", ("dedicated", "NoExecute"), ["CriticalAddonsOnly", "PreferNoSchedule"]],
        affinity=ZONE,
        scheduler_name="my-scheduler",
        priority_class="inferstack-serving",
    )


def test_pod_spec_renderings():
    empty = PodPlacement()
    assert empty.pod_spec_kwargs() == {
        "node_selector": None,
        "tolerations": None,
        "scheduler_name": None,
        "priority_class_name": None,
    }
    assert empty.pod_spec_kwargs(empty=True)["node_selector"] == {}
    assert empty.pod_spec_kwargs(empty=True)["tolerations"] == []
    assert empty.pod_spec_json() == {"nodeSelector": {}, "tolerations": []}
    full = PodPlacement(
        node_selector={"p": "gpu"},
        tolerations=[("b", "NoExecute"), "a", "a"],
        affinity=ZONE,
        scheduler_name="s",
        priority_class="c",
    )
    assert full.pod_spec_json() == {
        "nodeSelector": {"p": "gpu"},
        "tolerations": [
            {"key": "a", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "b", "operator": "Exists", "effect": "NoExecute"},
        ],
        "affinity": ZONE,
        "schedulerName": "s",
        "priorityClassName": "c",
    }


def test_refuse_names_the_construct_and_the_field():
    PodPlacement(node_selector={"p": "gpu"}).refuse("X 'a'", "placement", ("affinity",), "not rendered")
    with pytest.raises(PropError, match=r"X 'a': cache.placement.priority_class 'c' — not rendered"):
        PodPlacement(priority_class="c").refuse(
            "X 'a'", "cache.placement", ("affinity", "priority_class"), "not rendered"
        )


def _spec(objects: list[dict], kind: str) -> dict:
    found = next(o for o in objects if o["kind"] == kind)
    return found["spec"]


def test_affinity_reaches_the_serving_deployment_and_group():
    placement = dataclasses.replace(TOY.placement, affinity=ZONE, scheduler_name="gang")
    chart = cdk8s.Chart(cdk8s.App(), "c")
    ServingWorkload(chart, "toy", dataclasses.replace(TOY, placement=placement))
    spec = _spec(chart.to_json(), "Deployment")["template"]["spec"]
    assert spec["affinity"] == ZONE and spec["schedulerName"] == "gang"
    chart = cdk8s.Chart(cdk8s.App(), "g")
    pod = dataclasses.replace(TOY, placement=placement, autoscaling=None)
    ServingGroup(chart, "g", ServingGroupProps(pod=pod, size=2, worker_command=["w"], worker_args=[]))
    templates = _spec(chart.to_json(), "LeaderWorkerSet")["leaderWorkerTemplate"]
    assert templates["leaderTemplate"]["spec"]["affinity"] == ZONE
    assert templates["workerTemplate"]["spec"]["affinity"] == ZONE


def test_batch_jobs_take_a_placement_and_it_names_the_job():
    def sync(placement: PodPlacement) -> tuple[str, dict]:
        chart = cdk8s.Chart(cdk8s.App(), "c")
        props = ModelSyncJobProps(
            name="m", namespace="ns", service_account="sa", bucket="b", prefix="p/", region="us-west-2",
            model_id="org/x", image="registry.example.com/sync:1", placement=placement,
        )  # fmt: skip
        job = ModelSyncJob(chart, "sync", props)
        return job.job_name, _spec(chart.to_json(), "Job")["template"]["spec"]

    plain_name, plain = sync(PodPlacement())
    assert not {"nodeSelector", "tolerations", "affinity", "priorityClassName"} & set(plain)
    placed_name, placed = sync(PodPlacement(tolerations=["t"], affinity=ZONE, priority_class=BATCH_PRIORITY_CLASS))
    assert placed["affinity"] == ZONE and placed["priorityClassName"] == BATCH_PRIORITY_CLASS
    assert placed["tolerations"] == [{"effect": "NoSchedule", "key": "t", "operator": "Exists"}]
    assert placed_name != plain_name


def test_the_bench_runs_at_batch_priority_by_default():
    def bench(**placement: PodPlacement) -> dict:
        chart = cdk8s.Chart(cdk8s.App(), "c")
        props = BenchJobProps(
            name="w", namespace="ns", base_url="http://w.ns.svc.cluster.local:8000", endpoint="/v1/completions",
            model="w", load=BenchLoad(concurrency=1, input_tokens=8, output_tokens=8, num_prompts=1),
            service_account="sa", bucket="b", region="us-west-2", model_prefix=None, results_prefix="r/",
            tokenizer="org/x", **placement,
        )  # fmt: skip
        BenchJob(chart, "bench", props)
        return _spec(chart.to_json(), "CronJob")["jobTemplate"]["spec"]["template"]["spec"]

    assert BenchJobProps.__dataclass_fields__["placement"].default_factory() is BATCH_PLACEMENT
    assert bench()["priorityClassName"] == BATCH_PRIORITY_CLASS
    spec = bench(placement=PodPlacement(node_selector={"p": "system"}, affinity=ZONE))
    assert spec["nodeSelector"] == {"p": "system"} and spec["affinity"] == ZONE and "priorityClassName" not in spec


def test_constructs_refuse_what_their_target_cannot_render():
    from inferstack.constructs.dynamo import DynamoComponentProps, DynamoGraph, DynamoGraphProps
    from inferstack.constructs.kserve import KServeService, KServeServiceProps

    kserve = KServeServiceProps(
        name="k", namespace="ns", mode="Knative", service_account="sa", requests={"cpu": "1"}, limits={},
        placement=PodPlacement(affinity=ZONE), startup_seconds=600, min_replicas=0,
    )  # fmt: skip
    with pytest.raises(PropError, match=r"KServeService 'k': placement.affinity .* — Knative admits it only"):
        KServeService(cdk8s.Chart(cdk8s.App(), "c"), "k", kserve)
    standard = dataclasses.replace(kserve, mode="Standard", min_replicas=1)
    chart = cdk8s.Chart(cdk8s.App(), "c")
    KServeService(chart, "k", standard)
    assert _spec(chart.to_json(), "InferenceService")["predictor"]["affinity"] == ZONE

    image = "nvcr.io/nvidia/ai-dynamo/dynamo-frontend:1.4.0"
    frontend = DynamoComponentProps(
        name="frontend", type="frontend", image=image, command=["python3"], requests={"cpu": "1"}, limits={},
        placement=PodPlacement(priority_class="inferstack-serving"),
    )  # fmt: skip
    graph = DynamoGraphProps(name="g", namespace="dynamo", components=[frontend])
    with pytest.raises(PropError, match=r"components\['frontend'\].placement.priority_class .* — it needs Grove"):
        DynamoGraph(cdk8s.Chart(cdk8s.App(), "c"), "g", graph)
