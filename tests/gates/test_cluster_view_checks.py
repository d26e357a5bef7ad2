"""Each check of inferstack/gates/cluster_view.py and each operator projection, on small objects: a compliant and a
non-compliant case."""

from __future__ import annotations

from typing import Any

from inferstack.gates import cluster_view as checks
from inferstack.gates.kubelet import mounted_entries, triton_scans_kubelet_entries
from inferstack.gates.projections import kserve_pods, merge_container, prometheus_pods, ray_pods


def _deployment(name: str, spec: dict[str, Any], kind: str = "Deployment", ns: str = "x") -> dict[str, Any]:
    return {
        "kind": kind,
        "metadata": {"name": name, "namespace": ns},
        "spec": {"template": {"metadata": {"labels": {"app": name}}, "spec": spec}},
    }


SYSTEM = {"inferstack.io/pool": "system"}


def test_a_controller_on_the_system_pool_passes():
    assert checks.controllers_off_system_pool([_deployment("c", {"nodeSelector": SYSTEM, "containers": []})]) == []


def test_a_controller_held_there_by_required_affinity_passes():
    term = {"matchExpressions": [{"key": "inferstack.io/pool", "operator": "In", "values": ["system"]}]}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
    assert checks.controllers_off_system_pool([_deployment("c", {"affinity": affinity, "containers": []})]) == []


def test_a_controller_without_the_selector_is_named():
    (finding,) = checks.controllers_off_system_pool([_deployment("grafana", {"nodeSelector": {"other": "x"}})])
    assert finding.startswith("Deployment/x/grafana") and "inferstack.io/pool=system" in finding


def test_a_prometheus_off_the_system_pool_is_named():
    prometheus = {"kind": "Prometheus", "metadata": {"name": "p", "namespace": "m"}, "spec": {}}
    assert checks.controllers_off_system_pool([prometheus])


GPU_POOL = {"gpu": ({"inferstack.io/pool": "gpu"}, frozenset({("nvidia.com/gpu", "NoSchedule")}))}


def test_a_daemon_tolerating_its_pools_taints_passes():
    spec = {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}
    assert checks.daemons_missing_tolerations([_deployment("d", spec, kind="DaemonSet")], GPU_POOL) == []


def test_a_daemon_selecting_other_pools_needs_no_toleration():
    spec = {"nodeSelector": {"inferstack.io/pool": "neuron"}}
    assert checks.daemons_missing_tolerations([_deployment("d", spec, kind="DaemonSet")], GPU_POOL) == []


def test_a_daemon_missing_a_toleration_is_named():
    (finding,) = checks.daemons_missing_tolerations([_deployment("d", {}, kind="DaemonSet")], GPU_POOL)
    assert "pool 'gpu'" in finding and "nvidia.com/gpu:NoSchedule" in finding


def test_pinned_and_moving_images():
    assert checks.image_pinned("quay.io/a/b:v1.2.3")
    assert checks.image_pinned("registry:5000/a/b@sha256:" + "0" * 64)
    assert not checks.image_pinned("registry:5000/a/b")
    assert not checks.image_pinned("ghcr.io/a/b:latest")
    assert not checks.image_pinned("ghcr.io/a/b:main")
    (finding,) = checks.unpinned_images([_deployment("d", {"containers": [{"name": "c", "image": "busybox"}]})])
    assert "containers/c" in finding


def _webhook(service: str) -> dict[str, Any]:
    hook = {"name": "h", "clientConfig": {"service": {"namespace": "x", "name": service}}}
    return {"kind": "ValidatingWebhookConfiguration", "metadata": {"name": "v"}, "webhooks": [hook]}


def test_a_webhook_with_its_service_passes():
    service = {"kind": "Service", "metadata": {"name": "svc", "namespace": "x"}}
    assert checks.missing_webhook_services([_webhook("svc"), service]) == []


def test_a_webhook_without_its_service_is_named():
    (finding,) = checks.missing_webhook_services([_webhook("gone")])
    assert "x/gone does not exist" in finding


