"""The pods the NIM operator makes from a NIMService and a NIMCache, modelled at the pinned v3.0.0
(NVIDIA/k8s-nim-operator ``061628a7``). Short names: ``svc-types`` = ``api/apps/v1alpha1/nimservice_types.go``,
``cache-types`` = ``api/apps/v1alpha1/nimcache_types.go``, ``cache-ctl`` = ``internal/controller/
nimcache_controller.go``, ``tpl/`` = ``manifests/`` (the Go templates the standalone renderer fills in).

* **NIMService → Deployment ``<name>``** (svc-types:1006-1083, ``tpl/deployment.yaml``): pod labels ``app: <name>``
  (the selector, tpl:23-32) and the operator's standard labels, which win over ``spec.labels`` on a clash
  (``GetServiceLabels`` svc-types:255-263,506-513 → ``utils.MergeMaps`` keeps the first map, internal/utils/
  utils.go:112-126), so ``app.kubernetes.io/part-of`` is ``nim-service``; one container ``<name>-ctr``
  (svc-types:540-543) with **no securityContext** (tpl:70-104) and the image's own entrypoint (``spec.command`` /
  ``args`` are not rendered); env ``NIM_CACHE_PATH``, ``NGC_API_KEY`` from ``authSecret`` and the NIM ports
  (svc-types:266-322); port ``api`` = ``expose.service.port`` (svc-types:1061-1067); ``resources`` copied
  (svc-types:579-589); ``/model-store`` from the NIMCache's PVC and ``/dev/shm`` (svc-types:687-714,801-818); the pod
  ``securityContext`` ``runAsUser`` 1000, ``runAsGroup`` / ``fsGroup`` 2000 unless ``userID`` / ``groupID``
  (svc-types:969-983; ``seccompProfile`` only on TKGS, tpl:167-178); ``serviceAccountName: <name>`` (svc-types:
  869-872); ``nodeSelector`` and ``tolerations`` copied, ``tolerationSeconds`` dropped (tpl:146-160).
* **NIMCache → PVC** ``spec.storage.pvc.name`` (else ``<name>-pvc``) when ``create`` (cache-ctl:500-536,
  internal/shared/pvc.go:31-65); **the manifest Pod ``<name>-pod``** for an NGC source without ``modelEndpoint``
  (cache-ctl:578-661,916-1006) and **the Job ``<name>-job``** (cache-ctl:1008-1275): pod labels ``app:
  k8s-nim-operator``, ``app.kubernetes.io/name: <name>``, ``app.kubernetes.io/managed-by: k8s-nim-operator``;
  ServiceAccount ``nim-cache-sa`` (cache-ctl:71-80); pod ``securityContext`` ``runAsUser`` 1000, ``fsGroup`` 2000,
  ``runAsNonRoot`` (cache-types:283-297), the container non-root, no privilege escalation, every capability dropped;
  ``resources`` requests = limits = ``spec.resources`` cpu/memory; ``nodeSelector`` (default the NFD GPU label,
  cache-types:304-310) and ``tolerations`` copied; ``envFrom`` the ``authSecret``.
* The operator's own call into the NIM pods: :mod:`inferstack.gates.operator_calls`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from inferstack.gates.pods import projected_pod

NIM_UID, NIM_GID = 1000, 2000
MODEL_STORE = "/model-store"
SHM_PATH = "/dev/shm"  # noqa: S108 - the memory-backed emptyDir the operator mounts
#: ``OUTLINES_CACHE_DIR`` the operator sets (svc-types:266-322).
OUTLINES_CACHE = "/tmp/outlines"  # noqa: S108 - the operator's value, modelled
CACHE_SERVICE_ACCOUNT = "nim-cache-sa"
OPERATOR_LABELS = {"app.kubernetes.io/managed-by": "k8s-nim-operator"}


def _meta(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or "default"), str(meta["name"])


def _tolerations(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    keep = ("key", "operator", "value", "effect")
    return [{k: t[k] for k in keep if k in t} for t in spec.get("tolerations") or []]


def _service_port(spec: Mapping[str, Any]) -> int:
    return int(((spec.get("expose") or {}).get("service") or {}).get("port") or 8000)  # CRD default 8000


#: ``GetStandardAnnotations`` without a proxy, less ``NvidiaAnnotationParentSpecHashKey``, which
#: ``GetDeploymentParams`` deletes from the pods' (``nimservice_types.go``: read in the search index's copy, not at
#: ``061628a7`` (?)).
STANDARD_POD_ANNOTATIONS = {"openshift.io/required-scc": "nonroot"}


def service_labels(name: str, spec: Mapping[str, Any]) -> dict[str, str]:
    """``GetServiceLabels``: the operator's standard labels first, ``spec.labels`` only where they do not clash."""
    standard = {
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/instance": name,
        "app.kubernetes.io/operator-version": "",
        "app.kubernetes.io/part-of": "nim-service",
        "app.kubernetes.io/managed-by": "k8s-nim-operator",
    }
    return {**(spec.get("labels") or {}), **standard}


