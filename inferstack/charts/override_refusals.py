"""What an ``override`` may set only with a reason, and what it may not set at all (issue 24 §7).

Each check is a pure function of one object's patch read together with the merged and the rendered object
(:func:`nodes`: every path of the patch, with what the merge made of it and what was rendered there); a
:class:`Refusal` names the patch's own path:

* **exposure** — acknowledgeable: a Service ``type`` (KubeRay's ``serviceType``, NIM's ``expose.service.type``)
  of ``LoadBalancer`` or ``NodePort``; ``externalIPs``.
* **identity** — acknowledgeable: in a pod spec, a ``serviceAccountName`` or ``serviceAccount`` other than the
  rendered account, or ``automountServiceAccountToken: true``.
* **Pod Security** — never: what Pod Security ``baseline`` (the level inferstack labels its workload namespaces
  with) refuses at admission — every baseline check of policy ``latest``: host namespaces, ``privileged``,
  capabilities beyond the baseline set, hostPath volumes, hostPorts, probe and hook hosts, AppArmor, SELinux,
  ``procMount``, seccomp, sysctls, Windows host processes. The runtime may not import
  :mod:`inferstack.gates.pod_security`; ``tests/charts/test_override_refusals.py`` holds the two to the same
  verdicts on upstream's fixtures.
* **selector** — never: a pod template label that a selector of the rendered objects (a Service, the controller's
  own, a PodDisruptionBudget, a PodMonitor, a pod affinity) matched and would no longer match.

A pod spec is found by its shape — a mapping with ``containers`` (Deployment, StatefulSet, Job, LeaderWorkerSet,
Ray head and worker groups, Dynamo components) — or is a KServe component (``spec.predictor``, whose ``model`` is
a container). Paths are written as the config errors write them: ``spec.template.spec.containers[0].ports``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

Step = str | int

#: Capabilities Pod Security baseline lets a container add (``check_capabilities_baseline.go``).
BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP",
        "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
    }
)  # fmt: skip
#: Sysctls baseline allows (``check_sysctls.go``, policy 1.32+).
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.ip_unprivileged_port_start", "net.ipv4.ping_group_range", "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_rmem", "net.ipv4.tcp_syncookies", "net.ipv4.tcp_wmem",
    }
)  # fmt: skip
#: SELinux types baseline allows (``""``: not set).
SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})
#: seccomp and AppArmor profile types baseline allows.
CONFINED_PROFILE_TYPES = frozenset({"RuntimeDefault", "Localhost"})
APPARMOR_ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
#: Service types that reach the workload from outside the cluster.
EXPOSED_SERVICE_TYPES = frozenset({"LoadBalancer", "NodePort"})

_CONTAINER_LISTS = frozenset({"initContainers", "containers", "ephemeralContainers"})
_PROBES = frozenset({"livenessProbe", "readinessProbe", "startupProbe"})
_HOOKS = frozenset({"postStart", "preStop"})
_HANDLERS_WITH_HOST = frozenset({"httpGet", "tcpSocket"})
_HOST_NAMESPACES = {"hostNetwork": "network", "hostPID": "process (PID)", "hostIPC": "IPC"}
#: KServe components that inline a PodSpec (``model``, when there is one, is their first container).
_KSERVE_COMPONENTS = frozenset(
    (*c, *w)
    for c in (("spec", "predictor"), ("spec", "transformer"), ("spec", "explainer"))
    for w in ((), ("workerSpec",))
)
#: Where a rendered object's selector of pods sits; kinds whose ``selector`` selects something else are left out.
_SELECTOR_KEYS = frozenset({"selector", "podSelector", "labelSelector"})
_SELECTS_NO_PODS = frozenset({"PersistentVolumeClaim", "ServiceMonitor"})
#: Reached by a key of ``override_acknowledgements`` (the config field that carries the reasons).
ACKNOWLEDGEMENTS = "override_acknowledgements"


class Ground(StrEnum):
    """Why an override is refused; exposure and identity may be acknowledged with a reason, the others never."""

    EXPOSURE = "exposure"
    IDENTITY = "identity"
    POD_SECURITY = "Pod Security"
    SELECTOR = "selector"

    @property
    def acknowledgeable(self) -> bool:
        return self in (Ground.EXPOSURE, Ground.IDENTITY)


@dataclass(frozen=True)
class Refusal:
    """One value an override sets that this list refuses."""

    ground: Ground
    path: str
    """In the object's patch, e.g. ``spec.template.spec.hostNetwork``."""
    value: Any
    what: str
    """What the value does."""
    fix: str
    """What to set instead."""
    check: str | None = None
    """Pod Security: the upstream check id (``hostNamespaces``, ``capabilities_baseline``…)."""

    def message(self, key: str) -> str:
        """The problem's text for the override ``key`` (``Deployment``, ``Service/w``…)."""
        shown = f"{_show(self.value)} — {self.what}"
        if self.ground is Ground.POD_SECURITY:
            return (
                f"{shown}: Pod Security baseline, the level inferstack's workload namespaces enforce, refuses the pod "
                f"at admission — {self.fix}; this cannot be acknowledged"
            )
        if self.ground is Ground.SELECTOR:
            return f"{shown} — {self.fix}; this cannot be acknowledged"
        example = json.dumps({f"{key}.{self.path}": "<why>"})
        return f"{shown} — {self.fix}, or acknowledge it: {ACKNOWLEDGEMENTS}: {example}"


