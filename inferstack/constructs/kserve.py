"""KServeService: a KServe ``serving.kserve.io/v1beta1`` InferenceService on the Hugging Face runtime
(``kserve-huggingfaceserver``) with the vLLM backend, in Standard or Knative mode, plus a PodMonitor. Validated
against the vendored v0.20.0 CRD.

What KServe v0.20.0 does with it and this relies on (kserve/kserve@v0.20.0):

* ``minReplicas`` becomes Knative's ``min-scale`` in Knative mode; the Standard-mode HPA clamps it to ≥ 1
  (reconcilers/hpa/hpa_reconciler.go) — so 0 is only rendered in Knative mode;
* ``storageUri: pvc://<claim>/<path>`` mounts the claim read-only at ``/mnt/models`` (no storage-initializer, no
  credentials in the pod);
* the runtime passes ``--model_name={{.Name}}``; the InferenceService's ``args`` come after it, so its own
  ``--model_name`` wins; unknown arguments are dropped silently (``parse_known_args``), so only known vLLM flags
  are rendered;
* the controller appends ``-gpu`` to the runtime image's tag when the limits hold ``nvidia.com/gpu``;
* the Hugging Face server listens on 8080 and answers ``/v2/health/ready`` once the model loaded (?).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from constructs import Construct

from inferstack.constructs import validation as check
from inferstack.constructs.custom_resource import CustomResource
from inferstack.constructs.monitoring import pod_monitor
from inferstack.constructs.pod import PodPlacement

API_VERSION = "serving.kserve.io/v1beta1"
RUNTIME = "kserve-huggingfaceserver"
PORT = 8080
READY_PATH = "/v2/health/ready"
MODES = ("Standard", "Knative")
#: KServe's label on every predictor pod (constants.InferenceServicePodLabelKey).
ISVC_LABEL = "serving.kserve.io/inferenceservice"
KSERVE_UID = 1000
PROBE_PERIOD_SECONDS = 10


@dataclass(frozen=True, kw_only=True)
class KServeServiceProps:
    """One InferenceService.

    :param storage_uri: ``pvc://…`` (mounted) or None (the server downloads ``--model_id`` itself).
    :param startup_seconds: what the startup probe allows (Standard mode); Knative's progress deadline adds the
        node and image time (``progress_deadline_seconds``).
    :param request_timeout_seconds: Knative's per-request timeout (a cold start waits within it). Default: Knative's.
    """

    name: str
    """Name of the InferenceService and PodMonitor (KServe names the predictor Service ``<name>-predictor``); also
    the ``app.kubernetes.io/name`` label. An RFC 1123 label."""
    namespace: str
    """Namespace of the InferenceService and PodMonitor. An RFC 1123 label."""
    mode: str = "Standard"
    """KServe deployment mode (``serving.kserve.io/deploymentMode``): ``Standard`` (a Deployment; an HPA when min ≠
    max replicas) or ``Knative`` (a Knative Service; may scale to zero). Default ``Standard``."""
    service_account: str
    """ServiceAccount of the predictor pods. An RFC 1123 label."""
    storage_uri: str | None = None
    """``pvc://<claim>/<path>`` (the only scheme accepted): KServe mounts the claim read-only at ``/mnt/models``.
    Default none: the server downloads ``--model_id`` itself."""
    args: Sequence[str] = ()
    """Hugging Face server arguments after the runtime's ``--model_name`` (unknown ones are dropped by the server).
    Default none."""
    env: Sequence[Mapping[str, Any]] = ()
    """Environment of the model container, as Kubernetes EnvVar objects (``name`` with ``value`` or ``valueFrom``).
    Default none."""
    requests: Mapping[str, str]
    """Model-container requests, Kubernetes quantities."""
    limits: Mapping[str, str]
    """Model-container limits; extended resources must equal their ``requests`` (``nvidia.com/gpu`` makes KServe use
    the runtime's ``-gpu`` image)."""
    placement: PodPlacement
    """Where the predictor pods run. Its ``priority_class`` is rendered in Standard mode only (Knative has no
    ``podspec-priorityclassname`` by default); ``affinity`` and ``scheduler_name`` are refused in Knative mode
    (they need its ``podspec-affinity``/``podspec-schedulername`` feature flags)."""
    min_replicas: int = 1
    """``predictor.minReplicas``: 0 (scale to zero) only in Knative mode, otherwise at least 1; at most
    ``max_replicas``. Default 1."""
    max_replicas: int = 1
    """``predictor.maxReplicas``; in Standard mode the HPA autoscaler is only enabled when it differs from
    ``min_replicas``. Default 1."""
    scale_metric: str | None = None
    """``predictor.scaleMetric``: ``concurrency`` or ``rps`` (Knative's autoscaler), ``cpu`` or ``memory`` (the
    Standard-mode HPA). Default none: KServe's."""
    scale_target: int | None = None
    """``predictor.scaleTarget``: per-pod target of ``scale_metric`` (requests, or utilisation percent for
    cpu/memory). Default none: KServe's."""
    startup_seconds: int
    """Standard mode: how long the startup probe lets the model load (``startup_seconds // 10`` failures, 10 seconds
    apart), seconds. Knative mode uses ``progress_deadline_seconds`` instead."""
    progress_deadline_seconds: int | None = None
    """Knative mode: ``serving.knative.dev/progress-deadline``, how long a revision may take to become ready (node,
    image pull and model load), seconds. Default none: Knative's."""
    request_timeout_seconds: int | None = None
    """Knative mode: the predictor's per-request ``timeout`` (a cold start waits within it), seconds. Default none:
    Knative's."""
    monitoring: bool = True
    """Render a PodMonitor scraping ``/metrics`` on port 8080 of the predictor pods. Default True."""
    init_containers: Sequence[Mapping[str, Any]] = ()
    """Standard mode: init containers of the predictor (e.g. waiting for the model sync). Default none."""
    volumes: Sequence[Mapping[str, Any]] = ()
    """Standard mode: volumes the init containers mount. Default none."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra labels of the InferenceService and its predictor pods (``app.kubernetes.io/*`` are set by the
    construct). Default none."""


class KServeService(Construct):
    """The InferenceService (+ PodMonitor on port 8080) of one model."""

    def __init__(self, scope: Construct, construct_id: str, props: KServeServiceProps) -> None:
        super().__init__(scope, construct_id)
        owner = f"KServeService {props.name!r}"
        check.dns_label(owner, "name", props.name)
        check.dns_label(owner, "namespace", props.namespace)
        check.dns_label(owner, "service_account", props.service_account)
        check.one_of(owner, "mode", props.mode, MODES)
        check.quantities(owner, "requests", props.requests)
        check.extended_resources_equal(owner, props.requests, props.limits)
        knative = props.mode == "Knative"
        if knative:
            props.placement.refuse(
                owner, "placement", ("affinity", "scheduler_name"), "Knative admits it only with its podspec flags"
            )
        if props.min_replicas < (0 if knative else 1) or props.min_replicas > props.max_replicas:
            raise check.PropError(
                f"{owner}: min_replicas {props.min_replicas} — 0 ≤ min ≤ max in Knative mode, 1 ≤ min ≤ max in "
                "Standard mode (its HPA raises 0 to 1)"
            )
        if props.storage_uri is not None and not props.storage_uri.startswith("pvc://"):
            raise check.PropError(
                f"{owner}: storage_uri {props.storage_uri!r} — a pvc:// claim (mounted, no credentials)"
            )
        self.props = props
        labels = {
            "app.kubernetes.io/name": props.name,
            "app.kubernetes.io/component": "kserve",
            "app.kubernetes.io/part-of": "inferstack",
        }
        annotations = {"serving.kserve.io/deploymentMode": props.mode}
        if knative and props.progress_deadline_seconds:
            annotations["serving.knative.dev/progress-deadline"] = f"{props.progress_deadline_seconds}s"
        if not knative:
            scaled = props.min_replicas != props.max_replicas
            annotations["serving.kserve.io/autoscalerClass"] = "hpa" if scaled else "none"
        probe = {"httpGet": {"path": READY_PATH} if knative else {"path": READY_PATH, "port": PORT}}
        model: dict[str, Any] = {
            "modelFormat": {"name": "huggingface"},
            "runtime": RUNTIME,
            "args": list(props.args),
            "resources": {"requests": dict(props.requests), "limits": dict(props.limits)},
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": KSERVE_UID,
                "allowPrivilegeEscalation": False,
                "capabilities": {"drop": ["ALL"]},
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "readinessProbe": {**probe, "periodSeconds": PROBE_PERIOD_SECONDS, "failureThreshold": 3},
        }
        if props.storage_uri:
            model["storageUri"] = props.storage_uri
        if props.env:
            model["env"] = [dict(e) for e in props.env]
        if not knative:  # Knative gates traffic on readiness and bounds the start with its progress deadline
            model["startupProbe"] = {
                **probe,
                "periodSeconds": PROBE_PERIOD_SECONDS,
                "failureThreshold": max(1, props.startup_seconds // PROBE_PERIOD_SECONDS),
            }
        placement = props.placement.pod_spec_json()
        priority = placement.pop("priorityClassName", None)
        predictor: dict[str, Any] = {
            "minReplicas": props.min_replicas,
            "maxReplicas": props.max_replicas,
            "serviceAccountName": props.service_account,
            **placement,
            "labels": {**props.labels, **labels},
            "model": model,
        }
        if props.scale_metric:
            predictor["scaleMetric"] = props.scale_metric
        if props.scale_target:
            predictor["scaleTarget"] = props.scale_target
        if knative and props.request_timeout_seconds:
            predictor["timeout"] = props.request_timeout_seconds
        if props.init_containers or props.volumes:
            if knative:
                raise check.PropError(
                    f"{owner}: init_containers/volumes — Knative admits them only with its podspec feature flags"
                )
            predictor["initContainers"] = [dict(c) for c in props.init_containers]
            predictor["volumes"] = [dict(v) for v in props.volumes]
        if priority and not knative:  # Knative has no podspec-priorityclassname by default
            predictor["priorityClassName"] = priority
        self.inference_service = CustomResource(
            self,
            "inference-service",
            manifest={
                "apiVersion": API_VERSION,
                "kind": "InferenceService",
                "metadata": {
                    "name": props.name,
                    "namespace": props.namespace,
                    "labels": {**props.labels, **labels},
                    "annotations": annotations,
                },
                "spec": {"predictor": predictor},
            },
        )
        #: The predictor's Service KServe creates (``<name>-predictor``; port 80 → 8080).
        self.service_name = f"{props.name}-predictor"
        if props.monitoring:
            pod_monitor(
                self,
                "pod-monitor",
                name=props.name,
                namespace=props.namespace,
                labels=labels,
                selector={"matchLabels": {ISVC_LABEL: props.name}},
                port=PORT,  # the runtime declares no container port: by number
            )
