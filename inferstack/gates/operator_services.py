"""The Services operators make for the custom resources inferstack emits: the name, ports and selector by which a
client (a LiteLLM gateway, a benchmark) reaches the serving pods. Read from each operator's source at the pinned
version:

* **KubeRay v1.7.0**, RayService ``N``: ``N-serve-svc`` (ray-project/kuberay ``ray-operator/controllers/ray/utils/
  util.go:349-351``, built in ``common/service.go:181-296`` from the RayService's name — not with incremental
  upgrades, which inferstack does not turn on); one port per head-container port named ``serve`` or ``serve-*``, the
  port the container's (no targetPort: the same), and no Service at all when the head declares ports but none is
  named so (``service.go:217-230``); 8000 only when the head declares no ports (``getDefaultPorts``, 436-444).
  Selector ``ray.io/cluster`` (the active RayCluster) and ``ray.io/serve: "true"`` (200-205).
* **KServe v0.20.0**, InferenceService ``N`` in Standard (RawDeployment) mode: ``N-predictor`` (kserve/kserve
  ``pkg/constants/constants.go:799-804``); port 80 to the first container port, 8080 when the container declares
  none (``reconcilers/service/service_reconciler.go:117-158``); selector ``app: isvc.N-predictor`` (174-182). In
  Knative mode Knative Serving makes the predictor's Services (not modelled here).
* **NIM operator v3.0.0**, NIMService ``N``: ``N`` (NVIDIA/k8s-nim-operator ``api/apps/v1alpha1/nimservice_types.go:
  1270``; ``spec.expose.service.name`` is read nowhere at this tag); port ``spec.expose.service.port`` (default
  8000, 957-962) to the container port named ``api``, which has the same number (1282-1289, 1113-1116); selector
  ``app: N`` (244-252).
* **Dynamo 1.4.0**, DynamoGraphDeployment ``G``: per ``frontend`` component ``C``, ``G-<C lowercased, dots as
  hyphens>`` (ai-dynamo/dynamo ``deploy/operator/internal/dynamo/graph.go:746,756-757,956``); port 8000 named
  ``http`` to the container port ``http`` (908-914); selector the component type, the Dynamo namespace and the
  component's name (941-945). Read at wxsms/dynamo ``e147ceea`` (the commit before the 1.5.0 version bump: the
  ai-dynamo repository's snapshot could not be fetched), not at the v1.4.0 tag.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: KubeRay's port when the head container declares none (``utils/constant.go:110``).
KUBERAY_DEFAULT_SERVE_PORT = 8000
#: KServe's Service port and the container port it targets when the container declares none.
KSERVE_SERVICE_PORT, KSERVE_DEFAULT_CONTAINER_PORT = 80, 8080
NIM_DEFAULT_PORT = 8000
DYNAMO_FRONTEND_PORT = 8000


@dataclass(frozen=True)
class OperatorService:
    """A Service an operator makes for one of our objects."""

    namespace: str
    name: str
    ports: tuple[tuple[int, int], ...]
    """``(port, the pods' port)`` pairs."""
    selector: Mapping[str, str]
    owner: str
    """``Kind/namespace/name`` of the object it is made for."""


def _ray(obj: Mapping[str, Any], namespace: str, name: str) -> Iterator[OperatorService]:
    head = obj["spec"]["rayClusterConfig"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    declared = head.get("ports") or []
    serve = [p["containerPort"] for p in declared if p.get("name") == "serve" or p.get("name", "").startswith("serve-")]
    if declared and not serve:
        return  # the operator creates no serve Service and reports an error
    ports = serve or [KUBERAY_DEFAULT_SERVE_PORT]
    yield OperatorService(
        namespace=namespace,
        name=f"{name}-serve-svc",
        ports=tuple((p, p) for p in ports),
        selector={"ray.io/cluster": f"<active RayCluster of {name}>", "ray.io/serve": "true"},
        owner=f"RayService/{namespace}/{name}",
    )


def _kserve(obj: Mapping[str, Any], namespace: str, name: str) -> Iterator[OperatorService]:
    mode = (obj["metadata"].get("annotations") or {}).get("serving.kserve.io/deploymentMode", "Standard")
    if mode not in ("Standard", "RawDeployment"):
        return
    predictor = obj["spec"]["predictor"]
    container = predictor.get("model") or (predictor.get("containers") or [{}])[0]
    declared = [p["containerPort"] for p in container.get("ports") or []]
    target = declared[0] if declared else KSERVE_DEFAULT_CONTAINER_PORT
    service = f"{name}-{predictor['name']}-predictor" if predictor.get("name") else f"{name}-predictor"
    yield OperatorService(
        namespace=namespace,
        name=service,
        ports=((KSERVE_SERVICE_PORT, target), *((p, p) for p in declared[1:])),
        selector={"app": f"isvc.{service}"},
        owner=f"InferenceService/{namespace}/{name}",
    )


def _nim(obj: Mapping[str, Any], namespace: str, name: str) -> Iterator[OperatorService]:
    port = ((obj["spec"].get("expose") or {}).get("service") or {}).get("port") or NIM_DEFAULT_PORT
    yield OperatorService(
        namespace=namespace,
        name=name,
        ports=((port, port),),
        selector={"app": name},
        owner=f"NIMService/{namespace}/{name}",
    )


def _dynamo(obj: Mapping[str, Any], namespace: str, name: str) -> Iterator[OperatorService]:
    for component in obj["spec"].get("components") or []:
        if component.get("type") != "frontend":
            continue
        yield OperatorService(
            namespace=namespace,
            name=f"{name}-{component['name'].lower().replace('.', '-')}",
            ports=((DYNAMO_FRONTEND_PORT, DYNAMO_FRONTEND_PORT),),
            selector={"nvidia.com/dynamo-component-type": "frontend", "nvidia.com/dynamo-component": component["name"]},
            owner=f"DynamoGraphDeployment/{namespace}/{name}",
        )


_PROJECTIONS = {"RayService": _ray, "InferenceService": _kserve, "NIMService": _nim, "DynamoGraphDeployment": _dynamo}


def operator_services(objects: Sequence[Mapping[str, Any]]) -> list[OperatorService]:
    """The Services the operators make for ``objects``' custom resources."""
    found: list[OperatorService] = []
    for obj in objects:
        project = _PROJECTIONS.get(obj.get("kind", ""))
        if project is not None:
            metadata = obj["metadata"]
            found.extend(project(obj, metadata.get("namespace", "default"), metadata["name"]))
    return found