def _cache(objects: Sequence[Mapping[str, Any]], namespace: str, name: str | None) -> Mapping[str, Any] | None:
    return next(
        (o for o in objects if o.get("kind") == "NIMCache" and _meta(o) == (namespace, str(name))),
        None,
    )


def cache_claim(cache: Mapping[str, Any]) -> str:
    _, name = _meta(cache)
    pvc = ((cache.get("spec") or {}).get("storage") or {}).get("pvc") or {}
    return str(pvc.get("name") or f"{name}-pvc")


def _service_pod(objects: Sequence[Mapping[str, Any]], obj: Mapping[str, Any]) -> dict[str, Any]:
    namespace, name = _meta(obj)
    spec = obj.get("spec") or {}
    image = spec.get("image") or {}
    port = _service_port(spec)
    env = [
        {"name": "NIM_CACHE_PATH", "value": MODEL_STORE},
        {"name": "NGC_API_KEY", "valueFrom": {"secretKeyRef": {"name": spec.get("authSecret"), "key": "NGC_API_KEY"}}},
        {"name": "OUTLINES_CACHE_DIR", "value": OUTLINES_CACHE},
        {"name": "NIM_SERVER_PORT", "value": str(port)},
        {"name": "NIM_HTTP_API_PORT", "value": str(port)},
        {"name": "NIM_JSONL_LOGGING", "value": "1"},
        {"name": "NIM_LOG_LEVEL", "value": "INFO"},
    ]
    ours = {e["name"]: e for e in spec.get("env") or []}
    env = [*ours.values(), *(e for e in env if e["name"] not in ours)]  # MergeEnvVars: spec.env first and wins
    storage = spec.get("storage") or {}
    cache = _cache(objects, namespace, (storage.get("nimCache") or {}).get("name"))
    claim = cache_claim(cache) if cache is not None else str((storage.get("pvc") or {}).get("name"))
    shm: dict[str, Any] = {"medium": "Memory"}
    if storage.get("sharedMemorySizeLimit"):
        shm["sizeLimit"] = storage["sharedMemorySizeLimit"]
    resources = {k: dict(v) for k, v in (spec.get("resources") or {}).items() if k in ("requests", "limits")}
    pod_spec = {
        "serviceAccountName": name,
        "nodeSelector": dict(spec.get("nodeSelector") or {}),
        "tolerations": _tolerations(spec),
        "imagePullSecrets": [{"name": s} for s in image.get("pullSecrets") or []],
        "securityContext": {
            "runAsUser": int(spec.get("userID") or NIM_UID),
            "runAsGroup": int(spec.get("groupID") or NIM_GID),
            "fsGroup": int(spec.get("groupID") or NIM_GID),
        },
        "containers": [
            {
                "name": f"{name}-ctr",
                "image": f"{image.get('repository')}:{image.get('tag')}",
                "env": env,
                "ports": [{"name": "api", "containerPort": port, "protocol": "TCP"}],
                "resources": resources,
                "volumeMounts": [
                    {"name": "model-store", "mountPath": MODEL_STORE, "readOnly": bool(storage.get("readOnly"))},
                    {"name": "dshm", "mountPath": SHM_PATH},
                ],
            }
        ],
        "volumes": [
            {"name": "dshm", "emptyDir": shm},
            {"name": "model-store", "persistentVolumeClaim": {"claimName": claim}},
        ],
    }
    # GetStartupProbe / GetReadinessProbe / GetLivenessProbe: spec.<probe>.probe when the probe is enabled (else the
    # operator's defaults, not modelled here: they differ between releases); read in the search index's
    # nimservice_types.go, not at 061628a7 (?)
    for field in ("startupProbe", "readinessProbe", "livenessProbe"):
        holder = spec.get(field) or {}
        if holder.get("enabled", True) and isinstance(holder.get("probe"), Mapping):
            pod_spec["containers"][0][field] = copy.deepcopy(dict(holder["probe"]))
    labels = {"app": name, **service_labels(name, spec)}
    # GetNIMServiceAnnotations → PodAnnotations (less the spec-hash key): the standard annotation wins on a clash
    annotations = {**(spec.get("annotations") or {}), **STANDARD_POD_ANNOTATIONS}
    return projected_pod(namespace, f"{name}-0", labels, pod_spec, f"NIMService/{namespace}/{name}", annotations)


