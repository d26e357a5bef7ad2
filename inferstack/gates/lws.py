"""The pods the LeaderWorkerSet controller (kubernetes-sigs/lws v0.10.0) makes from a LeaderWorkerSet.

Rules, at v0.10.0 (``api/leaderworkerset/v1/leaderworkerset_types.go`` for the label and env names;
``pkg/utils/pod/pod_utils.go`` ``AddLWSVariables`` and ``pkg/webhooks/pod_webhook.go`` for what the pod webhook
adds; line numbers not read here — the same rules are reimplemented, and tested against LWS's expectations, in
volcano-sh/kthena's ``lws-standard-labels`` plugin):

* a leader StatefulSet ``<name>`` (one pod ``<name>-<group>`` per replica, from ``leaderTemplate``, or
  ``workerTemplate`` when there is none) and per group a worker StatefulSet ``<name>-<group>`` of ``size - 1`` pods
  ``<name>-<group>-<index>`` from ``workerTemplate``;
* every pod gets the labels ``leaderworkerset.sigs.k8s.io/name``, ``…/group-index``, ``…/worker-index`` (0 for the
  leader) and ``…/group-key``, hostname ``<name>-<group>[-<index>]`` and subdomain ``<name>`` (the headless Service
  of the same name);
* every container and init container gets ``LWS_LEADER_ADDRESS=<name>-<group>.<name>.<namespace>``,
  ``LWS_GROUP_SIZE`` and ``LWS_WORKER_INDEX``, prepended (replacing variables of the same names).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
GROUP_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/group-index"
WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
GROUP_KEY_LABEL = "leaderworkerset.sigs.k8s.io/group-key"


def _with_env(container: dict[str, Any], env: list[dict[str, str]]) -> dict[str, Any]:
    names = {e["name"] for e in env}
    kept = [e for e in container.get("env") or [] if e.get("name") not in names]
    return {**container, "env": [*env, *kept]}


def _pod(lws: Mapping[str, Any], template: Mapping[str, Any], group: int, index: int, size: int) -> dict[str, Any]:
    meta = lws.get("metadata") or {}
    name, namespace = str(meta.get("name")), str(meta.get("namespace") or "default")
    leader = f"{name}-{group}"
    hostname = leader if index == 0 else f"{leader}-{index}"
    env = [
        {"name": "LWS_LEADER_ADDRESS", "value": f"{leader}.{name}.{namespace}"},
        {"name": "LWS_GROUP_SIZE", "value": str(size)},
        {"name": "LWS_WORKER_INDEX", "value": str(index)},
    ]
    spec = copy.deepcopy(dict(template.get("spec") or {}))
    for field in ("containers", "initContainers"):
        if spec.get(field):
            spec[field] = [_with_env(c, env) for c in spec[field]]
    spec.update(hostname=hostname, subdomain=name)
    labels = {
        **((template.get("metadata") or {}).get("labels") or {}),
        NAME_LABEL: name,
        GROUP_INDEX_LABEL: str(group),
        WORKER_INDEX_LABEL: str(index),
        GROUP_KEY_LABEL: f"{namespace}/{leader}",
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": hostname,
            "namespace": namespace,
            "labels": labels,
            # the template's (its StatefulSet copies them; LWS adds its own, not modelled here)
            "annotations": {
                **((template.get("metadata") or {}).get("annotations") or {}),
                "inferstack.io/projected-from": f"LeaderWorkerSet/{namespace}/{name}",
            },
        },
        "spec": spec,
    }


def lws_pods(objects: Sequence[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """The leader and one worker of the first group of every LeaderWorkerSet (the other groups are the same)."""
    for lws in objects:
        if lws.get("kind") != "LeaderWorkerSet":
            continue
        template = (lws.get("spec") or {}).get("leaderWorkerTemplate") or {}
        size = int(template.get("size") or 1)
        worker = template.get("workerTemplate") or {}
        yield _pod(lws, template.get("leaderTemplate") or worker, 0, 0, size)
        if size > 1:
            yield _pod(lws, worker, 0, 1, size)
