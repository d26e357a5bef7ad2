"""Per-workload ``overrides``: a patch per rendered object, merged into it and then validated against the object's
schema — core kinds against the Kubernetes OpenAPI of the cluster's version (kubernetes-validate, strict: an unknown
field is an error, as ``kubectl apply --validate=strict`` would say), custom resources against the vendored CRD.
Every problem is a config error naming ``workloads[i].overrides.<Kind>…``.

Merge: mappings key by key; lists whose items all carry a ``name`` (containers, initContainers, env, volumes,
volumeMounts, ports) item by item on ``name``, the way ``kubectl``'s strategic merge does — so a patch adds one env
var without restating the container; any other value replaces. Fields other objects, the plan or the rules depend on
(names, namespaces, selectors, replica counts, group size) cannot be overridden: each names the config field that
owns it."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

import cdk8s
import kubernetes_validate
from constructs import Construct

from inferstack.catalog.crds import is_custom_resource, validate_custom_resource
from inferstack.config.errors import ConfigError, Problem
from inferstack.constructs.dynamo import graph_version_problems

#: Patch paths that would break what refers to the object or what the rules judged, with the config field to use.
PROTECTED: dict[tuple[str, ...], str] = {
    ("metadata", "name"): "the workload's name",
    ("metadata", "namespace"): "namespace",
    ("spec", "selector"): "nothing (the Service, PDB and monitors select the same labels)",
    ("spec", "replicas"): "replicas (or autoscaling)",
    ("spec", "leaderWorkerTemplate", "size"): "nodes",
}


def _named_items(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(i, dict) and "name" in i for i in value)


def merge(base: Any, patch: Any) -> Any:
    """``patch`` merged into a copy of ``base``: mappings key by key, lists of named items by ``name`` (new names
    appended), anything else replaced."""
    if isinstance(base, dict) and isinstance(patch, dict):
        merged = copy.deepcopy(base)
        for key, value in patch.items():
            merged[key] = merge(merged[key], value) if key in merged else copy.deepcopy(value)
        return merged
    if _named_items(base) and _named_items(patch):
        items = [copy.deepcopy(i) for i in base]
        index = {i["name"]: n for n, i in enumerate(items)}
        for item in patch:
            if item["name"] in index:
                items[index[item["name"]]] = merge(items[index[item["name"]]], item)
            else:
                items.append(copy.deepcopy(item))
        return items
    return copy.deepcopy(patch)


def _protected(patch: Mapping[str, Any]) -> tuple[str, str] | None:
    for path, owner in PROTECTED.items():
        node: Any = patch
        for step in path:
            if not isinstance(node, Mapping) or step not in node:
                break
            node = node[step]
        else:
            return ".".join(path), owner
    return None


def _objects(scope: Construct) -> list[cdk8s.ApiObject]:
    return [node for node in scope.node.find_all() if isinstance(node, cdk8s.ApiObject)]


def _schema_problems(obj: dict[str, Any], kubernetes_version: str) -> list[str]:
    if is_custom_resource(obj["apiVersion"], obj["kind"]):
        return validate_custom_resource(obj)
    try:
        kubernetes_validate.validate(obj, f"{kubernetes_version}.0", strict=True)
    except kubernetes_validate.ValidationError as exc:
        path = ".".join(str(p) for p in getattr(exc, "path", ()) or ())
        return [f"{path}: {exc.message}" if path else str(exc.message)]
    return []


#: Checks of a merged object beyond its schema: what its operator would silently do with it.
OPERATOR_CHECKS: dict[str, Callable[[Mapping[str, Any]], list[str]]] = {
    "DynamoGraphDeployment": graph_version_problems,
}


def _operator_problems(obj: Mapping[str, Any]) -> list[str]:
    check = OPERATOR_CHECKS.get(str(obj.get("kind")))
    return check(obj) if check else []


def apply_overrides(
    scope: Construct, overrides: Mapping[str, Mapping[str, Any]], path: str, kubernetes_version: str
) -> None:
    """Deep-merge ``overrides[key]`` into the object of ``scope`` that ``key`` names (``Kind`` or ``Kind/name``).

    :raises ConfigError: a key that names no object or several, a patch that changes ``apiVersion``/``kind``, or
        a merged object its schema rejects — each with the config path.
    """
    if not overrides:
        return
    objects = _objects(scope)
    rendered = {id(o): o.to_json() for o in objects}
    valid = sorted({o.kind for o in objects} | {f"{o.kind}/{o.name}" for o in objects})
    problems: list[Problem] = []
    claimed: dict[int, str] = {}
    for key, patch in overrides.items():
        where = f"{path}.{key}"
        kind, _, name = key.partition("/")
        matches = [o for o in objects if o.kind == kind and (not name or o.name == name)]
        if not matches:
            problems.append(Problem(where, f"this workload renders no such object — valid: {', '.join(valid)}"))
            continue
        if len(matches) > 1:
            names = ", ".join(sorted(f"{kind}/{o.name}" for o in matches))
            problems.append(Problem(where, f"the workload renders {len(matches)} {kind} objects — name one: {names}"))
            continue
        fixed = sorted(k for k in ("apiVersion", "kind") if k in patch)
        if fixed:
            problems.append(Problem(f"{where}.{fixed[0]}", "cannot be overridden — patch the object's fields"))
            continue
        protected = _protected(patch)
        if protected is not None:
            field, owner = protected
            problems.append(Problem(f"{where}.{field}", f"cannot be overridden — set {owner} instead"))
            continue
        (target,) = matches
        if id(target) in claimed:
            problems.append(Problem(where, f"names the same object as {claimed[id(target)]} — patch it once"))
            continue
        claimed[id(target)] = f"{path}.{key}"
        merged = merge(rendered[id(target)], dict(patch))
        errors = _schema_problems(merged, kubernetes_version) or _operator_problems(merged)
        if errors:
            problems += [Problem(where, f"the merged {key} is not valid: {error}") for error in errors]
            continue
        for field, value in merged.items():
            if field not in ("apiVersion", "kind"):
                target.add_json_patch(cdk8s.JsonPatch.add(f"/{field}", value))
    if problems:
        raise ConfigError("overrides", problems)
