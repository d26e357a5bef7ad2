"""The pods the Dynamo operator makes from a ``nvidia.com/v1beta1`` DynamoGraphDeployment, modelled at the pinned
1.4.0 (the branch cut ``e147ceea``, read through the fork wxsms/dynamo; paths under ``deploy/operator/``). One
Deployment per component (Grove off: the 1.4.0 chart writes ``grove.enabled: false`` by default, components/operator/
templates/operator-config.yaml:62-63), so one pod per component here.

* **Names**: the frontend's Deployment ``<graph>-frontend``; workers (``worker``, ``prefill``, ``decode``)
  ``<graph>-<component>-<hash>``, one 8-hex hash over every worker (internal/dynamo/graph.go:745-751,1467-1471;
  internal/dynamo/hash.go:51-99 — opaque here: :data:`WORKER_HASH`).
* **Labels** (controller/dynamocomponentdeployment_renderer.go:162-306; internal/dynamo/v1beta1_helpers.go:99-131):
  the podTemplate's, then ``nvidia.com/dynamo-component``, ``-namespace`` (``<namespace>-<graph>``),
  ``-graph-deployment-name``, ``-component-type``, ``nvidia.com/metrics-enabled``, ``nvidia.com/selector``
  (the Deployment's selector), the discovery labels and, on workers, ``nvidia.com/dynamo-worker-hash``. The graph's
  own ``metadata.labels`` reach no pod.
* **The ``main`` container** (``mergeContainerByName``, graph.go:1735-1757: mergo ``WithOverride``): a non-empty
  list of ours (``command``, ``args``, ``ports``, ``volumeMounts``) replaces the operator's; ``resources`` and
  ``securityContext`` are ours (the operator has none on this path); ``env`` is the union by name, ours winning,
  sorted by name (graph.go:718-740) over the operator's (component_common.go:95-144, component_frontend.go:70-83,
  component_worker.go:82-124); probes are the operator's unless we set them (component_worker.go:43-80,
  component_frontend.go:43-67).
* **The pod**: our pod fields over ``terminationGracePeriodSeconds: 60`` and ``restartPolicy: Always``
  (component_common.go:80-85); our ``securityContext``, else only ``fsGroup: 1000`` (graph.go:1535-1547,
  1636-1641); ``serviceAccountName`` ``<graph>-k8s-service-discovery`` when unset (graph.go:1643-1647); the
  ``shared-memory`` emptyDir (medium Memory, ``sharedMemorySize``, default 8Gi; ``"0"`` none) mounted at
  ``/dev/shm`` on ``main`` only (internal/dynamo/shared_memory.go:27-74); no init container or sidecar of its own
  for single-node components.
* **compilationCache** (graph.go:1849-1935, backend_vllm.go:117-139; unchanged between e147ceea and 2a6da14): the
  claim mounted on ``main`` at ``mountPath`` (vLLM's default ``/root/.cache/vllm``), its volume named after the
  claim unless the template has it, ``VLLM_CACHE_ROOT`` appended after the sorted env (a vLLM worker).
* **No operator calls** into the pods (it calls only for DynamoModel LoRAs and profiling requests); discovery goes
  through the Kubernetes API (``DYN_DISCOVERY_BACKEND=kubernetes``, api/config/v1alpha1/defaults.go:78-81).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from inferstack.gates.pods import projected_pod

#: Stands for the operator's worker hash (sha256 of the worker components' JSON, 8 hex digits).
WORKER_HASH = "0h0h0h0h"
WORKER_TYPES = ("worker", "prefill", "decode")
DEFAULT_SHM = "8Gi"
SHM_PATH = "/dev/shm"  # noqa: S108 - the memory-backed emptyDir the operator mounts
FRONTEND_PORT, SYSTEM_PORT, NIXL_TELEMETRY_PORT = 8000, 9090, 19090
#: ``DefaultVLLMCacheMountPoint`` (internal/consts/consts.go:208): a vLLM worker's compilation cache without a path.
VLLM_CACHE_MOUNT = "/root/.cache/vllm"


def _operator_main(kind: str, dynamo_namespace: str, graph: str, namespace: str) -> dict[str, Any]:
    """The operator's base ``main`` for a component type, before ours is merged over it."""
    env = {
        "DYN_NAMESPACE": dynamo_namespace,
        "DYN_COMPONENT": kind,
        "DYN_PARENT_DGD_K8S_NAME": graph,
        "DYN_PARENT_DGD_K8S_NAMESPACE": namespace,
        "DYN_DISCOVERY_BACKEND": "kubernetes",
    }
    field_env = [
        {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}
        for name, path in (("POD_NAME", "metadata.name"), ("POD_NAMESPACE", "metadata.namespace"))
    ] + [{"name": "POD_UID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.uid"}}}]
    if kind == "frontend":
        env |= {"DYNAMO_PORT": str(FRONTEND_PORT), "DYN_HTTP_PORT": str(FRONTEND_PORT)}
        env["DYN_NAMESPACE_PREFIX"] = dynamo_namespace
        return {
            "name": "main",
            "command": ["python3"],
            "args": ["-m", "dynamo.frontend"],
            "ports": [{"name": "http", "containerPort": FRONTEND_PORT, "protocol": "TCP"}],
            "env": [*({"name": k, "value": v} for k, v in env.items()), *field_env],
            "livenessProbe": _probe("/live", "http", period=10, timeout=1, failures=3, delay=15),
            "readinessProbe": _probe("/health", "http", period=10, timeout=3, failures=3, delay=10),
        }
    env |= {
        "DYN_SYSTEM_ENABLED": "true",
        "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS": '["generate"]',
        "DYN_SYSTEM_PORT": str(SYSTEM_PORT),
        "DYN_HEALTH_CHECK_ENABLED": "false",
        "NIXL_TELEMETRY_ENABLE": "n",
        "NIXL_TELEMETRY_EXPORTER": "prometheus",
        "NIXL_TELEMETRY_PROMETHEUS_PORT": str(NIXL_TELEMETRY_PORT),
        "DYN_FORWARDPASS_METRIC_PORT": "20380",
        "DYN_NAMESPACE_WORKER_SUFFIX": WORKER_HASH,
    }
    return {
        "name": "main",
        "command": ["/bin/sh", "-c"],
        "ports": [
            {"name": "system", "containerPort": SYSTEM_PORT, "protocol": "TCP"},
            {"name": "nixl", "containerPort": NIXL_TELEMETRY_PORT, "protocol": "TCP"},
        ],
        "env": [*({"name": k, "value": v} for k, v in env.items()), *field_env],
        "livenessProbe": _probe("/live", "system", period=5, timeout=4, failures=1),
        "readinessProbe": _probe("/health", "system", period=10, timeout=4, failures=3),
        "startupProbe": _probe("/live", "system", period=10, timeout=5, failures=720),
    }


