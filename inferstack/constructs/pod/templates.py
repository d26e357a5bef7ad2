"""Where the pod templates sit inside each kind of workload object (core kinds and the operators' custom resources
inferstack renders), and a walk that returns them in place: what :mod:`inferstack.charts.pod_customization` edits
and :mod:`inferstack.gates.pods` reads."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

#: kind → paths (dotted; ``[]`` = every list item) of pod templates (objects with ``metadata`` + ``spec``)
#: inside that kind's manifest.
POD_TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec.template",),
    "StatefulSet": ("spec.template",),
    "DaemonSet": ("spec.template",),
    "ReplicaSet": ("spec.template",),
    "Job": ("spec.template",),
    "CronJob": ("spec.jobTemplate.spec.template",),
    "PodTemplate": ("template",),
    "LeaderWorkerSet": (
        "spec.leaderWorkerTemplate.leaderTemplate",
        "spec.leaderWorkerTemplate.workerTemplate",
    ),
    "RayService": (
        "spec.rayClusterConfig.headGroupSpec.template",
        "spec.rayClusterConfig.workerGroupSpecs[].template",
    ),
    "RayCluster": ("spec.headGroupSpec.template", "spec.workerGroupSpecs[].template"),
    # The operator completes each component's pod from it (container main; ports, probes and env merged in).
    "DynamoGraphDeployment": ("spec.components[].podTemplate",),
    "RayJob": (
        "spec.rayClusterSpec.headGroupSpec.template",
        "spec.rayClusterSpec.workerGroupSpecs[].template",
    ),
}


def walk_path(manifest: Mapping[str, Any], dotted: str) -> Iterator[tuple[str, Any]]:
    """``(path, node)`` of every node at ``dotted`` (e.g. ``spec.workerGroupSpecs[].template``) in ``manifest``,
    each node itself (not a copy), its path with the list indexes (``spec.workerGroupSpecs[1].template``)."""
    yield from _walk(manifest, dotted.split("."), "")


def _walk(node: Any, parts: list[str], path: str) -> Iterator[tuple[str, Any]]:
    if not parts:
        yield path, node
        return
    head, rest = parts[0], parts[1:]
    many = head.endswith("[]")
    key = head[:-2] if many else head
    if not isinstance(node, Mapping) or key not in node:
        return
    child = node[key]
    prefix = f"{path}.{key}" if path else key
    if many:
        for index, item in enumerate(child or ()):
            yield from _walk(item, rest, f"{prefix}[{index}]")
    else:
        yield from _walk(child, rest, prefix)
