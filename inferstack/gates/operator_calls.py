"""The connections operators open into the pods they (or we) made, read from the operators' sources at the pinned
versions — independent of the paths the kinds declare (:mod:`inferstack.plan.runtime_paths`), so a NetworkPolicy
gate can hold the generated policies to what the operators really do.

* **NIM operator v3.0.0**: ``GET http://<Service ClusterIP>:<expose.service.port>/v1/models`` (``/v1/metadata`` on
  404) from its pods once a NIMService's Deployment is rolled out; not Ready until it answers
  (``internal/controller/platform/standalone/nimservice.go:509-516,600-670``; ``internal/nimmodels/models.go``).
* **KubeRay v1.7.0**: the RayService controller calls the head's dashboard (8265: ``/api/serve/applications/``) and
  the Serve proxy's health (8000: ``/-/healthz``) (``ray-operator/controllers/ray/rayservice_controller.go:2014,
  2091-2094``).
* **AIBrix v0.7.0**: the adapter controller GETs ``/v1/models`` and POSTs ``/v1/load_lora_adapter`` on
  ``<pod IP>:8000`` (hard-coded) of every Ready pod in the ModelAdapter's namespace that its ``podSelector``'s
  ``matchLabels`` select (``pkg/controller/modeladapter/modeladapter_controller.go:556-578``, ``utils.go:118-158``,
  ``lora_client.go:47-49,162-315``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inferstack.catalog.kubernetes import AIBRIX_CONTROLLER_NAMESPACE as AIBRIX_NAMESPACE
from inferstack.catalog.kubernetes import KUBERAY_NAMESPACE, NIM_NAMESPACE

AIBRIX_ENGINE_PORT = 8000
RAY_DASHBOARD, RAY_SERVE = 8265, 8000


@dataclass(frozen=True)
class OperatorCall:
    """A connection from the pods of ``caller`` into the pods of ``namespace`` that ``pods`` (labels) select."""

    caller: str
    """The operator's namespace."""
    namespace: str
    pods: Mapping[str, str]
    port: int
    what: str


def _meta(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or "default"), str(meta["name"])


def nim_calls(objects: Sequence[Mapping[str, Any]]) -> Iterator[OperatorCall]:
    for obj in objects:
        if obj.get("kind") == "NIMService":
            namespace, name = _meta(obj)
            port = int((((obj.get("spec") or {}).get("expose") or {}).get("service") or {}).get("port") or 8000)
            yield OperatorCall(NIM_NAMESPACE, namespace, {"app": name}, port, "NIM operator: GET /v1/models")


def kuberay_calls(objects: Sequence[Mapping[str, Any]]) -> Iterator[OperatorCall]:
    for obj in objects:
        if obj.get("kind") == "RayService":
            namespace, name = _meta(obj)
            head = {"ray.io/node-type": "head"}
            yield OperatorCall(KUBERAY_NAMESPACE, namespace, head, RAY_DASHBOARD, f"KubeRay: {name} Serve apps")
            yield OperatorCall(KUBERAY_NAMESPACE, namespace, head, RAY_SERVE, f"KubeRay: {name} /-/healthz")


def aibrix_calls(objects: Sequence[Mapping[str, Any]]) -> Iterator[OperatorCall]:
    for obj in objects:
        if obj.get("kind") == "ModelAdapter":
            namespace, name = _meta(obj)
            selector = ((obj.get("spec") or {}).get("podSelector") or {}).get("matchLabels") or {}
            yield OperatorCall(
                AIBRIX_NAMESPACE, namespace, dict(selector), AIBRIX_ENGINE_PORT, f"AIBrix: load adapter {name}"
            )


def operator_calls(objects: Sequence[Mapping[str, Any]]) -> list[OperatorCall]:
    """Every modelled operator's calls into the pods of ``objects``."""
    return [*nim_calls(objects), *kuberay_calls(objects), *aibrix_calls(objects)]