def _cache_pods(obj: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    namespace, name = _meta(obj)
    spec = obj.get("spec") or {}
    ngc = (spec.get("source") or {}).get("ngc")
    hf = (spec.get("source") or {}).get("hf")
    source = ngc or hf or {}
    requested = spec.get("resources") or {}
    quantities = {"cpu": str(requested.get("cpu") or "0"), "memory": str(requested.get("memory") or "0")}
    container_security = {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
        "runAsGroup": int(spec.get("groupID") or NIM_GID),
        "runAsUser": int(spec.get("userID") or NIM_UID),
    }
    pod_security = {
        "runAsUser": int(spec.get("userID") or NIM_UID),
        "fsGroup": int(spec.get("groupID") or NIM_GID),
        "runAsNonRoot": True,
    }
    scheduling = {
        "serviceAccountName": CACHE_SERVICE_ACCOUNT,
        "nodeSelector": dict(spec.get("nodeSelector") or {"feature.node.kubernetes.io/pci-10de.present": "true"}),
        "tolerations": list(spec.get("tolerations") or []),
        "imagePullSecrets": [{"name": source["pullSecret"]}] if source.get("pullSecret") else [],
    }
    labels = {"app": "k8s-nim-operator", "app.kubernetes.io/name": name, **OPERATOR_LABELS}
    owner = f"NIMCache/{namespace}/{name}"
    if ngc is not None and not ngc.get("modelEndpoint"):
        manifest = {
            **scheduling,
            "securityContext": pod_security,
            "containers": [
                {
                    "name": "nim-cache-ctr",
                    "image": source.get("modelPuller"),
                    "command": ["sh", "-c", "cat /opt/nim/etc/default/model_manifest.yaml; sleep infinity"],
                    "resources": {"requests": quantities, "limits": quantities},
                    "securityContext": container_security,
                }
            ],
        }
        yield projected_pod(namespace, f"{name}-pod", labels, manifest, owner)
    job = {
        **scheduling,
        "restartPolicy": "Never",
        "securityContext": pod_security,
        "containers": [
            {
                "name": "nim-cache-ctr",
                "image": source.get("modelPuller"),
                "command": ["download-to-cache"] if ngc is not None else ["huggingface-cli", "download"],
                "envFrom": [{"secretRef": {"name": source.get("authSecret")}}],
                "env": [{"name": "NIM_CACHE_PATH", "value": MODEL_STORE}],
                "resources": {"requests": quantities, "limits": quantities},
                "securityContext": container_security,
                "volumeMounts": [{"name": "nim-cache-volume", "mountPath": MODEL_STORE}],
            }
        ],
        "volumes": [{"name": "nim-cache-volume", "persistentVolumeClaim": {"claimName": cache_claim(obj)}}],
    }
    yield projected_pod(
        namespace, f"{name}-job-0", {**labels, "batch.kubernetes.io/job-name": f"{name}-job"}, job, owner
    )


def nim_pods(objects: Sequence[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """The pods of every NIMService (its Deployment's) and NIMCache (the manifest Pod and the caching Job's)."""
    for obj in objects:
        if obj.get("kind") == "NIMService":
            yield _service_pod(objects, obj)
        elif obj.get("kind") == "NIMCache":
            yield from _cache_pods(obj)


def nim_claims(objects: Sequence[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """The PVCs the operator creates for NIMCaches with ``storage.pvc.create`` (cache-ctl:500-536)."""
    for obj in objects:
        if obj.get("kind") != "NIMCache":
            continue
        namespace, _ = _meta(obj)
        pvc = ((obj.get("spec") or {}).get("storage") or {}).get("pvc") or {}
        if pvc.get("create"):
            yield {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": cache_claim(obj), "namespace": namespace},
                "spec": {
                    "accessModes": [pvc.get("volumeAccessMode", "")],
                    "resources": {"requests": {"storage": pvc.get("size")}},
                    **({"storageClassName": pvc["storageClass"]} if pvc.get("storageClass") else {}),
                },
            }
