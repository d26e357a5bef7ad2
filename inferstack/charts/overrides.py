"""Per-workload ``overrides``: a patch per rendered object, merged into it and then validated against the object's
schema — core kinds against the Kubernetes OpenAPI of the cluster's version (kubernetes-validate, strict: an unknown
field is an error, as ``kubectl apply --validate=strict`` would say), custom resources against the vendored CRD.
Every problem is a config error naming ``workloads[i].overrides.<Kind>…``.

Merge: mappings key by key; lists whose items all carry a ``name`` (containers, initContainers, env, volumes,
volumeMounts, ports) item by item on ``name``, the way ``kubectl``'s strategic merge does — so a patch adds one env
var without restating the container; any other value replaces. Fields other objects, the plan or the rules depend on
(names, namespaces, selectors, replica counts, group size) cannot be overridden: each names the config field that
owns it.

Refused (:mod:`inferstack.charts.override_refusals`): exposure (a Service type LoadBalancer or NodePort,
``externalIPs``) and identity (a pod's ServiceAccount, its API token) unless ``override_acknowledgements`` gives the
reason for that path; what Pod Security baseline refuses at admission, and a label a rendered selector uses, always.
An acknowledgement that no refusal needs is itself an error."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

import cdk8s
import kubernetes_validate
from constructs import Construct

from inferstack.catalog.crds import is_custom_resource, validate_custom_resource
from inferstack.charts.override_refusals import (
    ACKNOWLEDGEMENTS,
    Ground,
    Refusal,
    format_steps,
    named_items,
    nodes,
    pod_selectors,
    refusals,
)
from inferstack.charts.rendered import set_rendered
from inferstack.config.errors import ConfigError, Problem
from inferstack.constructs.batch import content_name
from inferstack.constructs.dynamo import graph_version_problems
from inferstack.constructs.pod.templates import POD_TEMPLATE_PATHS, walk_path

#: Patch paths that would break what refers to the object or what the rules judged, with the config field to use.
PROTECTED: dict[tuple[str, ...], str] = {
    ("metadata", "name"): "the workload's name",
    ("metadata", "namespace"): "namespace",
    ("spec", "selector"): "nothing (the Service, PDB and monitors select the same labels)",
    ("spec", "replicas"): "replicas (or autoscaling)",
    ("spec", "leaderWorkerTemplate", "size"): "nodes",
    # an InferencePool's: the picker scrapes and routes to these ports on the selected pods (the serving port)
    ("spec", "targetPorts"): "nothing (the router reaches the port the workload serves on)",
}


def merge(base: Any, patch: Any) -> Any:
    """``patch`` merged into a copy of ``base``: mappings key by key, lists of named items by ``name`` (new names
    appended), anything else replaced."""
    if isinstance(base, dict) and isinstance(patch, dict):
        merged = copy.deepcopy(base)
        for key, value in patch.items():
            merged[key] = merge(merged[key], value) if key in merged else copy.deepcopy(value)
        return merged
    if named_items(base) and named_items(patch):
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


#: A Kubernetes Probe's handlers: the API server accepts exactly one per probe (core/v1 validation
#: ``validateHandler``: "may not specify more than 1 handler type"), and the schema check cannot say so.
PROBE_HANDLERS = ("httpGet", "tcpSocket", "exec", "grpc")
PROBE_FIELDS = ("readinessProbe", "livenessProbe", "startupProbe")


def _probe_problems(obj: Mapping[str, Any]) -> list[str]:
    """Probes of ``obj``'s pod templates (and a NIMService's) that carry two handlers — an override merging
    ``httpGet`` into the ``exec`` or ``tcpSocket`` probe ``probes.handler`` rendered."""
    probes: list[tuple[str, Mapping[str, Any]]] = []
    if obj.get("kind") == "NIMService":
        spec = obj.get("spec") or {}
        probes += [(f, (spec.get(f) or {}).get("probe") or {}) for f in PROBE_FIELDS]
    for dotted in POD_TEMPLATE_PATHS.get(str(obj.get("kind")), ()):
        for _, template in walk_path(obj, dotted):
            pod = (template or {}).get("spec") or {}
            for container in [*(pod.get("containers") or []), *(pod.get("initContainers") or [])]:
                probes += [
                    (f"{f} of container {container.get('name')!r}", container.get(f) or {}) for f in PROBE_FIELDS
                ]
    found = []
    for where, probe in probes:
        handlers = [h for h in PROBE_HANDLERS if isinstance(probe, Mapping) and h in probe]
        if len(handlers) > 1:
            found.append(
                f"{where} has {' and '.join(handlers)}: the API server takes one handler per probe — choose the "
                "handler with workloads[i].probes (handler: http, tcp or exec) and leave it out of the override"
            )
    return found


def _operator_problems(obj: Mapping[str, Any]) -> list[str]:
    check = OPERATOR_CHECKS.get(str(obj.get("kind")))
    return check(obj) if check else []


#: Why a refusal of these grounds has no acknowledgement.
_UNACKNOWLEDGEABLE = {
    Ground.POD_SECURITY: "Pod Security baseline refuses the pod at admission whatever the reason; change the override",
    Ground.SELECTOR: "a selector that no longer matches its pods is broken whatever the reason; keep the label",
}


def _acknowledgement_problems(
    overrides: Mapping[str, Mapping[str, Any]],
    acknowledgements: Mapping[str, str],
    where: str,
    refused: Mapping[str, Refusal],
    judged: set[str],
) -> list[Problem]:
    """An acknowledgement of a path no override sets, of one no refusal needs, or of one that cannot be."""
    set_paths = {format_steps((key, *n.steps)) for key, patch in overrides.items() for n in nodes(patch, None, None)}
    wanting = sorted(p for p, r in refused.items() if r.ground.acknowledgeable and p not in acknowledgements)
    problems: list[Problem] = []
    for acknowledged in acknowledgements:
        refusal = refused.get(acknowledged)
        owner = max(
            (k for k in overrides if acknowledged == k or acknowledged.startswith(f"{k}.")), key=len, default=""
        )
        if refusal is not None and refusal.ground.acknowledgeable:
            continue
        if refusal is not None:
            message = f"cannot be acknowledged — {_UNACKNOWLEDGEABLE[refusal.ground]}"
        elif owner and owner not in judged:
            continue  # its override has problems of its own to fix first
        elif acknowledged in set_paths:
            message = (
                "needs no acknowledgement — only an override that exposes the workload (a Service type LoadBalancer "
                "or NodePort, externalIPs) or changes its pods' identity (serviceAccountName, serviceAccount, "
                "automountServiceAccountToken: true) does; remove it"
            )
        else:
            valid = f"acknowledge {', '.join(wanting)}" if wanting else "remove it"
            message = f"no override sets this path — {valid}"
        problems.append(Problem(f"{where}.{acknowledged}", message))
    return problems


def apply_overrides(
    scope: Construct,
    overrides: Mapping[str, Mapping[str, Any]],
    path: str,
    kubernetes_version: str,
    *,
    acknowledgements: Mapping[str, str] | None = None,
    router: str | None = None,
) -> None:
    """Deep-merge ``overrides[key]`` into the object of ``scope`` that ``key`` names (``Kind`` or ``Kind/name``).

    :param path: the config path of ``overrides``, e.g. ``workloads[0].overrides``.
    :param acknowledgements: the same workload's ``override_acknowledgements`` (a path relative to ``overrides`` →
        why); their problems are named beside ``path``. Default none.
    :param router: the name of the workload's router (``routing``), whose replicas ``routing.replicas`` sets.
        Default none.
    :raises ConfigError: a key that names no object or several, a patch that changes ``apiVersion``/``kind``, a
        merged object its schema rejects, a value :mod:`~inferstack.charts.override_refusals` refuses (and no
        acknowledgement accepts), an acknowledgement that no refusal needs — each with the config path.
    """
    acknowledgements = acknowledgements or {}
    if not overrides and not acknowledgements:
        return
    objects = _objects(scope)
    rendered = {id(o): o.to_json() for o in objects}
    selectors = pod_selectors(rendered.values())
    valid = sorted({o.kind for o in objects} | {f"{o.kind}/{o.name}" for o in objects})
    problems: list[Problem] = []
    claimed: dict[int, str] = {}
    refused: dict[str, Refusal] = {}
    judged: set[str] = set()
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
            if router is not None and len(matches) == 1 and matches[0].name == router and field == "spec.replicas":
                owner = "routing.replicas"  # the router's Deployment, not the workload's
            problems.append(Problem(f"{where}.{field}", f"cannot be overridden — set {owner} instead"))
            continue
        (target,) = matches
        if id(target) in claimed:
            problems.append(Problem(where, f"names the same object as {claimed[id(target)]} — patch it once"))
            continue
        claimed[id(target)] = f"{path}.{key}"
        merged = merge(rendered[id(target)], dict(patch))
        errors = _schema_problems(merged, kubernetes_version) or _operator_problems(merged) or _probe_problems(merged)
        if errors:
            problems += [Problem(where, f"the merged {key} is not valid: {error}") for error in errors]
            continue
        judged.add(key)
        found = refusals(target.kind, patch, merged, rendered[id(target)], selectors)
        refused.update({f"{key}.{r.path}": r for r in found})
        unaccepted = [r for r in found if not (r.ground.acknowledgeable and f"{key}.{r.path}" in acknowledgements)]
        if unaccepted:
            problems += [Problem(f"{where}.{r.path}", r.message(key)) for r in unaccepted]
            continue
        before = rendered[id(target)]
        if target.kind == "Job" and before["metadata"]["name"] != target.name and merged["spec"] != before["spec"]:
            # a content-named Job (constructs.batch.script_job): its pod template is immutable, so a template the
            # override changed is a new Job — named from the old name and the merged spec, stable across deploys
            merged["metadata"]["name"] = content_name(target.name, before["metadata"]["name"], merged["spec"])
        set_rendered(target, merged)
    parent = path.rpartition(".")[0]
    where = f"{parent}.{ACKNOWLEDGEMENTS}" if parent else ACKNOWLEDGEMENTS
    problems += _acknowledgement_problems(overrides, acknowledgements, where, refused, judged)
    if problems:
        raise ConfigError("overrides", problems)