def _probe(path: str, port: str, *, period: int, timeout: int, failures: int, delay: int = 0) -> dict[str, Any]:
    probe: dict[str, Any] = {
        "httpGet": {"path": path, "port": port},
        "periodSeconds": period,
        "timeoutSeconds": timeout,
        "failureThreshold": failures,
    }
    if delay:
        probe["initialDelaySeconds"] = delay
    return probe


def merge_main(base: Mapping[str, Any], ours: Mapping[str, Any]) -> dict[str, Any]:
    """``mergeContainerByName``: mergo ``WithOverride`` (a non-empty value of ours replaces; maps merge key by key),
    then ``env`` as the union by name, ours winning, sorted by name; a probe of ours replaces the operator's."""
    merged = copy.deepcopy(dict(base))
    for field, value in ours.items():
        if field == "env" or value in (None, "", [], {}):
            continue
        if isinstance(value, Mapping) and isinstance(merged.get(field), Mapping):
            merged[field] = {**merged[field], **copy.deepcopy(dict(value))}
        else:
            merged[field] = copy.deepcopy(value)
    env = {e["name"]: e for e in base.get("env") or []}
    env |= {e["name"]: e for e in ours.get("env") or []}
    merged["env"] = [env[name] for name in sorted(env)]
    return merged


def _is_vllm(main: Mapping[str, Any]) -> bool:
    """A vLLM worker, as ``determineBackendFramework`` finds it from the command (graph.go:3026-3104)."""
    return "dynamo.vllm" in " ".join(str(part) for part in [*(main.get("command") or []), *(main.get("args") or [])])