def _rule(expr: str) -> dict[str, Any]:
    groups = [{"name": "g", "rules": [{"alert": "Down", "expr": expr}]}]
    return {"kind": "PrometheusRule", "metadata": {"name": "r", "namespace": "m"}, "spec": {"groups": groups}}


def _monitor_and_service(pod_selector: dict[str, str]) -> list[dict[str, Any]]:
    service = {
        "kind": "Service",
        "metadata": {
            "name": "kcm",
            "namespace": "kube-system",
            "labels": {"app": "kcm", "jobLabel": "kube-controller-manager"},
        },
        "spec": {"selector": pod_selector},
    }
    monitor = {
        "kind": "ServiceMonitor",
        "metadata": {"name": "kcm", "namespace": "m"},
        "spec": {
            "jobLabel": "jobLabel",
            "selector": {"matchLabels": {"app": "kcm"}},
            "namespaceSelector": {"matchNames": ["kube-system"]},
        },
    }
    return [service, monitor]


def test_an_alert_on_a_job_scraping_pods_that_run_resolves():
    objects = [
        _rule('absent(up{job="kube-controller-manager"} == 1)'),
        *_monitor_and_service({"k8s-app": "kube-proxy"}),
    ]
    assert checks.unresolvable_alert_jobs(objects) == []


def test_an_alert_on_a_control_plane_component_eks_hides_is_named():
    objects = [
        _rule('absent(up{job="kube-controller-manager"} == 1)'),
        *_monitor_and_service({"component": "kube-controller-manager"}),
    ]
    (finding,) = checks.unresolvable_alert_jobs(objects)
    assert "no such pods run" in finding


def test_an_alert_on_a_job_nobody_scrapes_is_named():
    (finding,) = checks.unresolvable_alert_jobs([_rule('up{job="nothing"} == 0')])
    assert "no scrape job" in finding


def test_the_api_servers_job_is_the_built_in_kubernetes_service():
    monitor = {
        "kind": "ServiceMonitor",
        "metadata": {"name": "apiserver", "namespace": "m"},
        "spec": {
            "jobLabel": "component",
            "selector": {"matchLabels": {"component": "apiserver", "provider": "kubernetes"}},
            "namespaceSelector": {"matchNames": ["default"]},
        },
    }
    assert checks.unresolvable_alert_jobs([_rule('up{job="apiserver"} == 0'), monitor]) == []


def test_requests_within_and_over_limits():
    ok = {"name": "c", "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}}}
    over = {"name": "c", "resources": {"requests": {"cpu": "7"}, "limits": {"cpu": "1"}}}
    assert checks.requests_over_limits([_deployment("d", {"containers": [ok]})]) == []
    (finding,) = checks.requests_over_limits([_deployment("d", {"containers": [over]})])
    assert "requests.cpu 7 > limits.cpu 1" in finding


# -- projections -------------------------------------------------------------------------------------------------
RUNTIME = {
    "kind": "ClusterServingRuntime",
    "metadata": {"name": "kserve-huggingfaceserver"},
    "spec": {
        "supportedModelFormats": [{"name": "huggingface", "autoSelect": True}],
        "containers": [
            {
                "name": "kserve-container",
                "image": "kserve/huggingfaceserver:v0.20.0",
                "args": ["--model_name={{.Name}}"],
                "env": [{"name": "A", "value": "runtime"}],
                "resources": {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}},
            }
        ],
    },
}


def _isvc(resources: dict[str, Any], storage_uri: str = "pvc://claim", mode: str = "Knative") -> dict[str, Any]:
    model = {
        "modelFormat": {"name": "huggingface"},
        "args": ["--x"],
        "env": [{"name": "A", "value": "ours"}],
        "resources": resources,
        "storageUri": storage_uri,
    }
    return {
        "kind": "InferenceService",
        "metadata": {"name": "m", "namespace": "ns", "annotations": {"serving.kserve.io/deploymentMode": mode}},
        "spec": {"predictor": {"model": model, "nodeSelector": {"pool": "gpu"}}},
    }


