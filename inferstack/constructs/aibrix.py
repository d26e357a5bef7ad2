"""AIBrix objects of a vLLM Deployment (vllm-project/aibrix v0.7.0): the labels its model router and adapter
controller select on, a ``ModelAdapter`` per LoRA adapter and a ``PodAutoscaler`` — validated against the vendored
v0.7.0 CRDs.

What AIBrix v0.7.0 does with them and this relies on: the router makes an HTTPRoute to Service
``<model.aibrix.ai/name>`` on ``model.aibrix.ai/port`` (modelrouter_controller.go), so the label, the Service name
and ``--served-model-name`` are one name; the adapter controller loads ``metadata.name`` as the LoRA name into the
Ready pods its ``podSelector`` matches, through vLLM's port 8000 (hard-coded; no runtime sidecar: the controller
only uses one named ``aibrix-runtime``); a PodAutoscaler's pod metrics come from ``/metrics`` of each pod, its
``targetMetric`` a key of AIBrix's registry."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from constructs import Construct

from inferstack.constructs.custom_resource import CustomResource

MODEL_LABEL = "model.aibrix.ai/name"
PORT_LABEL = "model.aibrix.ai/port"
ADAPTER_LABEL = "adapter.model.aibrix.ai/enabled"
ENGINE_LABEL = "model.aibrix.ai/engine"
#: The engine port AIBrix's adapter controller and autoscaler use (fixed at 8000 in v0.7.0).
ENGINE_PORT = 8000


def pod_labels(model_name: str) -> dict[str, str]:
    """What a base-model Deployment and its pods carry for AIBrix (samples/adapter/base.yaml at v0.7.0)."""
    return {MODEL_LABEL: model_name, PORT_LABEL: str(ENGINE_PORT), ADAPTER_LABEL: "true", ENGINE_LABEL: "vllm"}


@dataclass(frozen=True, kw_only=True)
class AdapterSpec:
    name: str
    """The adapter's name: the ModelAdapter's name and router label, what clients put in ``model`` (AIBrix loads it
    as the LoRA name)."""
    artifact: str
    """``artifactURL``: where AIBrix loads the adapter from, e.g. ``huggingface://org/adapter``."""
    base_model: str
    """The Hugging Face id the adapter was trained on. Not rendered (the ModelAdapter's ``baseModel`` is
    ``model_name``); rule AIBRIX-BASE-MODEL checks it against the workload's model."""


@dataclass(frozen=True, kw_only=True)
class PodAutoscalerSpec:
    strategy: str
    """``scalingStrategy``: ``KPA``, ``APA`` or ``HPA`` (the CRD's enum)."""
    min_replicas: int
    """``minReplicas`` of the Deployment."""
    max_replicas: int
    """``maxReplicas`` of the Deployment."""
    metric: str
    """``targetMetric``: a key of AIBrix's metric registry (e.g. ``num_requests_waiting``), read from each pod's
    ``/metrics`` on port 8000."""
    target: float
    """``targetValue``: the per-pod target of ``metric`` (requests, or a 0–1 usage fraction)."""


@dataclass(frozen=True, kw_only=True)
class AibrixObjectsProps:
    """The Deployment (and its model name) the objects belong to."""

    name: str
    """The vLLM Deployment's name: the PodAutoscaler's name and its ``scaleTargetRef``."""
    namespace: str
    """Namespace of the Deployment, the ModelAdapters and the PodAutoscaler."""
    model_name: str
    """The base model's name (the pods' ``model.aibrix.ai/name``, its Service, ``--served-model-name``): the
    ModelAdapters' ``baseModel`` and pod selector."""
    adapters: Sequence[AdapterSpec] = ()
    """The LoRA adapters, one ModelAdapter each. Default none."""
    autoscaler: PodAutoscalerSpec | None = None
    """A PodAutoscaler on the Deployment. Default none."""
    labels: Mapping[str, str] | None = None
    """Labels of the ModelAdapters and the PodAutoscaler. Default none."""


class AibrixObjects(Construct):
    """ModelAdapters (+ a PodAutoscaler) for one vLLM Deployment."""

    def __init__(self, scope: Construct, construct_id: str, props: AibrixObjectsProps) -> None:
        super().__init__(scope, construct_id)
        labels = dict(props.labels or {})
        selector = {MODEL_LABEL: props.model_name, ADAPTER_LABEL: "true"}
        for adapter in props.adapters:
            CustomResource(
                self,
                f"adapter-{adapter.name}",
                manifest={
                    "apiVersion": "model.aibrix.ai/v1alpha1",
                    "kind": "ModelAdapter",
                    "metadata": {
                        "name": adapter.name,
                        "namespace": props.namespace,
                        # the router gives the adapter its own route (samples/adapter/adapter.yaml)
                        "labels": {**labels, MODEL_LABEL: adapter.name, PORT_LABEL: str(ENGINE_PORT)},
                    },
                    "spec": {
                        "baseModel": props.model_name,
                        "podSelector": {"matchLabels": selector},
                        "artifactURL": adapter.artifact,
                    },
                },
            )
        if props.autoscaler is not None:
            scaler = props.autoscaler
            CustomResource(
                self,
                "pod-autoscaler",
                manifest={
                    "apiVersion": "autoscaling.aibrix.ai/v1alpha1",
                    "kind": "PodAutoscaler",
                    "metadata": {"name": props.name, "namespace": props.namespace, "labels": labels},
                    "spec": {
                        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": props.name},
                        "minReplicas": scaler.min_replicas,
                        "maxReplicas": scaler.max_replicas,
                        "scalingStrategy": scaler.strategy,
                        "metricsSources": [
                            {
                                "metricSourceType": "pod",
                                "protocolType": "http",
                                "port": str(ENGINE_PORT),
                                "path": "metrics",
                                "targetMetric": scaler.metric,
                                "targetValue": f"{scaler.target:g}",
                            }
                        ],
                    },
                },
            )
