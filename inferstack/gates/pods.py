"""Where the pods are: the pod templates inside workload objects (core kinds and the operators' custom
resources we emit), each with the path it sits at, so a finding can name ``Deployment/x spec.template.spec``; and
the bare ``Pod`` manifests the operator projections return (:func:`projected_pod`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from inferstack.constructs.pod.templates import POD_TEMPLATE_PATHS, walk_path


@dataclass(frozen=True)
class PodTemplate:
    """One pod template found in a manifest."""

    owner: Mapping[str, Any]
    """The manifest that holds it."""
    path: str
    """Where, e.g. ``spec.template`` or ``spec.workerGroupSpecs[1].template``."""
    labels: Mapping[str, str]
    """``metadata.labels`` of the template (what selectors match)."""
    spec: Mapping[str, Any]
    """The pod spec."""

    @property
    def namespace(self) -> str:
        return str(self.owner.get("metadata", {}).get("namespace") or "default")

    @property
    def ref(self) -> str:
        """``Kind/namespace/name`` of the owner."""
        meta = self.owner.get("metadata", {})
        return f"{self.owner.get('kind')}/{self.namespace}/{meta.get('name')}"

    def containers(self) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """(``containers`` | ``initContainers`` | ``ephemeralContainers``, container) of every container."""
        for field in ("initContainers", "containers", "ephemeralContainers"):
            for container in self.spec.get(field) or ():
                yield field, container


#: Fields of a KServe predictor that are KServe's own, not PodSpec fields (v1beta1 PredictorSpec).
_PREDICTOR_FIELDS = frozenset(
    {
        "model", "minReplicas", "maxReplicas", "scaleMetric", "scaleMetricType", "scaleTarget", "autoScaling",
        "containerConcurrency", "timeout", "canaryTrafficPercent", "logger", "batcher", "labels", "annotations",
        "deploymentStrategy", "workerSpec", "storageUris", "huggingface", "sklearn", "xgboost", "tensorflow",
        "pytorch", "triton", "onnx", "pmml", "lightgbm", "paddle", "storageContainerName",
    }
)  # fmt: skip


def _predictor(manifest: Mapping[str, Any]) -> Iterator[PodTemplate]:
    """A KServe InferenceService's predictor as the pod KServe renders: its PodSpec fields, the ``model``
    container (``kserve-container``) first, labelled ``serving.kserve.io/inferenceservice: <name>``."""
    predictor = (manifest.get("spec") or {}).get("predictor")
    if not isinstance(predictor, Mapping):
        return
    spec: dict[str, Any] = {k: v for k, v in predictor.items() if k not in _PREDICTOR_FIELDS}
    model = predictor.get("model")
    containers = [{"name": "kserve-container", **model}] if isinstance(model, Mapping) else []
    spec["containers"] = [*containers, *(predictor.get("containers") or [])]
    name = (manifest.get("metadata") or {}).get("name")
    labels = {**(predictor.get("labels") or {}), "serving.kserve.io/inferenceservice": name}
    yield PodTemplate(manifest, "spec.predictor", labels, spec)


def pod_templates(manifest: Mapping[str, Any]) -> Iterator[PodTemplate]:
    """Every pod template of ``manifest`` (a bare ``Pod`` is its own template, at path ``""``; a KServe
    InferenceService's predictor at ``spec.predictor``)."""
    kind = manifest.get("kind")
    if kind == "InferenceService":
        yield from _predictor(manifest)
        return
    if kind == "Pod":
        yield PodTemplate(manifest, "", manifest.get("metadata", {}).get("labels") or {}, manifest.get("spec") or {})
        return
    for dotted in POD_TEMPLATE_PATHS.get(str(kind), ()):
        for path, template in walk_path(manifest, dotted):
            if isinstance(template, Mapping):
                labels = (template.get("metadata") or {}).get("labels") or {}
                yield PodTemplate(manifest, path, labels, template.get("spec") or {})


def all_pod_templates(manifests: list[Mapping[str, Any]]) -> Iterator[PodTemplate]:
    for manifest in manifests:
        yield from pod_templates(manifest)


def projected_pod(
    namespace: str,
    name: str,
    labels: Mapping[str, str],
    spec: Mapping[str, Any],
    owner: str,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A bare ``Pod`` manifest an operator makes, with the ``annotations`` the operator gives it (default none) and
    annotated with the object it was made from (``inferstack.io/projected-from: Kind/ns/name``)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(labels),
            "annotations": {**(annotations or {}), "inferstack.io/projected-from": owner},
        },
        "spec": dict(spec),
    }