def _compilation_cache(cache: Mapping[str, Any], vllm: bool, main: dict[str, Any], spec: dict[str, Any]) -> None:
    """``compilationCache`` (graph.go:1849-1935, backend_vllm.go:117-139): the claim mounted on ``main`` at
    ``mountPath`` (a vLLM worker's default :data:`VLLM_CACHE_MOUNT`; other backends have none), a volume named
    after the claim, and for vLLM ``VLLM_CACHE_ROOT`` appended after the sorted env. What the operator refuses
    raises ``ValueError``: another mount at the path, a read-only one, a same-named volume that is not the claim."""
    claim = str(cache["pvcName"])
    path = cache.get("mountPath") or (VLLM_CACHE_MOUNT if vllm else None)
    if not path:
        raise ValueError("compilationCache.mountPath is required for backend framework noop (graph.go:1860-1861)")
    mounts = main.setdefault("volumeMounts", [])
    for mount in mounts:
        if mount.get("mountPath") == path and (mount.get("name") != claim or mount.get("readOnly")):
            raise ValueError(f"compilationCache: {path} is mounted already by {mount.get('name')!r}")
    if not any(m.get("name") == claim and m.get("mountPath") == path for m in mounts):
        mounts.append({"name": claim, "mountPath": path})
    volumes = spec.setdefault("volumes", [])
    same = [v for v in volumes if v.get("name") == claim]
    if not same:
        volumes.append({"name": claim, "persistentVolumeClaim": {"claimName": claim}})
    elif (
        len(same) > 1
        or (same[0].get("persistentVolumeClaim") or {}).get("claimName") != claim
        or (same[0]["persistentVolumeClaim"].get("readOnly"))
    ):
        raise ValueError(f"compilationCache: volume {claim!r} is not the writable claim {claim!r}")
    if vllm:
        main.setdefault("env", []).append({"name": "VLLM_CACHE_ROOT", "value": path})


def _component_pod(graph: Mapping[str, Any], component: Mapping[str, Any]) -> dict[str, Any]:
    meta = graph.get("metadata") or {}
    namespace, name = str(meta.get("namespace") or "default"), str(meta["name"])
    dynamo_namespace = f"{namespace}-{name.replace('.', '-')}"
    part, kind = str(component["name"]), str(component.get("type") or component["name"])
    worker = kind in WORKER_TYPES
    deployment = f"{name}-{part.lower()}" + (f"-{WORKER_HASH}" if worker else "")
    template = component.get("podTemplate") or {}
    ours = copy.deepcopy(dict(template.get("spec") or {}))
    containers = ours.pop("containers", None) or []
    main = next((c for c in containers if c.get("name") == "main"), {"name": "main"})
    others = [c for c in containers if c.get("name") != "main"]
    container = merge_main(_operator_main(kind, dynamo_namespace, name, namespace), main)
    spec: dict[str, Any] = {"terminationGracePeriodSeconds": 60, "restartPolicy": "Always"}
    spec.update({k: v for k, v in ours.items() if v not in (None, "", [], {})})
    spec.setdefault("securityContext", {"fsGroup": 1000})
    spec.setdefault("serviceAccountName", f"{name}-k8s-service-discovery")
    cache = component.get("compilationCache")
    if cache:
        _compilation_cache(cache, worker and _is_vllm(main), container, spec)
    shm = str(component.get("sharedMemorySize") or DEFAULT_SHM)
    if shm != "0":
        spec["volumes"] = [v for v in spec.get("volumes") or [] if v.get("name") != "shared-memory"]
        spec["volumes"].append({"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": shm}})
        mounts = [m for m in container.get("volumeMounts") or [] if m.get("mountPath") != SHM_PATH]
        container["volumeMounts"] = [*mounts, {"name": "shared-memory", "mountPath": SHM_PATH}]
    spec["containers"] = [container, *others]
    labels = {
        **((template.get("metadata") or {}).get("labels") or {}),
        "nvidia.com/dynamo-component": part,
        "nvidia.com/dynamo-namespace": dynamo_namespace,
        "nvidia.com/dynamo-graph-deployment-name": name,
        "nvidia.com/dynamo-component-type": kind,
        "nvidia.com/metrics-enabled": "true",
        "nvidia.com/selector": deployment,
        "nvidia.com/dynamo-discovery-backend": "kubernetes",
        "nvidia.com/dynamo-discovery-enabled": "true",
    }
    if worker:
        labels["nvidia.com/dynamo-worker-hash"] = WORKER_HASH
    annotations = (template.get("metadata") or {}).get("annotations")  # the podTemplate's (?: not read at 1.4.0)
    owner = f"DynamoGraphDeployment/{namespace}/{name}"
    return projected_pod(namespace, f"{deployment}-0", labels, spec, owner, annotations)


def dynamo_pods(objects: Sequence[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """One pod per component of every DynamoGraphDeployment."""
    for obj in objects:
        if obj.get("kind") == "DynamoGraphDeployment":
            for component in (obj.get("spec") or {}).get("components") or []:
                yield _component_pod(obj, component)
