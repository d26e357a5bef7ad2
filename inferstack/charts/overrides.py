"""Per-workload ``overrides``: a patch per rendered object, deep-merged into it and then validated against the
object's schema — core kinds against the Kubernetes OpenAPI of the cluster's version (kubernetes-validate, strict:
an unknown field is an error, as ``kubectl apply --validate=strict`` would say), custom resources against the
vendored CRD. Every problem is a config error naming ``workloads[i].overrides.<Kind>…``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cdk8s
import kubernetes_validate
from constructs import Construct

from inferstack.catalog.crds import is_custom_resource, validate_custom_resource
from inferstack.config.errors import ConfigError, Problem
from inferstack.constructs.custom_resource import deep_merge


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
        (target,) = matches
        merged = deep_merge(rendered[id(target)], dict(patch))
        errors = _schema_problems(merged, kubernetes_version)
        if errors:
            problems += [Problem(where, f"the merged {key} is not valid: {error}") for error in errors]
            continue
        for field, value in merged.items():
            if field not in ("apiVersion", "kind"):
                target.add_json_patch(cdk8s.JsonPatch.add(f"/{field}", value))
    if problems:
        raise ConfigError("overrides", problems)
