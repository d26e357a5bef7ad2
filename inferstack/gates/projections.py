"""The pods operators make from the custom resources we (and the charts) emit, modelled at the pinned versions.

Each rule cites the operator's source (repository, tag, ``file:line``). The projections return bare ``Pod``
manifests, so every pod check (requests ≤ limits, Pod Security, references, network paths) runs over them as over
our own pods.

* **KServe v0.20.0** (kserve/kserve ``1fb78105``): the InferenceService's ``predictor.model`` container is merged
  over its ServingRuntime's container by a strategic merge patch (``pkg/controller/v1beta1/inferenceservice/utils/
  utils.go:253-263`` → ``pkg/utils/container_merge.go:32-63``): ``resources.requests``/``limits`` key by key, ``env``
  by name (ours wins), ``volumeMounts`` by mountPath, ``ports`` by containerPort, ``command`` replaced, ``args`` the
  runtime's then ours (``utils.go:260``). Pod fields merge the same way (``utils.go:267-297``). A ``pvc://`` storage
  URI mounts the claim at ``/mnt/models`` (volume ``kserve-pvc-source``) and injects no init container
  (``pkg/webhook/admission/pod/storage_initializer_injector.go:528-540``); any other URI injects
  ``storage-initializer`` with the ``inferenceservice-config`` resources (``pkg/utils/storage.go:311-334``;
  ``charts/kserve-resources/files/common/configmap-patch.yaml:101-114``: 100m/1 CPU, 100Mi/1Gi).
* **Knative Serving v0.48.1** (KServe's go.mod): a revision's pod gets ``queue-proxy`` with a 25m CPU request and
  nothing else (``pkg/deployment/config.go:90,118``), ports 8012 (traffic from the activator / gateway), 9090,
  9091, 8112 (``pkg/reconciler/revision/resources/queue.go:55-73,249-258``); the user container listens on 8080
  (``pkg/apis/serving/v1/revision_helpers.go:30``).
* **KubeRay v1.7.0** (ray-project/kuberay ``59d663ae``, ``ray-operator/controllers/ray/common/pod.go``): labels
  ``ray.io/cluster``, ``ray.io/node-type``, ``ray.io/group`` (``headgroup``), ``ray.io/is-ray-node`` (:1167-1191);
  the ``metrics`` port 8080 when missing (:289-296, :689-696); ``RAY_ADDRESS`` and ``RAY_*`` env (:1207-1343);
  workers' ``wait-gcs-ready`` init container at 200m/256Mi, with the Ray container's env and volumeMounts as
  written (:602-658); the in-tree autoscaler sidecar at 500m/512Mi unless ``autoscalerOptions.resources``, with its
  own env plus ``autoscalerOptions`` ``env`` / ``volumeMounts`` / ``securityContext`` and ``/tmp/ray`` shared with
  the head (:868-869, :935-1034); token auth (``spec.authOptions.mode: token``,
  Ray ≥ 2.52; ``utils/validation.go:284-313``) adds ``RAY_AUTH_MODE=token`` and ``RAY_AUTH_TOKEN`` from the
  operator's Secret ``<cluster>`` key ``auth_token`` to the Ray, autoscaler and init containers (:344-426,
  ``raycluster_controller.go:422-486``).
* **prometheus-operator v0.93.1** (kube-prometheus-stack 88.5.3): a ``Prometheus`` becomes the StatefulSet
  ``prometheus-<name>`` whose pods carry ``app.kubernetes.io/name: prometheus``, ``operator.prometheus.io/name:
  <name>``, ``prometheus: <name>`` and ``spec.podMetadata.labels``, on ``spec.nodeSelector``
  (``pkg/prometheus/server/statefulset.go``; line numbers not read here).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from inferstack.constructs.custom_resource import deep_merge
from inferstack.gates.dynamo import dynamo_pods
from inferstack.gates.lws import lws_pods
from inferstack.gates.nim import nim_pods
from inferstack.gates.pods import projected_pod

Objects = Sequence[Mapping[str, Any]]

KSERVE_CONTAINER = "kserve-container"
KSERVE_MODEL_MOUNT = "/mnt/models"
STORAGE_INITIALIZER_RESOURCES = {
    "requests": {"cpu": "100m", "memory": "100Mi"},
    "limits": {"cpu": "1", "memory": "1Gi"},
}
QUEUE_PROXY = {
    "name": "queue-proxy",
    "image": "gcr.io/knative-releases/knative.dev/serving/cmd/queue@sha256:knative-v0.48.1",
    "resources": {"requests": {"cpu": "25m"}},
    "ports": [{"containerPort": p} for p in (8012, 9090, 9091, 8112)],
    "securityContext": {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    },
}
RAY_METRICS_PORT = 8080
RAY_AUTOSCALER_RESOURCES = {
    "requests": {"cpu": "500m", "memory": "512Mi"},
    "limits": {"cpu": "500m", "memory": "512Mi"},
}
#: The autoscaler sidecar's own env, command and the ``ray-logs`` emptyDir it shares with the head
#: (``common/pod.go:935-1000``, ``:868-869``; ``RayLogVolumeName`` / ``RayLogVolumeMountPath`` :30-31).
AUTOSCALER_START = (
    "ray kuberay-autoscaler --cluster-name $(RAY_CLUSTER_NAME) --cluster-namespace $(RAY_CLUSTER_NAMESPACE)"
)
AUTOSCALER_ENV = [
    {"name": "RAY_CLUSTER_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['ray.io/cluster']"}}},
    {"name": "RAY_CLUSTER_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
    {"name": "RAY_HEAD_POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    {"name": "KUBERAY_CRD_VER", "value": "v1"},
    {"name": "KUBERAY_GEN_AUTOSCALER_START_CMD", "value": AUTOSCALER_START},
]
RAY_LOGS_MOUNT = {"name": "ray-logs", "mountPath": "/tmp/ray"}  # noqa: S108 - KubeRay's emptyDir
RAY_WAIT_GCS_RESOURCES = {"requests": {"cpu": "200m", "memory": "256Mi"}, "limits": {"cpu": "200m", "memory": "256Mi"}}


def _merge_list(base: list[Any], patch: list[Any], key: str) -> list[Any]:
    """A strategic merge of two lists by ``key``: a patch item merges into the base item with its key (its fields
    over the base's); an ``env`` item setting ``valueFrom`` drops the base's ``value`` and the reverse, as KServe
    resolves them (``container_merge.go:56,69-88``)."""
    merged = [copy.deepcopy(item) for item in base]
    for item in patch:
        found = next((m for m in merged if isinstance(m, dict) and m.get(key) == item.get(key)), None)
        if found is None:
            merged.append(copy.deepcopy(item))
            continue
        for field, other in (("valueFrom", "value"), ("value", "valueFrom")):
            if field in item:
                found.pop(other, None)
        found.update(copy.deepcopy(item))
    return merged


#: Strategic-merge keys of the core/v1 Container lists (k8s.io/api core/v1 ``patchMergeKey`` tags).
CONTAINER_MERGE_KEYS = {
    "env": "name",
    "volumeMounts": "mountPath",
    "ports": "containerPort",
    "volumeDevices": "devicePath",
}


def merge_container(runtime: Mapping[str, Any], ours: Mapping[str, Any]) -> dict[str, Any]:
    """KServe's ``MergeRuntimeContainers``: ``ours`` strategic-merge-patched over ``runtime``; args concatenated."""
    merged = copy.deepcopy(dict(runtime))
    for field, value in ours.items():
        if field in CONTAINER_MERGE_KEYS:
            merged[field] = _merge_list(list(merged.get(field) or []), list(value or []), CONTAINER_MERGE_KEYS[field])
        elif field == "resources":
            resources = copy.deepcopy(dict(merged.get("resources") or {}))
            for part in ("requests", "limits"):
                if value.get(part):
                    resources[part] = {**(resources.get(part) or {}), **value[part]}
            merged["resources"] = resources
        elif field == "args":
            merged["args"] = [*(runtime.get("args") or []), *value]
        elif isinstance(value, Mapping) and isinstance(merged.get(field), Mapping):
            merged[field] = deep_merge(merged[field], value)
        else:
            merged[field] = copy.deepcopy(value)
    merged["name"] = ours.get("name") or runtime.get("name") or KSERVE_CONTAINER
    return merged


_PREDICTOR_NON_POD = frozenset(
    {
        "model", "minReplicas", "maxReplicas", "scaleMetric", "scaleMetricType", "scaleTarget", "autoScaling",
        "containerConcurrency", "timeout", "canaryTrafficPercent", "logger", "batcher", "labels", "annotations",
        "deploymentStrategy", "workerSpec", "storageUris",
    }
)  # fmt: skip


def _runtime(objects: Objects, namespace: str, name: str | None, model_format: str | None) -> Mapping[str, Any] | None:
    candidates = [
        o
        for o in objects
        if o.get("kind") == "ClusterServingRuntime"
        or (o.get("kind") == "ServingRuntime" and (o.get("metadata") or {}).get("namespace") == namespace)
    ]
    for runtime in candidates:
        if name is not None and (runtime.get("metadata") or {}).get("name") == name:
            return runtime
    if name is None:
        for runtime in candidates:
            formats = (runtime.get("spec") or {}).get("supportedModelFormats") or []
            if any(f.get("name") == model_format and f.get("autoSelect") for f in formats):
                return runtime
    return None


def kserve_pods(objects: Objects) -> Iterator[dict[str, Any]]:
    """The predictor pod of every InferenceService, with its ServingRuntime (from ``objects``: the rendered
    ``kserve-runtime-configs`` release) merged in. An InferenceService whose runtime is missing yields a pod
    annotated ``inferstack.io/missing-runtime``."""
    for isvc in objects:
        if isvc.get("kind") != "InferenceService":
            continue
        meta = isvc.get("metadata") or {}
        namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name"))
        predictor = (isvc.get("spec") or {}).get("predictor") or {}
        model = dict(predictor.get("model") or {})
        runtime = _runtime(objects, namespace, model.get("runtime"), (model.get("modelFormat") or {}).get("name"))
        runtime_spec = (runtime or {}).get("spec") or {}
        runtime_containers = list(runtime_spec.get("containers") or [{"name": KSERVE_CONTAINER}])
        storage_uri = model.pop("storageUri", None)
        for field in ("modelFormat", "runtime", "protocolVersion"):
            model.pop(field, None)
        main = merge_container(runtime_containers[0], model)
        pod_fields = ("volumes", "nodeSelector", "tolerations", "affinity", "imagePullSecrets", "schedulerName")
        spec: dict[str, Any] = {k: copy.deepcopy(v) for k, v in runtime_spec.items() if k in pod_fields}
        for field, value in predictor.items():
            if field in _PREDICTOR_NON_POD:
                continue
            if field == "volumes":
                spec["volumes"] = _merge_list(spec.get("volumes") or [], value, "name")
            elif field in ("nodeSelector", "affinity") and isinstance(spec.get(field), Mapping):
                spec[field] = deep_merge(spec[field], value)  # MergePodSpec (utils.go:267-297)
            elif field == "containers":
                continue
            else:
                spec[field] = copy.deepcopy(value)
        containers = [main, *runtime_containers[1:], *(predictor.get("containers") or [])]
        init = list(spec.pop("initContainers", []) or [])
        volumes = list(spec.get("volumes") or [])
        if storage_uri:
            if storage_uri.startswith("pvc://"):
                claim, _, sub = storage_uri.removeprefix("pvc://").partition("/")
                volumes.append({"name": "kserve-pvc-source", "persistentVolumeClaim": {"claimName": claim}})
                mount = {"name": "kserve-pvc-source", "mountPath": KSERVE_MODEL_MOUNT, "readOnly": True}
                main["volumeMounts"] = [
                    *(main.get("volumeMounts") or []),
                    {**mount, **({"subPath": sub} if sub else {})},
                ]
            else:
                volumes.append({"name": "kserve-provision-location", "emptyDir": {}})
                init.append(
                    {
                        "name": "storage-initializer",
                        "image": "kserve/storage-initializer:v0.20.0",
                        "args": [storage_uri, KSERVE_MODEL_MOUNT],
                        "resources": copy.deepcopy(STORAGE_INITIALIZER_RESOURCES),
                        "securityContext": {
                            "allowPrivilegeEscalation": False,
                            "privileged": False,
                            "runAsNonRoot": True,
                            "capabilities": {"drop": ["ALL"]},
                        },
                        "volumeMounts": [{"name": "kserve-provision-location", "mountPath": KSERVE_MODEL_MOUNT}],
                    }
                )
                mount = {"name": "kserve-provision-location", "mountPath": KSERVE_MODEL_MOUNT, "readOnly": True}
                main["volumeMounts"] = [*(main.get("volumeMounts") or []), mount]
        # no annotation: the controller's configured default — Standard, as inferstack installs KServe
        knative = (meta.get("annotations") or {}).get("serving.kserve.io/deploymentMode", "Standard") in (
            "Knative",
            "Serverless",
        )
        if knative:
            containers.append(copy.deepcopy(QUEUE_PROXY))
        spec.update(containers=containers, volumes=volumes)
        if init:
            spec["initContainers"] = init
        labels = {
            **(predictor.get("labels") or {}),
            "serving.kserve.io/inferenceservice": name,
            "component": "predictor",
            "app": f"isvc.{name}-predictor",
        }
        owner = f"InferenceService/{namespace}/{name}"
        # predictor.go:161-172: the predictor's annotations (less the configured disallowed list) reach its pods
        pod = projected_pod(namespace, f"{name}-predictor", labels, spec, owner, predictor.get("annotations"))
        if runtime is None:
            pod["metadata"]["annotations"]["inferstack.io/missing-runtime"] = str(model.get("runtime"))
        yield pod


def _ray_container_env(container: dict[str, Any], extra: list[dict[str, Any]]) -> None:
    container["env"] = _merge_list(list(container.get("env") or []), extra, "name")


def ray_pods(objects: Objects) -> Iterator[dict[str, Any]]:
    """The head and one pod per worker group of every RayService / RayCluster, as KubeRay 1.7.0 builds them."""
    for obj in objects:
        kind = obj.get("kind")
        if kind == "RayService":
            cluster = (obj.get("spec") or {}).get("rayClusterConfig") or {}
        elif kind == "RayCluster":
            cluster = obj.get("spec") or {}
        else:
            continue
        meta = obj.get("metadata") or {}
        namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name"))
        auth = (cluster.get("authOptions") or {}).get("mode") == "token"
        auth_env = (
            [
                {"name": "RAY_AUTH_MODE", "value": "token"},
                {"name": "RAY_AUTH_TOKEN", "valueFrom": {"secretKeyRef": {"name": name, "key": "auth_token"}}},
            ]
            if auth
            else []
        )
        autoscaling = bool(cluster.get("enableInTreeAutoscaling"))
        groups = [("head", "headgroup", cluster.get("headGroupSpec") or {})]
        groups += [("worker", g.get("groupName", "workers"), g) for g in cluster.get("workerGroupSpecs") or []]
        for node_type, group, group_spec in groups:
            template = copy.deepcopy(group_spec.get("template") or {})
            spec = template.get("spec") or {}
            containers = spec.get("containers") or []
            # wait-gcs-ready copies the Ray container as written, before KubeRay adds its env (:606-642)
            written = copy.deepcopy(containers[0]) if containers else {}
            if containers:
                ray = containers[0]
                ports = list(ray.get("ports") or [])
                if not any(p.get("name") == "metrics" for p in ports):
                    ports.append({"name": "metrics", "containerPort": RAY_METRICS_PORT})
                ray["ports"] = ports
                address = "127.0.0.1:6379" if node_type == "head" else f"{name}-head-svc.{namespace}.svc:6379"
                _ray_container_env(
                    ray,
                    [
                        {"name": "RAY_CLUSTER_NAME", "value": name},
                        {"name": "RAY_CLUSTER_NAMESPACE", "value": namespace},
                        {"name": "RAY_ADDRESS", "value": address},
                        {"name": "RAY_USAGE_STATS_KUBERAY_IN_USE", "value": "1"},
                        *auth_env,
                    ],
                )
                if node_type == "head" and autoscaling:
                    ray["volumeMounts"] = [*(ray.get("volumeMounts") or []), RAY_LOGS_MOUNT]
            if node_type == "head" and autoscaling:
                options = cluster.get("autoscalerOptions") or {}
                sidecar = {
                    "name": "autoscaler",
                    "image": options.get("image") or (containers[0].get("image") if containers else ""),
                    "command": ["/bin/bash", "-lc", "--"],
                    "args": [AUTOSCALER_START],
                    "resources": copy.deepcopy(options.get("resources") or RAY_AUTOSCALER_RESOURCES),
                    "env": [*AUTOSCALER_ENV, *(options.get("env") or []), *auth_env],
                    "volumeMounts": [*(options.get("volumeMounts") or []), RAY_LOGS_MOUNT],
                }
                if options.get("securityContext"):
                    sidecar["securityContext"] = options["securityContext"]
                containers.append(sidecar)
                volumes = [v for v in spec.get("volumes") or [] if v.get("name") != RAY_LOGS_MOUNT["name"]]
                spec["volumes"] = [*volumes, {"name": RAY_LOGS_MOUNT["name"], "emptyDir": {}}]
            if node_type == "worker":
                wait = {
                    "name": "wait-gcs-ready",
                    "image": written.get("image", ""),
                    "command": ["/bin/bash", "-lc", "--"],
                    "resources": copy.deepcopy(RAY_WAIT_GCS_RESOURCES),
                    "env": [*(written.get("env") or []), *auth_env],
                    "volumeMounts": list(written.get("volumeMounts") or []),
                    "securityContext": copy.deepcopy(written.get("securityContext") or {}),
                }
                spec["initContainers"] = [*(spec.get("initContainers") or []), wait]
            spec["containers"] = containers
            labels = {
                **((template.get("metadata") or {}).get("labels") or {}),
                "ray.io/cluster": name,
                "ray.io/node-type": node_type,
                "ray.io/group": group,
                "ray.io/is-ray-node": "yes",
            }
            annotations = (template.get("metadata") or {}).get("annotations")  # the template's metadata, copied
            yield projected_pod(namespace, f"{name}-{group}", labels, spec, f"{kind}/{namespace}/{name}", annotations)


def prometheus_pods(objects: Objects) -> Iterator[dict[str, Any]]:
    """The pods of every ``Prometheus`` custom resource (prometheus-operator's StatefulSet)."""
    for obj in objects:
        if obj.get("kind") != "Prometheus":
            continue
        meta = obj.get("metadata") or {}
        namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name"))
        spec = obj.get("spec") or {}
        labels = {
            **((spec.get("podMetadata") or {}).get("labels") or {}),
            "app.kubernetes.io/name": "prometheus",
            "app.kubernetes.io/managed-by": "prometheus-operator",
            "operator.prometheus.io/name": name,
            "prometheus": name,
        }
        pod_spec = {
            "nodeSelector": dict(spec.get("nodeSelector") or {}),
            "tolerations": list(spec.get("tolerations") or []),
            "securityContext": dict(spec.get("securityContext") or {}),
            "containers": [{"name": "prometheus", "image": f"quay.io/prometheus/prometheus:{spec.get('version', '')}"}],
        }
        yield projected_pod(namespace, f"prometheus-{name}-0", labels, pod_spec, f"Prometheus/{namespace}/{name}")


def projected_pods(objects: Objects) -> list[dict[str, Any]]:
    """Every pod the modelled operators make from ``objects`` (KServe, KubeRay, prometheus-operator, LWS, the NIM
    operator, Dynamo)."""
    return [
        *kserve_pods(objects),
        *ray_pods(objects),
        *prometheus_pods(objects),
        *lws_pods(objects),
        *nim_pods(objects),
        *dynamo_pods(objects),
    ]