def test_kserve_merges_resources_key_by_key():
    merged = merge_container(
        RUNTIME["spec"]["containers"][0], {"resources": {"requests": {"cpu": "7"}, "limits": {"memory": "50Gi"}}}
    )
    assert merged["resources"] == {"requests": {"cpu": "7", "memory": "2Gi"}, "limits": {"cpu": "1", "memory": "50Gi"}}


def test_the_kserve_predictor_pod_carries_the_runtime_merge():
    (pod,) = kserve_pods([RUNTIME, _isvc({"requests": {"cpu": "7"}})])
    main, proxy = pod["spec"]["containers"]
    assert main["args"] == ["--model_name={{.Name}}", "--x"]
    assert main["env"] == [{"name": "A", "value": "ours"}]
    assert main["image"] == "kserve/huggingfaceserver:v0.20.0"
    assert {"name": "kserve-pvc-source", "mountPath": "/mnt/models", "readOnly": True} in main["volumeMounts"]
    assert proxy["name"] == "queue-proxy" and pod["spec"]["nodeSelector"] == {"pool": "gpu"}
    assert checks.requests_over_limits([pod])


def test_a_standard_predictor_gets_no_queue_proxy_and_an_s3_uri_the_storage_initializer():
    (pod,) = kserve_pods([RUNTIME, _isvc({}, storage_uri="s3://b/m", mode="Standard")])
    assert [c["name"] for c in pod["spec"]["containers"]] == ["kserve-container"]
    assert [c["name"] for c in pod["spec"]["initContainers"]] == ["storage-initializer"]


def test_an_isvc_without_its_runtime_is_marked():
    (pod,) = kserve_pods([_isvc({})])
    assert "inferstack.io/missing-runtime" in pod["metadata"]["annotations"]


def _ray(auth: bool) -> dict[str, Any]:
    container = {
        "name": "ray-head",
        "image": "rayproject/ray-llm:2.58.0",
        "ports": [{"name": "serve", "containerPort": 8000}],
    }
    cluster = {
        "enableInTreeAutoscaling": True,
        "headGroupSpec": {"template": {"spec": {"containers": [container]}}},
        "workerGroupSpecs": [
            {"groupName": "gpu", "template": {"spec": {"containers": [{**container, "name": "ray-worker"}]}}}
        ],
        **({"authOptions": {"mode": "token"}} if auth else {}),
    }
    return {"kind": "RayService", "metadata": {"name": "r", "namespace": "ns"}, "spec": {"rayClusterConfig": cluster}}


def test_kuberay_adds_its_labels_metrics_port_sidecar_and_init_container():
    head, worker = ray_pods([_ray(auth=False)])
    assert (
        head["metadata"]["labels"]["ray.io/node-type"] == "head"
        and head["metadata"]["labels"]["ray.io/group"] == "headgroup"
    )
    assert {"name": "metrics", "containerPort": 8080} in head["spec"]["containers"][0]["ports"]
    assert [c["name"] for c in head["spec"]["containers"]] == ["ray-head", "autoscaler"]
    assert worker["spec"]["initContainers"][0]["name"] == "wait-gcs-ready"
    assert not any(e["name"] == "RAY_AUTH_MODE" for e in head["spec"]["containers"][0]["env"])


def test_kuberay_token_auth_reaches_every_container():
    head, worker = ray_pods([_ray(auth=True)])
    for container in [*head["spec"]["containers"], *worker["spec"]["initContainers"]]:
        assert {"name": "RAY_AUTH_MODE", "value": "token"} in container["env"], container["name"]


def test_prometheus_pods_carry_the_operators_labels():
    (pod,) = prometheus_pods(
        [{"kind": "Prometheus", "metadata": {"name": "p", "namespace": "m"}, "spec": {"nodeSelector": SYSTEM}}]
    )
    assert pod["metadata"]["labels"]["operator.prometheus.io/name"] == "p"
    assert pod["spec"]["nodeSelector"] == SYSTEM