@dataclass(frozen=True)
class Node:
    """One path of a patch, with what the merge made of it and what was rendered there (``None``: nothing)."""

    steps: tuple[Step, ...]
    patch: Any
    merged: Any
    rendered: Any

    @property
    def path(self) -> str:
        return format_steps(self.steps)


@dataclass(frozen=True)
class Selector:
    """A selector of pods in a rendered object."""

    owner: str
    """``Kind/name path``, e.g. ``Service/w spec.selector``."""
    labels: Mapping[str, str]
    expressions: tuple[Mapping[str, Any], ...] = ()

    def matches(self, labels: Mapping[str, Any]) -> bool:
        if any(labels.get(key) != value for key, value in self.labels.items()):
            return False
        return all(_requirement_met(expression, labels) for expression in self.expressions)

    def requirement(self, key: str) -> str:
        """What it asks of label ``key``, e.g. ``app.kubernetes.io/component=vllm``."""
        if key in self.labels:
            return f"{key}={self.labels[key]}"
        parts = [_describe(e) for e in self.expressions if e.get("key") == key]
        return ", ".join(parts) or key


def format_steps(steps: Iterable[Step]) -> str:
    out = ""
    for step in steps:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def named_items(value: Any) -> bool:
    """A list the merge matches item by item on ``name`` (containers, env, volumes, ports…)."""
    return isinstance(value, list) and bool(value) and all(isinstance(i, dict) and "name" in i for i in value)


def _child(node: Any, step: Step) -> Any:
    if isinstance(step, str):
        return node.get(step) if isinstance(node, Mapping) else None
    return node[step] if isinstance(node, list) and step < len(node) else None


def _by_name(items: Any, name: Any) -> Any:
    return (
        next((i for i in items if isinstance(i, dict) and i.get("name") == name), None) if named_items(items) else None
    )


def nodes(patch: Any, merged: Any, rendered: Any, steps: tuple[Step, ...] = ()) -> Iterator[Node]:
    """Every path of ``patch`` (itself first), paired the way :func:`~inferstack.charts.overrides.merge` pairs them:
    mappings key by key, lists of named items by ``name``, any other list item by position."""
    yield Node(steps, patch, merged, rendered)
    if isinstance(patch, dict):
        for key, value in patch.items():
            yield from nodes(value, _child(merged, key), _child(rendered, key), (*steps, key))
    elif isinstance(patch, list):
        by_name = named_items(rendered) and named_items(patch)
        for index, item in enumerate(patch):
            if by_name:
                yield from nodes(
                    item, _by_name(merged, item["name"]), _by_name(rendered, item["name"]), (*steps, index)
                )
            else:
                yield from nodes(item, _child(merged, index), _child(rendered, index), (*steps, index))


