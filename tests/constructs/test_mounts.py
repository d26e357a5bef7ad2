"""A volume mount carries its volume: a pod's volumes are what its containers mount, so no mount can name a volume
the pod lacks (the API server's ``volumeMounts[i].name: Not found``), and a container built elsewhere that mounts
one is refused at construction."""

from __future__ import annotations

import dataclasses

import cdk8s
import pytest
from cdk8s_plus_36 import k8s

from inferstack.constructs.batch import script_job
from inferstack.constructs.pod import PodPlacement, ServingWorkload
from inferstack.constructs.pod.mounts import Mount, check_mounted, empty_dir, pod_volumes, volume_mounts
from inferstack.constructs.validation import PropError
from tests.constructs.test_serving_pod import TOY

MODEL = k8s.Volume(
    name="model", persistent_volume_claim=k8s.PersistentVolumeClaimVolumeSource(claim_name="weights", read_only=True)
)


def _pod_specs(objects: list[dict]) -> list[dict]:
    """Every pod spec in ``objects``: Deployments, RayService head and workers, Dynamo components."""
    specs = []
    for obj in objects:
        spec = obj.get("spec", {})
        if obj["kind"] == "Deployment":
            specs.append(spec["template"]["spec"])
        elif obj["kind"] == "RayService":
            cluster = spec["rayClusterConfig"]
            specs += [cluster["headGroupSpec"]["template"]["spec"]]
            specs += [group["template"]["spec"] for group in cluster["workerGroupSpecs"]]
        elif obj["kind"] == "DynamoGraphDeployment":
            specs += [component["podTemplate"]["spec"] for component in spec["components"]]
    return specs


def _ray(init: k8s.Container, mount: Mount) -> list[dict]:
    from inferstack.constructs.rayservice import RayServiceProps, RayServiceServer, RayWorkerGroupProps

    worker = RayWorkerGroupProps(
        name="gpu", requests={"cpu": "4"}, limits={"memory": "16Gi"}, placement=PodPlacement(), max_replicas=1
    )
    props = RayServiceProps(
        name="r", namespace="ns", image="rayproject/ray-llm:2.52.0-py311-cu128", ray_version="2.52.0",
        service_account="r", serve_config={"applications": []}, head_requests={"cpu": "1"}, head_limits={},
        head_placement=PodPlacement(), workers=[worker], init_containers=[init], init_mounts=[mount],
    )  # fmt: skip
    chart = cdk8s.Chart(cdk8s.App(), "c")
    RayServiceServer(chart, "r", props)
    return _pod_specs(chart.to_json())


def _dynamo(init: k8s.Container, mount: Mount) -> list[dict]:
    from inferstack.constructs.dynamo import DynamoComponentProps, DynamoGraph, DynamoGraphProps

    frontend = DynamoComponentProps(
        name="frontend", type="frontend", image="nvcr.io/nvidia/ai-dynamo/dynamo-frontend:1.4.0",
        command=["python3"], requests={"cpu": "1"}, limits={}, placement=PodPlacement(),
        init_containers=[init], init_mounts=[mount],
    )  # fmt: skip
    chart = cdk8s.Chart(cdk8s.App(), "c")
    DynamoGraph(chart, "g", DynamoGraphProps(name="g", namespace="dynamo", components=[frontend]))
    return _pod_specs(chart.to_json())


def _vllm(init: k8s.Container, mount: Mount) -> list[dict]:
    from tests.constructs.test_validation import GOOD, build

    return _pod_specs(build(dataclasses.replace(GOOD, init_containers=[init], init_mounts=[mount])))


INIT_MOUNT_PODS = {"ray": _ray, "dynamo": _dynamo, "vllm": _vllm}


def _pod(props) -> dict:
    chart = cdk8s.Chart(cdk8s.App(), "t")
    ServingWorkload(chart, "w", props)
    deployment = next(o for o in chart.to_json() if o["kind"] == "Deployment")
    return deployment["spec"]["template"]["spec"]


def test_a_mount_renders_its_volumes_name_path_and_mode():
    (mount,) = volume_mounts([Mount(path="/models", volume=MODEL, read_only=True, sub_path="qwen")])
    assert (mount.name, mount.mount_path, mount.read_only, mount.sub_path) == ("model", "/models", True, "qwen")
    (writable,) = volume_mounts([Mount(path="/cache", volume=empty_dir("cache"))])
    assert writable.read_only is None  # not rendered: Kubernetes' default, read-write