# -- kubelet -----------------------------------------------------------------------------------------------------
def _triton(mode: str) -> dict[str, Any]:
    container = {
        "name": "triton",
        "command": ["tritonserver"],
        "args": ["--model-repository=/repo", f"--model-control-mode={mode}", "--load-model=m"],
        "volumeMounts": [{"name": "repo", "mountPath": "/repo"}],
    }
    volume = {"name": "repo", "configMap": {"name": "r", "items": [{"key": "c", "path": "m/config.pbtxt"}]}}
    return _deployment("t", {"containers": [container], "volumes": [volume]})


def test_the_kubelet_writes_data_entries_beside_configmap_items():
    volume = {"configMap": {"name": "r", "items": [{"key": "c", "path": "m/config.pbtxt"}]}}
    assert mounted_entries(volume)[0] == "..data" and "m" in mounted_entries(volume)
    assert mounted_entries({"emptyDir": {}}) == []


def test_triton_loading_explicitly_from_a_configmap_passes():
    assert list(triton_scans_kubelet_entries([_triton("explicit")])) == []


def test_triton_scanning_a_configmap_repository_is_named():
    """Defect: with --model-control-mode=none Triton took ..data for a model and stopped ("failed to load all
    models")."""
    (finding,) = triton_scans_kubelet_entries([_triton("none")])
    assert "..data" in finding


# -- CRD ordering --------------------------------------------------------------------------------------------------
CRD = {
    "kind": "CustomResourceDefinition",
    "apiVersion": "apiextensions.k8s.io/v1",
    "metadata": {"name": "rayservices.ray.io"},
    "spec": {"group": "ray.io", "names": {"kind": "RayService"}, "versions": [{"name": "v1"}]},
}
RAY_SERVICE = {"kind": "RayService", "apiVersion": "ray.io/v1", "metadata": {"name": "r", "namespace": "x"}}


def test_a_custom_resource_after_its_crds_release_passes():
    steps = [
        checks.DeployStep(name="kuberay", objects=[CRD], after=frozenset()),
        checks.DeployStep(name="workload", objects=[RAY_SERVICE], after=frozenset({"kuberay"})),
    ]
    assert checks.custom_resources_without_a_crd_before(steps) == []


def test_a_custom_resource_not_depending_on_its_crds_release_is_named():
    """CloudFormation runs the two concurrently without the dependency, whatever their order in the template."""
    steps = [
        checks.DeployStep(name="kuberay", objects=[CRD], after=frozenset()),
        checks.DeployStep(name="workload", objects=[RAY_SERVICE], after=frozenset()),
    ]
    (finding,) = checks.custom_resources_without_a_crd_before(steps)
    assert finding.startswith("workload: RayService/x/r")
    assert checks.custom_resources_without_a_crd_before(steps, external_groups=["ray.io"]) == []


def test_crds_an_operator_applies_at_run_time_count():
    dgd = {"kind": "DynamoGraphDeployment", "apiVersion": "nvidia.com/v1beta1", "metadata": {"name": "d"}}
    operator = checks.DeployStep(
        name="dynamo", objects=[], after=frozenset(), applies_crds=checks.RUNTIME_CRDS["dynamo-platform"]
    )
    workload = checks.DeployStep(name="w", objects=[dgd], after=frozenset({"dynamo"}))
    assert checks.custom_resources_without_a_crd_before([operator, workload]) == []


def _policy(name: str, ns: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"podSelector": {}, **spec},
    }


