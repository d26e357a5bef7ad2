"""The shared serving pod: an engine other than vLLM renders through it with only its own parts (image, command,
port, health path, queue metric) and gets every production default and gate for free."""

from __future__ import annotations

from dataclasses import fields

import cdk8s
import pytest

from inferstack.constructs.pod import (
    Autoscaling,
    EnginePlacement,
    EngineSpec,
    PodPlacement,
    QueueMetric,
    ServingPodProps,
    ServingWorkload,
)
from inferstack.constructs.pod import validate as pod_validate
from inferstack.constructs.validation import PropError
from inferstack.gates.pod_security import Level, check_manifests
from inferstack.gates.references import External, check_references

TOY = ServingPodProps(
    name="toy",
    namespace="team",
    component="toy-engine",
    image="example.com/toy-engine:1.2.3",
    command=["toy", "serve"],
    args=["--model", "/models/toy"],
    container_name="engine",
    port=30000,
    home="/home/toy",
    user="toy",
    health_path="/healthz",
    queue_metric=QueueMetric(prometheus="toy:queue_size", pods="toy_queue_size"),
    service_account="toy",
    requests={"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"},
    limits={"memory": "16Gi", "nvidia.com/gpu": "1"},
    placement=PodPlacement(
        node_selector={"inferstack.io/pool": "gpu"}, tolerations=["nvidia.com/gpu", ("dedicated", "NoExecute")]
    ),
    startup_seconds=300,
    autoscaling=Autoscaling(min_replicas=1, max_replicas=3),
)


@pytest.fixture(scope="module")
def objects() -> list[dict]:
    chart = cdk8s.Chart(cdk8s.App(), "toy")
    ServingWorkload(chart, "toy", TOY)
    return chart.to_json()


def test_the_engine_keeps_only_its_own_parts(objects):
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    spec = deployment["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    assert container["command"] == ["toy", "serve"] and container["ports"][0] == {
        "name": "http",
        "containerPort": 30000,
    }
    assert container["startupProbe"]["httpGet"]["path"] == "/healthz"
    assert container["startupProbe"]["failureThreshold"] == 30
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env == {"HOME": "/home/toy", "USER": "toy", "LOGNAME": "toy"}
    assert {"effect": "NoExecute", "key": "dedicated", "operator": "Exists"} in spec["tolerations"]
    assert deployment["metadata"]["labels"]["app.kubernetes.io/component"] == "toy-engine"


def test_autoscaling_uses_the_engines_queue_metric(objects):
    scaled = next(o for o in objects if o["kind"] == "ScaledObject")
    assert scaled["spec"]["triggers"][0]["metadata"]["query"].startswith('sum(toy:queue_size{namespace="team"')


def test_production_defaults_and_gates_come_for_free(objects):
    kinds = sorted(o["kind"] for o in objects)
    assert kinds == ["Deployment", "PodDisruptionBudget", "PodMonitor", "ScaledObject", "Service"]
    external = External(namespaces=External().namespaces | {"team"}, service_accounts=frozenset({("team", "toy")}))
    assert [str(f) for f in check_references(objects, external)] == []
    assert [str(f) for f in check_manifests(objects, {"team": Level.RESTRICTED})] == []


def test_autoscaling_without_a_queue_metric_is_refused():
    import dataclasses

    with pytest.raises(PropError, match="queue_metric"):
        pod_validate("Toy", dataclasses.replace(TOY, queue_metric=None))
    with pytest.raises(PropError, match="ServingWorkload 'toy': image"):
        ServingWorkload(cdk8s.Chart(cdk8s.App(), "c"), "t", dataclasses.replace(TOY, image="toy:latest"))


def test_a_serving_group_refuses_names_whose_derived_names_exceed_63():

    from inferstack.constructs.pod.group import ServingGroup, ServingGroupProps

    pod = ServingPodProps(
        name="n" * 50,
        namespace="inference",
        component="echo",
        image="registry.example.com/echo:1.0.0",
        command=["echo"],
        args=[],
        container_name="echo",
        port=8000,
        home="/home/echo",
        user="echo",
        service_account="echo",
        requests={"nvidia.com/gpu": "1"},
        limits={"nvidia.com/gpu": "1"},
        placement=PodPlacement(),
        startup_seconds=600,
    )
    props = ServingGroupProps(pod=pod, size=2, worker_command=["echo"], worker_args=[])
    with pytest.raises(PropError, match="use a name of at most 44 characters"):
        ServingGroup(cdk8s.Chart(cdk8s.App(), "c"), "g", props)


def test_an_engine_spec_and_placement_are_the_serving_pods_props_without_copies():
    spec_fields = {f.name for f in fields(EngineSpec)}
    placement_fields = {f.name for f in fields(EnginePlacement)}
    assert not spec_fields & placement_fields  # ``of`` cannot let one side overwrite the other
    assert spec_fields | placement_fields <= {f.name for f in fields(ServingPodProps)}
    spec = EngineSpec(**{f: getattr(TOY, f) for f in spec_fields})
    placement = EnginePlacement(**{f: getattr(TOY, f) for f in placement_fields})
    combined = ServingPodProps.of(spec, placement)
    assert all(getattr(combined, f) == getattr(TOY, f) for f in spec_fields | placement_fields)