def test_the_pods_volumes_are_exactly_what_its_containers_mount():
    spec = _pod(dataclasses.replace(TOY, mounts=[Mount(path="/models", volume=MODEL, read_only=True)]))
    volumes = [v["name"] for v in spec["volumes"]]
    mounted = [m["name"] for c in spec["containers"] for m in c["volumeMounts"]]
    assert volumes == ["shm", "home", "tmp", "model"] == mounted
    assert spec["volumes"][3]["persistentVolumeClaim"] == {"claimName": "weights", "readOnly": True}
    assert spec["containers"][0]["volumeMounts"][3] == {"name": "model", "mountPath": "/models", "readOnly": True}


def test_one_volume_mounted_twice_is_one_pod_volume():
    volumes = pod_volumes(
        "test", [Mount(path="/a", volume=MODEL)], [Mount(path="/b", volume=MODEL, read_only=True)], []
    )
    assert [v.name for v in volumes] == ["model"]


def test_two_different_volumes_under_one_name_are_refused():
    other = k8s.Volume(name="model", empty_dir=k8s.EmptyDirVolumeSource())
    with pytest.raises(PropError, match="two different volumes are named 'model'"):
        pod_volumes("test", [Mount(path="/a", volume=MODEL)], [Mount(path="/b", volume=other)])


def test_an_init_container_mounting_a_volume_the_pod_lacks_is_refused():
    init = k8s.Container(
        name="fetch", image="example.com/fetch:1", volume_mounts=[k8s.VolumeMount(name="model", mount_path="/m")]
    )
    with pytest.raises(PropError, match=r"container 'fetch' mounts volume 'model' at /m, which the pod does not have"):
        _pod(dataclasses.replace(TOY, init_containers=[init]))
    spec = _pod(dataclasses.replace(TOY, init_containers=[init], mounts=[Mount(path="/models", volume=MODEL)]))
    assert spec["initContainers"][0]["volumeMounts"] == [{"name": "model", "mountPath": "/m"}]


def test_a_volume_only_the_init_containers_mount_is_a_pod_volume_the_engine_does_not_mount():
    setup = Mount(path="/setup", volume=k8s.Volume(name="setup", config_map=k8s.ConfigMapVolumeSource(name="steps")))
    init = k8s.Container(name="prepare", image="example.com/prepare:1", volume_mounts=volume_mounts([setup]))
    spec = _pod(dataclasses.replace(TOY, init_containers=[init], init_mounts=[setup]))
    assert [v["name"] for v in spec["volumes"]] == ["shm", "home", "tmp", "setup"]
    assert spec["volumes"][3]["configMap"] == {"name": "steps"}
    assert "setup" not in {m["name"] for m in spec["containers"][0]["volumeMounts"]}
    assert spec["initContainers"][0]["volumeMounts"] == [{"name": "setup", "mountPath": "/setup"}]


@pytest.mark.parametrize("kind", ["ray", "dynamo", "vllm"])
def test_every_serving_construct_passes_its_init_mounts_to_the_pod(kind):
    setup = Mount(path="/setup", volume=empty_dir("setup"))
    init = k8s.Container(name="prepare", image="example.com/prepare:1", volume_mounts=volume_mounts([setup]))
    pods = INIT_MOUNT_PODS[kind](init, setup)
    assert pods and all("setup" in {v["name"] for v in pod["volumes"]} for pod in pods)


def test_an_init_container_may_mount_the_built_in_volumes():
    init = k8s.Container(
        name="warm", image="example.com/warm:1", volume_mounts=[k8s.VolumeMount(name="tmp", mount_path="/tmp")]
    )
    assert _pod(dataclasses.replace(TOY, init_containers=[init]))["initContainers"][0]["name"] == "warm"


def test_a_job_container_mounting_an_unknown_volume_is_refused():
    container = k8s.Container(
        name="sync", image="example.com/sync:1", volume_mounts=[k8s.VolumeMount(name="scratch", mount_path="/s")]
    )
    with pytest.raises(PropError, match=r"^Job 'sync': container 'sync' mounts volume 'scratch'.*: script, work$"):
        script_job(
            cdk8s.Chart(cdk8s.App(), "t"),
            name="sync",
            namespace="team",
            component="model-sync",
            script_name="model_sync.py",
            service_account="sync",
            container=container,
            volumes=[],
            backoff_limit=1,
            scratch_gib=1,
        )


def test_check_mounted_lists_the_pods_volumes():
    container = k8s.Container(name="c", image="x:1", volume_mounts=[k8s.VolumeMount(name="b", mount_path="/b")])
    with pytest.raises(PropError, match=r"pod volumes: a$"):
        check_mounted("pod", [container], [empty_dir("a")])