DENY = _policy("deny", "llm", {"policyTypes": ["Ingress", "Egress"]})
DNS = _policy(
    "dns",
    "llm",
    {
        "policyTypes": ["Egress"],
        "egress": [
            {
                "to": [
                    {
                        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                        "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                    }
                ],
                "ports": [{"port": 53, "protocol": "UDP"}],
            }
        ],
    },
)


def _chart_pod(ns: str) -> list[dict[str, Any]]:
    pod = _deployment("db", {"containers": [{"name": "db", "ports": [{"name": "pg", "containerPort": 5432}]}]}, ns=ns)
    service = {
        "kind": "Service",
        "metadata": {"name": "db", "namespace": ns},
        "spec": {"selector": {"app": "db"}, "ports": [{"port": 5432, "targetPort": "pg"}]},
    }
    return [pod, service]


def test_a_chart_outside_our_namespaces_needs_no_path():
    assert checks.chart_pods_without_paths(_chart_pod("elsewhere"), [DENY, DNS], ["llm"]) == []


def test_a_chart_pod_in_our_namespace_cut_off_by_default_deny_is_named():
    problems = checks.chart_pods_without_paths(_chart_pod("llm"), [DENY, DNS], ["llm"])
    assert problems == [
        "Deployment/llm/db: its ServiceAccount token is mounted, but the Kubernetes API is denied",
        "Deployment/llm/db: Service db port 5432 is denied",
    ]
    assert "no DNS" in checks.chart_pods_without_paths(_chart_pod("llm"), [DENY], ["llm"])[0]


def test_wait_gcs_ready_carries_the_ray_containers_env_and_mounts():
    """KubeRay v1.7.0 common/pod.go:606-642: the init container copies the Ray container's Env and VolumeMounts."""
    service = _ray(auth=False)
    worker_spec = service["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]["template"]["spec"]
    worker_spec["containers"][0]["env"] = [{"name": "HOME", "value": "/home/ray-cache"}]
    worker_spec["containers"][0]["volumeMounts"] = [{"name": "home", "mountPath": "/home/ray-cache"}]
    _, worker = ray_pods([service])
    (wait,) = worker["spec"]["initContainers"]
    assert wait["env"] == [{"name": "HOME", "value": "/home/ray-cache"}]
    assert wait["volumeMounts"] == [{"name": "home", "mountPath": "/home/ray-cache"}]


def test_the_autoscaler_gets_only_its_options_env_and_mounts():
    service = _ray(auth=False)
    options = {"env": [{"name": "HOME", "value": "/h"}], "volumeMounts": [{"name": "home", "mountPath": "/h"}]}
    service["spec"]["rayClusterConfig"]["autoscalerOptions"] = options
    head, _ = ray_pods([service])
    autoscaler = head["spec"]["containers"][1]
    assert {"name": "HOME", "value": "/h"} in autoscaler["env"]
    assert autoscaler["volumeMounts"] == [
        {"name": "home", "mountPath": "/h"},
        {"name": "ray-logs", "mountPath": "/tmp/ray"},
    ]


RAY_DLC = "public.ecr.aws/deep-learning-containers/ray:serve-llm-cuda-v1.0"  # uid 0, HOME /root


def _container(**fields: Any) -> dict[str, Any]:
    return _deployment(
        "ray", {"securityContext": {"runAsUser": 1000}, "containers": [{"name": "c", "image": RAY_DLC, **fields}]}
    )


def test_a_non_root_container_with_a_volume_at_its_home_passes():
    home = {"env": [{"name": "HOME", "value": "/home/ray"}], "volumeMounts": [{"name": "h", "mountPath": "/home/ray"}]}
    assert checks.unwritable_homes([_container(**home)]) == []
    assert checks.unwritable_homes([_container(volumeMounts=[{"name": "h", "mountPath": "/root"}])]) == []


def test_a_non_root_container_in_the_images_root_home_is_named():
    (problem,) = checks.unwritable_homes([_container()])
    assert "runs as uid 1000 with HOME /root" in problem
    (problem,) = checks.unwritable_homes([_container(env=[{"name": "HOME", "value": "/home/ray"}])])
    assert "HOME /home/ray" in problem
    read_only = [{"name": "h", "mountPath": "/root", "readOnly": True}]
    assert checks.unwritable_homes([_container(volumeMounts=read_only)])