def _show(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


# --------------------------------------------------------------------------------------------------------------
# Pod specs
# --------------------------------------------------------------------------------------------------------------


def _is_pod_spec(kind: str, node: Node) -> bool:
    if not isinstance(node.merged, Mapping):
        return False
    return isinstance(node.merged.get("containers"), list) or (
        kind == "InferenceService" and node.steps in _KSERVE_COMPONENTS
    )


def _is_pod_template(node: Node) -> bool:
    """A mapping with ``metadata`` and a pod ``spec`` (a Deployment's ``spec.template``, a Ray group's…)."""
    return isinstance(_mapping(_mapping(node.merged).get("spec")).get("containers"), list)


def _pod_specs(kind: str, found: list[Node]) -> Iterator[tuple[Node, list[tuple[tuple[Step, ...], Node]]]]:
    """Each pod spec the patch reaches, with the patch's nodes inside it (their steps relative to the pod spec)."""
    for pod in found:
        if _is_pod_spec(kind, pod):
            depth = len(pod.steps)
            inside = [(n.steps[depth:], n) for n in found if n.steps[:depth] == pod.steps and len(n.steps) > depth]
            yield pod, inside


def _container_steps(kind: str, pod: Node, rel: tuple[Step, ...]) -> tuple[Step, ...] | None:
    """``rel`` inside a container (``containers[0].securityContext`` → ``securityContext``), or None."""
    if len(rel) >= 2 and rel[0] in _CONTAINER_LISTS and isinstance(rel[1], int):
        return rel[2:]
    if kind == "InferenceService" and pod.steps in _KSERVE_COMPONENTS and rel[:1] == ("model",):
        return rel[1:]
    return None


# --------------------------------------------------------------------------------------------------------------
# Exposure and identity
# --------------------------------------------------------------------------------------------------------------


def exposure(found: Iterable[Node]) -> Iterator[Refusal]:
    """A Service type that reaches the workload from outside the cluster, or ``externalIPs``."""
    for node in found:
        last = node.steps[-1] if node.steps else None
        if last in ("type", "serviceType") and node.patch in EXPOSED_SERVICE_TYPES:
            what = "makes the Service reachable from outside the cluster (NodePort: a port on every node; "
            what += "LoadBalancer: an AWS load balancer)"
            fix = "keep ClusterIP and reach the workload through a gateway (kind: litellm) or kubectl port-forward"
            yield Refusal(Ground.EXPOSURE, node.path, node.patch, what, fix)
        elif last == "externalIPs" and node.patch:
            what = "routes traffic for these addresses to the Service from every node and pod of the cluster "
            what += "(CVE-2020-8554: any address, someone else's included)"
            yield Refusal(Ground.EXPOSURE, node.path, node.patch, what, "remove it")


def identity(kind: str, found: list[Node]) -> Iterator[Refusal]:
    """A pod spec's ServiceAccount changed, or its API token mounted."""
    for pod, inside in _pod_specs(kind, found):
        account = _mapping(pod.rendered).get("serviceAccountName")
        for rel, node in inside:
            if rel in (("serviceAccountName",), ("serviceAccount",)) and node.patch != account:
                mine = repr(account) if account else "the one inferstack leaves to the namespace or the operator"
                what = f"runs the pods as another ServiceAccount than {mine}, with that account's roles"
                what += " (inferstack binds its own to a role that reaches only this workload's model)"
                fix = "leave it to inferstack (service_account names the serving pods' account)"
                yield Refusal(Ground.IDENTITY, node.path, node.patch, what, fix)
            elif rel == ("automountServiceAccountToken",) and node.patch is True and node.rendered is not True:
                what = "mounts a Kubernetes API token into every pod (inferstack renders false)"
                yield Refusal(Ground.IDENTITY, node.path, node.patch, what, "remove it")


# --------------------------------------------------------------------------------------------------------------
# Pod Security baseline
# --------------------------------------------------------------------------------------------------------------


def _baseline(check: str, node: Node, what: str, fix: str, path: str | None = None) -> Refusal:
    return Refusal(Ground.POD_SECURITY, path or node.path, node.merged, what, fix, check)


def _security_context(rel: tuple[Step, ...], node: Node, pod: Node, container: bool) -> Iterator[Refusal]:
    """A pod's or a container's ``securityContext`` field (``rel`` inside it)."""
    value = node.merged
    match rel:
        case ("windowsOptions", "hostProcess") if value is True:
            yield _baseline("windowsHostProcess", node, "runs as a Windows host process", "remove hostProcess")
        case ("seLinuxOptions",) if value is not None:
            options = _mapping(value)
            kind = str(options.get("type") or "")
            if kind not in SELINUX_TYPES:
                allowed = ", ".join(sorted(t for t in SELINUX_TYPES if t))
                what, fix = f"sets SELinux type {kind!r}", f"use one of {allowed} (or leave type unset)"
                yield _baseline("seLinuxOptions", node, what, fix, f"{node.path}.type")
            for field in ("user", "role"):
                if options.get(field):
                    what, fix = f"sets SELinux {field} {options[field]!r}", f"remove seLinuxOptions.{field}"
                    yield _baseline("seLinuxOptions", node, what, fix, f"{node.path}.{field}")
        case ("seccompProfile" | "appArmorProfile" as field,) if value is not None:
            kind = str(_mapping(value).get("type") or "")
            if kind not in CONFINED_PROFILE_TYPES:
                check = "seccompProfile_baseline" if field == "seccompProfile" else "appArmorProfile"
                what, fix = f"sets {field} type {kind!r}", "use RuntimeDefault or Localhost (or leave it unset)"
                yield _baseline(check, node, what, fix, f"{node.path}.type")
        case ("sysctls", int(), "name") if not container and value not in SAFE_SYSCTLS:
            what = f"sets sysctl {value!r}, outside the safe set ({', '.join(sorted(SAFE_SYSCTLS))})"
            yield _baseline("sysctls", node, what, "tune it on the node instead")
        case ("privileged",) if container and value is True:
            yield _baseline("privileged", node, "runs the container privileged", "remove privileged")
        case ("procMount",) if container and value not in (None, "Default"):
            if _mapping(pod.merged).get("hostUsers") is not False:  # a user namespace relaxes it
                what, fix = f"sets procMount {value!r}", "remove procMount, or run the pod with hostUsers: false"
                yield _baseline("procMount", node, what, fix)
        case ("capabilities", "add") if container:
            extra = sorted({str(c) for c in value or ()} - BASELINE_CAPABILITIES)
            if extra:
                what = f"adds {', '.join(extra)}, beyond the baseline set ({', '.join(sorted(BASELINE_CAPABILITIES))})"
                yield _baseline("capabilities_baseline", node, what, f"drop {', '.join(extra)}")
        case _:
            pass


def _container(rel: tuple[Step, ...], node: Node, pod: Node) -> Iterator[Refusal]:
    """A container's field (``rel`` inside the container)."""
    value = node.merged
    match rel:
        case ("securityContext", *inside):
            yield from _security_context(tuple(inside), node, pod, container=True)
        case ("ports", int(), "hostPort") if value:
            what, fix = "binds a port of the node", "remove hostPort and reach the container through its Service"
            yield _baseline("hostPorts", node, what, fix)
        case (probe, handler, "host") if probe in _PROBES and handler in _HANDLERS_WITH_HOST and value:
            what, fix = f"points the {probe} at another host", "remove host (the probe then targets the pod)"
            yield _baseline("hostProbesAndHostLifecycle", node, what, fix)
        case ("lifecycle", hook, handler, "host") if hook in _HOOKS and handler in _HANDLERS_WITH_HOST and value:
            what, fix = f"points the {hook} hook at another host", "remove host (the hook then targets the pod)"
            yield _baseline("hostProbesAndHostLifecycle", node, what, fix)
        case _:
            pass


def pod_security(kind: str, found: list[Node]) -> Iterator[Refusal]:
    """What Pod Security baseline refuses, in every pod spec the patch reaches and its template's annotations."""
    by_steps = {n.steps: n for n in found}
    for pod, inside in _pod_specs(kind, found):
        for rel, node in inside:
            value = node.merged
            inner = _container_steps(kind, pod, rel)
            if inner is not None:
                yield from _container(inner, node, pod)
                continue
            match rel:
                case ("hostNetwork" | "hostPID" | "hostIPC" as field,) if value is True:
                    what = f"shares the node's {_HOST_NAMESPACES[field]} namespace"
                    yield _baseline("hostNamespaces", node, what, f"remove {field}")
                case ("volumes", int(), "hostPath") if value is not None:
                    what = f"mounts the node's {_mapping(value).get('path')!r}"
                    fix = "use an emptyDir, persistentVolumeClaim, CSI or ephemeral volume"
                    yield _baseline("hostPathVolumes", node, what, fix)
                case ("securityContext", *field):
                    yield from _security_context(tuple(field), node, pod, container=False)
                case _:
                    pass
    for node in found:  # a pod template's AppArmor annotations
        if node.steps[-3:-1] != ("metadata", "annotations") or not _is_pod_template(by_steps[node.steps[:-3]]):
            continue
        key, text = str(node.steps[-1]), "" if node.merged is None else str(node.merged)
        confined = text in ("", "runtime/default") or text.startswith("localhost/")
        if key.startswith(APPARMOR_ANNOTATION_PREFIX) and not confined:
            what, fix = "selects an unconfined AppArmor profile", "use runtime/default or localhost/<profile>"
            yield _baseline("appArmorProfile", node, what, fix)


# --------------------------------------------------------------------------------------------------------------
# Labels that selectors use
# --------------------------------------------------------------------------------------------------------------


def _requirement_met(expression: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    key, operator, values = expression.get("key"), expression.get("operator"), expression.get("values") or ()
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return False


def _describe(expression: Mapping[str, Any]) -> str:
    values = ", ".join(map(str, expression.get("values") or ()))
    return f"{expression.get('key')} {expression.get('operator')}" + (f" ({values})" if values else "")


def _selector(owner: str, value: Any) -> Selector | None:
    if not isinstance(value, Mapping) or not value:
        return None
    if "matchLabels" in value or "matchExpressions" in value:
        expressions = tuple(e for e in value.get("matchExpressions") or () if isinstance(e, Mapping))
        selector = Selector(owner, dict(_mapping(value.get("matchLabels"))), expressions)
        return selector if selector.labels or selector.expressions else None
    return Selector(owner, dict(value)) if all(isinstance(v, str) for v in value.values()) else None


def pod_selectors(objects: Iterable[Mapping[str, Any]]) -> list[Selector]:
    """Every selector of pods in ``objects`` (rendered manifests): a ``selector``, ``podSelector`` or
    ``labelSelector`` anywhere in them, but for kinds whose selector selects something else than pods."""
    found: list[Selector] = []

    def walk(node: Any, steps: tuple[Step, ...], ref: str) -> None:
        if isinstance(node, Mapping):
            for key, value in node.items():
                selector = _selector(f"{ref} {format_steps((*steps, key))}", value) if key in _SELECTOR_KEYS else None
                if selector is not None:
                    found.append(selector)
                else:
                    walk(value, (*steps, key), ref)
        elif isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, (*steps, index), ref)

    for obj in objects:
        if obj.get("kind") not in _SELECTS_NO_PODS:
            walk(obj, (), f"{obj.get('kind')}/{_mapping(obj.get('metadata')).get('name')}")
    return found


def _labels(template: Any) -> Mapping[str, Any]:
    return _mapping(_mapping(_mapping(template).get("metadata")).get("labels"))


def selector_labels(found: list[Node], selectors: Iterable[Selector]) -> Iterator[Refusal]:
    """A pod template label that a rendered selector matched and would no longer match."""
    by_steps = {n.steps: n for n in found}
    selectors = list(selectors)
    for template in found:
        if "metadata" not in _mapping(template.patch) or not _is_pod_template(template):
            continue
        before, after = _labels(template.rendered), _labels(template.merged)
        broken = [s for s in selectors if s.matches(before) and not s.matches(after)]
        keys = {k for s in broken for k in (*s.labels, *(e.get("key") for e in s.expressions))}
        for key in sorted(k for k in keys if before.get(k) != after.get(k)):
            users = [s for s in broken if key in s.labels or any(e.get("key") == key for e in s.expressions)]
            steps = next(
                s
                for s in (
                    (*template.steps, "metadata", "labels", key),
                    (*template.steps, "metadata", "labels"),
                    (*template.steps, "metadata"),
                )
                if s in by_steps
            )
            owners = ", ".join(sorted(s.owner for s in users))
            what = f"{owners} select these pods by {users[0].requirement(key)}; they would no longer select them"
            fix = (
                f"keep {key}: {before[key]} (add labels of your own beside it)"
                if key in before
                else f"leave {key} unset"
            )
            yield Refusal(Ground.SELECTOR, format_steps(steps), after.get(key), what, fix)


def refusals(
    kind: str,
    patch: Mapping[str, Any],
    merged: Mapping[str, Any],
    rendered: Mapping[str, Any],
    selectors: list[Selector],
) -> list[Refusal]:
    """Everything this list refuses in ``patch``, an override of a ``kind`` object (``merged``: after the merge,
    ``rendered``: before; ``selectors``: of every rendered object, :func:`pod_selectors`)."""
    found = list(nodes(patch, merged, rendered))
    return [
        *exposure(found),
        *identity(kind, found),
        *pod_security(kind, found),
        *selector_labels(found, selectors),
    ]
