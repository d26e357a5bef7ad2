"""Setting what a rendered object renders: the one way an edit of its JSON (overrides, a workload's ``pod`` and
``probes``) goes back into a chart.

A typed cdk8s-plus object (``k8s.KubeDeployment``, ``KubeService``…) renders by re-serializing its props through its
converter (``toJson_KubeDeploymentProps``), which reads an IntOrString or a Quantity as an object (``obj.port?.value``)
and some keys under their props names (``hostIPC`` is ``hostIpc``): a JSON patch holding rendered JSON loses them —
container ports, probe ports, CPU, memory and GPU requests and limits (cdk8s-plus-36 2.0.3 ``lib/imports/k8s.js``,
``toJson_HttpGetAction``). Such an object is replaced, at the same construct id, by a plain ``ApiObject`` that renders
the JSON as given; a plain one (a custom resource) is patched in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cdk8s


def typed(obj: cdk8s.ApiObject) -> bool:
    """Whether ``obj`` re-serializes its JSON through a cdk8s-plus props converter (a ``k8s.Kube…`` object)."""
    return type(obj).__module__.startswith("cdk8s_plus_")


def set_rendered(obj: cdk8s.ApiObject, rendered: Mapping[str, Any]) -> cdk8s.ApiObject:
    """Make ``obj`` render exactly ``rendered`` (its own ``to_json()`` after an edit, same ``apiVersion``, ``kind``
    and name); return the object that now does (``obj``, or its plain replacement, with its dependencies carried
    over). An object that depended on ``obj`` needs nothing: cdk8s orders a chart's objects by a dependency graph
    whose vertices are found by construct path (cdk8s 2.70.115 ``lib/dependency.js`` ``getVertex``), and the
    replacement has the same path."""
    fields = {key: value for key, value in rendered.items() if key not in ("apiVersion", "kind")}
    if not typed(obj):
        for key, value in fields.items():
            obj.add_json_patch(cdk8s.JsonPatch.add(f"/{key}", value))
        return obj
    parent, construct_id = obj.node.scope, obj.node.id
    assert parent is not None, "a rendered object always sits in a chart"
    dependencies = list(obj.node.dependencies)
    parent.node.try_remove_child(construct_id)
    meta = rendered.get("metadata") or {}
    plain = cdk8s.ApiObject(
        parent,
        construct_id,
        api_version=str(rendered["apiVersion"]),
        kind=str(rendered["kind"]),
        metadata=cdk8s.ApiObjectMetadata(name=meta.get("name"), namespace=meta.get("namespace")),
    )
    for key, value in fields.items():
        plain.add_json_patch(cdk8s.JsonPatch.add(f"/{key}", value))
    for dependency in dependencies:
        plain.node.add_dependency(dependency)
    return plain
