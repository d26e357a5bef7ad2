"""AIBrix v0.7.0's ModelAdapter load path, modelled from its source (vllm-project/aibrix ``c5465890``; ``MA/`` =
``pkg/controller/modeladapter/``), so a gate can say whether each adapter would load on the pods that run:

* **which pods**: Ready pods in the ModelAdapter's namespace that ``spec.podSelector.matchLabels`` select —
  ``matchExpressions`` are ignored (``MA/modeladapter_controller.go:556-578``); reconciles are triggered by pods that
  carry ``model.aibrix.ai/name`` and ``adapter.model.aibrix.ai/enabled: "true"`` (``:193-215``);
* **where**: ``http://<pod IP>:8000`` — the port is hard-coded, the ``model.aibrix.ai/port`` label is not read
  (``MA/utils.go:118-158``, ``:105-108``); through an ``aibrix-runtime`` sidecar only when the pod has a container of
  that name (``MA/lora_client.go:86``);
* **what**: ``GET /v1/models``, then ``POST /v1/load_lora_adapter`` with ``lora_path`` = the artifact, rewritten only
  for ``huggingface://`` (→ ``org/name``, which vLLM downloads from the Hub); any other scheme reaches vLLM unchanged
  and fails (``MA/lora_client.go:162-315``, ``MA/utils.go:49-69``);
* **vLLM's side**: the load endpoint exists only with ``--enable-lora`` and ``VLLM_ALLOW_RUNTIME_LORA_UPDATING`` set
  to ``1`` / ``true`` (any case) (``samples/adapter/base.yaml:38-48``; vLLM ``envs.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from inferstack.gates.pods import all_pod_templates

ENGINE_PORT = 8000
WATCH_LABELS = ("model.aibrix.ai/name", "adapter.model.aibrix.ai/enabled")
SIDECAR = "aibrix-runtime"


def _engine_problems(where: str, containers: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    listening = [c for c in containers if ENGINE_PORT in {p.get("containerPort") for p in c.get("ports") or []}]
    engine = listening[0] if listening else None
    if engine is None:
        yield f"{where}: no container listens on {ENGINE_PORT}, where the controller calls"
        return
    words = [*(engine.get("command") or []), *(engine.get("args") or [])]
    if "--enable-lora" not in words:
        yield f"{where}: {engine.get('name')} runs without --enable-lora"
    env = {e.get("name"): e.get("value") for e in engine.get("env") or []}
    if str(env.get("VLLM_ALLOW_RUNTIME_LORA_UPDATING", "")).lower() not in ("1", "true"):
        yield f"{where}: {engine.get('name')} lacks VLLM_ALLOW_RUNTIME_LORA_UPDATING=true (no /v1/load_lora_adapter)"


def adapter_load_problems(objects: Sequence[Mapping[str, Any]]) -> list[str]:
    """Why each ModelAdapter of ``objects`` would not load on the pods its selector finds (empty: every one loads)."""
    problems: list[str] = []
    templates = all_pod_templates(objects)
    for obj in objects:
        if obj.get("kind") != "ModelAdapter":
            continue
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        name, namespace = meta.get("name"), meta.get("namespace") or "default"
        owner = f"ModelAdapter {namespace}/{name}"
        url = str(spec.get("artifactURL") or "")
        if not (url.startswith("huggingface://") or url.startswith("/")):
            problems.append(f"{owner}: artifactURL {url!r} reaches vLLM unrewritten (only huggingface:// is)")
        selector = spec.get("podSelector") or {}
        if selector.get("matchExpressions"):
            problems.append(f"{owner}: podSelector.matchExpressions are ignored by the controller")
        labels = selector.get("matchLabels") or {}
        pods = [
            t
            for t in templates
            if t.namespace == namespace and labels and all(t.labels.get(k) == v for k, v in labels.items())
        ]
        if not pods:
            problems.append(f"{owner}: its podSelector {labels} selects no pod in {namespace}")
        for pod in pods:
            where = f"{owner} → {pod.ref}"
            if pod.labels.get(WATCH_LABELS[0]) is None or pod.labels.get(WATCH_LABELS[1]) != "true":
                problems.append(f"{where}: the controller watches only pods labelled {', '.join(WATCH_LABELS)}=true")
            containers = [c for field, c in pod.containers() if field == "containers"]
            if any(c.get("name") == SIDECAR for c in containers):
                continue  # the sidecar downloads and loads (its own path)
            problems += _engine_problems(where, containers)
    return problems
