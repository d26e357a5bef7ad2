"""References between rendered Kubernetes manifests that the API server would reject or a controller would
silently ignore: a volumeMount naming no volume, a Service whose named targetPort no pod declares, a PodMonitor
selecting nothing, a ScaledObject scaling a Deployment that is not there, a PVC that can never bind to its PV.

Everything here is a pure function over plain dicts (``chart.to_json()`` output, or the objects of a synthesized
template). Objects that exist on the cluster without being in the manifests are declared in :class:`External`.

Values holding a CDK token (``${Token[...]}``, e.g. ``${Token[deploy-time]}``) are only known at deploy time:
they are opaque, never an error by themselves, and a comparison that involves one is given the benefit of the
doubt (a token-valued reference is taken to resolve, a token-valued label to match).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from inferstack.gates.pods import PodTemplate, all_pod_templates

__all__ = [
    "CHECKS",
    "CLUSTER_SCOPED_KINDS",
    "External",
    "ManifestIndex",
    "ReferenceFinding",
    "check_references",
    "parse_quantity",
    "selector_matches",
]

#: An unresolved CDK token inside a string: its value is only known at deploy time.
_TOKEN = re.compile(r"\$\{Token\[[^\]]+\]\}")
#: RFC 1123 label (container, volume, namespace names).
_DNS_1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
#: Kubernetes resource quantity: number, then a binary / decimal suffix or a decimal exponent.
_QUANTITY = re.compile(
    r"^(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)|[eE](?P<exp>[+-]?\d+))?$"
)
_SUFFIX: dict[str, Fraction] = {
    "": Fraction(1),
    "m": Fraction(1, 1000),
    **{s: Fraction(1000) ** (i + 1) for i, s in enumerate(("k", "M", "G", "T", "P", "E"))},
    **{s: Fraction(1024) ** (i + 1) for i, s in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))},
}

#: Kinds that have no namespace (core and the operators we use); CRDs in the manifests add theirs.
CLUSTER_SCOPED_KINDS: frozenset[str] = frozenset(
    {
        "Namespace",
        "Node",
        "PersistentVolume",
        "StorageClass",
        "PriorityClass",
        "RuntimeClass",
        "IngressClass",
        "CSIDriver",
        "CSINode",
        "VolumeAttachment",
        "VolumeSnapshotClass",
        "VolumeSnapshotContent",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "APIService",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
        "FlowSchema",
        "PriorityLevelConfiguration",
        "CertificateSigningRequest",
        "DeviceClass",
        "NodePool",
        "NodeClaim",
        "EC2NodeClass",
        "ClusterIssuer",
        "ClusterServingRuntime",
        "ClusterTriggerAuthentication",
    }
)

#: Where, besides the pod's own ``volumes``, a pod template's volumeMounts may find their volume: the
#: ``volumeClaimTemplates`` of its owner (the controller adds one volume per template, named like it).
_CLAIM_TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "StatefulSet": ("spec", "volumeClaimTemplates"),
    "LeaderWorkerSet": ("spec", "leaderWorkerTemplate", "volumeClaimTemplates"),
}

_KUBE_ROOT_CA = "kube-root-ca.crt"
_DEFAULT_NAMESPACE = "default"


@dataclass(frozen=True, kw_only=True)
class External:
    """Objects that exist on the cluster without being in the manifests (declared in config or created by
    something else)."""

    namespaces: frozenset[str] = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
    priority_classes: frozenset[str] = frozenset({"system-cluster-critical", "system-node-critical"})
    service_accounts: frozenset[tuple[str, str]] = frozenset()
    """(namespace, name); the ``default`` ServiceAccount always exists in every namespace."""
    config_maps: frozenset[tuple[str, str]] = frozenset()
    """(namespace, name); ``kube-root-ca.crt`` always exists in every namespace."""
    pvcs: frozenset[tuple[str, str]] = frozenset()
    """(namespace, name)."""
    secrets: frozenset[tuple[str, str]] = frozenset()
    """(namespace, name). Secrets are never emitted by us: each used Secret must be declared here."""
    storage_classes: frozenset[str] = frozenset()


@dataclass(frozen=True, kw_only=True)
class ReferenceFinding:
    """One reference that does not resolve (or resolves to something that cannot work)."""

    ref: str
    """``Kind/namespace/name`` of the object holding the bad reference (``Kind/name`` when cluster-scoped)."""
    path: str
    """Field path inside that object, e.g. ``spec.template.spec.containers[0].volumeMounts[2].name``."""
    message: str
    """What is wrong."""
    fix: str
    """What to change."""

    def __str__(self) -> str:
        return f"{self.ref} {self.path}: {self.message} — fix: {self.fix}"


# --------------------------------------------------------------------------------------------------- helpers


def _is_token(value: object) -> bool:
    return isinstance(value, str) and bool(_TOKEN.search(value))


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _name(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("name") or "")


def _group(api_version: object) -> str:
    """API group of an ``apiVersion`` (``""`` for the core group ``v1``)."""
    text = str(api_version or "")
    return text.split("/", 1)[0] if "/" in text else ""


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _items(value: object) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _where(base: str, field: str) -> str:
    return f"{base}.{field}" if base else field


def _dns_label_problem(value: str) -> str | None:
    """Why ``value`` is not an RFC 1123 label, or None when it is."""
    if len(value) > 63:
        return f"is {len(value)} characters long (at most 63)"
    if not _DNS_1123_LABEL.match(value):
        return "must consist of lowercase letters, digits and '-', and start and end with a letter or digit"
    return None


def _port_name_problem(value: str) -> str | None:
    """Why ``value`` is not an IANA_SVC_NAME (what container and Service port names must be), or None."""
    problems = []
    if len(value) > 15:
        problems.append(f"is {len(value)} characters long (at most 15)")
    if not re.fullmatch(r"[a-z0-9-]*", value):
        problems.append("may contain only lowercase letters, digits and '-'")
    if not re.search(r"[a-z]", value):
        problems.append("must contain at least one letter")
    if value.startswith("-") or value.endswith("-"):
        problems.append("must not start or end with '-'")
    if "--" in value:
        problems.append("must not contain '--'")
    return "; ".join(problems) or None


def parse_quantity(value: object) -> Fraction | None:
    """A Kubernetes resource quantity (``10Gi``, ``500M``, ``1.5``, ``100m``, ``1e3``) as an exact number, or
    None when ``value`` is not one (tokens included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Fraction(value)
    if not isinstance(value, str):
        return None
    match = _QUANTITY.match(value.strip())
    if not match:
        return None
    number = Fraction(match["number"])
    if match["exp"] is not None:
        return number * Fraction(10) ** int(match["exp"])
    return number * _SUFFIX[match["suffix"] or ""]


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, Any]) -> bool:
    """Whether a ``LabelSelector`` (``matchLabels`` + ``matchExpressions``) selects ``labels``, the Kubernetes way:
    an empty selector ``{}`` selects everything, a None one nothing. Requirements involving a token may match."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if _is_token(key) or _is_token(value):
            continue
        if key not in labels or (labels[key] != value and not _is_token(labels[key])):
            return False
    return all(_expression_matches(expression, labels) for expression in _items(selector.get("matchExpressions")))


def _expression_matches(expression: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    key = expression.get("key")
    operator = expression.get("operator")
    values = [str(v) for v in _items(expression.get("values"))]
    if _is_token(key):
        return True
    present = key in labels
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    uncertain = any(_is_token(v) for v in values) or (present and _is_token(labels[key]))
    if operator == "In":
        return present and (str(labels[key]) in values or uncertain)
    if operator == "NotIn":
        return not present or str(labels[key]) not in values or uncertain
    return False


def _map_selector_matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """A plain ``map[string]string`` selector (Service ``spec.selector``)."""
    return selector_matches({"matchLabels": selector}, labels)


def _has_token(node: object) -> bool:
    if isinstance(node, Mapping):
        return any(_has_token(k) or _has_token(v) for k, v in node.items())
    if isinstance(node, list):
        return any(_has_token(v) for v in node)
    return _is_token(node)


# --------------------------------------------------------------------------------------------------- the index


class ManifestIndex:
    """What the manifests emit, looked up by (group, kind, namespace, name) — namespace ``""`` when
    cluster-scoped — plus their pod templates and the :class:`External` declarations. Every ``check_*``
    function takes one."""

    def __init__(self, manifests: list[Mapping[str, Any]], external: External) -> None:
        self.manifests = [m for m in manifests if isinstance(m, Mapping)]
        self.external = external
        self.cluster_scoped = set(CLUSTER_SCOPED_KINDS)
        for manifest in self.manifests:
            if manifest.get("kind") == "CustomResourceDefinition" and _spec(manifest).get("scope") == "Cluster":
                kind = (_spec(manifest).get("names") or {}).get("kind")
                if kind:
                    self.cluster_scoped.add(str(kind))
        self.objects: dict[tuple[str, str, str, str], Mapping[str, Any]] = {}
        for manifest in self.manifests:
            key = (_group(manifest.get("apiVersion")), str(manifest.get("kind")), self.namespace(manifest))
            self.objects.setdefault((*key, _name(manifest)), manifest)
        self.pods = list(all_pod_templates(self.manifests))

    def namespaced(self, obj: Mapping[str, Any]) -> bool:
        return str(obj.get("kind")) not in self.cluster_scoped

    def namespace(self, obj: Mapping[str, Any]) -> str:
        """The object's namespace (``default`` when unset), ``""`` for cluster-scoped kinds."""
        if not self.namespaced(obj):
            return ""
        return str(_meta(obj).get("namespace") or _DEFAULT_NAMESPACE)

    def ref(self, obj: Mapping[str, Any]) -> str:
        namespace = self.namespace(obj)
        return f"{obj.get('kind')}/{namespace}/{_name(obj)}" if namespace else f"{obj.get('kind')}/{_name(obj)}"

    def get(self, group: str, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self.objects.get((group, kind, namespace, name))

    def has_namespace(self, name: str) -> bool:
        return _is_token(name) or name in self.external.namespaces or self.get("", "Namespace", "", name) is not None

    def has_config_map(self, namespace: str, name: str) -> bool:
        return (
            name == _KUBE_ROOT_CA
            or (namespace, name) in self.external.config_maps
            or self.get("", "ConfigMap", namespace, name) is not None
        )

    def has_secret(self, namespace: str, name: str) -> bool:
        return (namespace, name) in self.external.secrets or self.get("", "Secret", namespace, name) is not None

    def has_pvc(self, namespace: str, name: str) -> bool:
        return (namespace, name) in self.external.pvcs or self.get(
            "", "PersistentVolumeClaim", namespace, name
        ) is not None

    def has_service_account(self, namespace: str, name: str) -> bool:
        return (
            name == "default"
            or (namespace, name) in self.external.service_accounts
            or self.get("", "ServiceAccount", namespace, name) is not None
        )

    def has_priority_class(self, name: str) -> bool:
        return (
            name in self.external.priority_classes
            or self.get("scheduling.k8s.io", "PriorityClass", "", name) is not None
        )

    def has_storage_class(self, name: str) -> bool:
        return name in self.external.storage_classes or self.get("storage.k8s.io", "StorageClass", "", name) is not None

    def config_map_keys(self, namespace: str, name: str) -> set[str] | None:
        """Keys of an emitted ConfigMap (``kube-root-ca.crt`` has ``ca.crt``); None when unknown (external)."""
        if name == _KUBE_ROOT_CA and self.get("", "ConfigMap", namespace, name) is None:
            return {"ca.crt"}
        config_map = self.get("", "ConfigMap", namespace, name)
        if config_map is None:
            return None
        keys = set(config_map.get("data") or {}) | set(config_map.get("binaryData") or {})
        return None if any(_is_token(k) for k in keys) else keys

    def pods_in(self, namespaces: Iterable[str] | None) -> Iterator[PodTemplate]:
        """Pod templates in ``namespaces`` (None = every namespace)."""
        wanted = None if namespaces is None else set(namespaces)
        for pod in self.pods:
            if wanted is None or pod.namespace in wanted or any(_is_token(n) for n in wanted):
                yield pod

    def of_kind(self, group: str, kind: str) -> Iterator[Mapping[str, Any]]:
        for manifest in self.manifests:
            if manifest.get("kind") == kind and _group(manifest.get("apiVersion")) == group:
                yield manifest


# --------------------------------------------------------------------------------------------------- pods


def _spec_path(pod: PodTemplate) -> str:
    return f"{pod.path}.spec" if pod.path else "spec"


def _indexed_containers(spec: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(``containers[0]``-style field path, container) of every container of a pod spec."""
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for index, container in enumerate(_items(spec.get(field))):
            if isinstance(container, Mapping):
                yield f"{field}[{index}]", container


def _claim_templates(owner: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """(path, items) of the owner's ``volumeClaimTemplates`` (empty when its kind has none)."""
    keys = _CLAIM_TEMPLATE_PATHS.get(str(owner.get("kind")))
    if not keys:
        return "", []
    node: Any = owner
    for key in keys:
        node = node.get(key) if isinstance(node, Mapping) else None
    return ".".join(keys), _items(node)


def _check_pod_volumes(pod: PodTemplate) -> Iterator[ReferenceFinding]:
    """Volume names unique and valid; every volumeMount / volumeDevice names a volume of the pod (or a claim
    template of its owner)."""
    base = _spec_path(pod)
    volumes: set[str] = set()
    for i, volume in enumerate(_items(pod.spec.get("volumes"))):
        name = str(volume.get("name") or "")
        path = f"{base}.volumes[{i}].name"
        if _is_token(name):
            volumes.add(name)
            continue
        problem = _dns_label_problem(name) if name else "is missing"
        if problem:
            yield ReferenceFinding(
                ref=pod.ref,
                path=path,
                message=f"volume name {name!r} {problem}",
                fix="name the volume with a DNS-1123 label (lowercase alphanumerics and '-', at most 63 characters)",
            )
        if name in volumes:
            yield ReferenceFinding(
                ref=pod.ref,
                path=path,
                message=f"volume name {name!r} is used by more than one volume of the pod",
                fix="give every volume of the pod its own name",
            )
        volumes.add(name)
    claim_path, claim_templates = _claim_templates(pod.owner)
    claim_names = {str(_meta(t).get("name")) for t in claim_templates if isinstance(t, Mapping)}
    known = volumes | claim_names
    if any(_is_token(v) for v in known):
        return
    for where, container in _indexed_containers(pod.spec):
        for field in ("volumeMounts", "volumeDevices"):
            for j, mount in enumerate(_items(container.get(field))):
                name = str(mount.get("name") or "")
                if _is_token(name) or name in known:
                    continue
                available = ", ".join(sorted(known)) or "none"
                also = f" or {pod.ref.split('/')[0]} {claim_path}" if claim_path else ""
                yield ReferenceFinding(
                    ref=pod.ref,
                    path=f"{base}.{where}.{field}[{j}].name",
                    message=f"{field[:-1]} names volume {name!r}, which the pod does not have (volumes: {available})",
                    fix=f"add a volume named {name!r} to {base}.volumes{also}, or mount an existing volume",
                )


def _check_pod_containers(pod: PodTemplate) -> Iterator[ReferenceFinding]:
    """Container names valid and unique across init, regular and ephemeral containers; container port names
    valid IANA_SVC_NAMEs and unique within the pod."""
    base = _spec_path(pod)
    names: dict[str, str] = {}
    ports: dict[str, str] = {}
    for where, container in _indexed_containers(pod.spec):
        name = str(container.get("name") or "")
        if not _is_token(name):
            problem = _dns_label_problem(name) if name else "is missing"
            if problem:
                yield ReferenceFinding(
                    ref=pod.ref,
                    path=f"{base}.{where}.name",
                    message=f"container name {name!r} {problem}",
                    fix="name the container with a DNS-1123 label (lowercase alphanumerics and '-', at most 63 "
                    "characters)",
                )
            if name in names:
                yield ReferenceFinding(
                    ref=pod.ref,
                    path=f"{base}.{where}.name",
                    message=f"container name {name!r} is already used by {base}.{names[name]}",
                    fix="give every container of the pod (init, regular and ephemeral) its own name",
                )
            else:
                names[name] = where
        for j, port in enumerate(_items(container.get("ports"))):
            port_name = port.get("name")
            if not port_name or _is_token(port_name):
                continue
            port_name = str(port_name)
            path = f"{base}.{where}.ports[{j}].name"
            problem = _port_name_problem(port_name)
            if problem:
                yield ReferenceFinding(
                    ref=pod.ref,
                    path=path,
                    message=f"port name {port_name!r} is not a valid IANA_SVC_NAME: {problem}",
                    fix="use at most 15 lowercase letters, digits and single inner '-', with at least one letter "
                    "(e.g. 'http', 'metrics')",
                )
            if port_name in ports:
                yield ReferenceFinding(
                    ref=pod.ref,
                    path=path,
                    message=f"port name {port_name!r} is already used by {base}.{ports[port_name]}; a Service or "
                    "PodMonitor naming it reaches only one of them",
                    fix="give every container port of the pod its own name",
                )
            else:
                ports[port_name] = f"{where}.ports[{j}]"


def _missing_config_map(pod: PodTemplate, path: str, name: str, what: str) -> ReferenceFinding:
    return ReferenceFinding(
        ref=pod.ref,
        path=path,
        message=f"{what} ConfigMap {pod.namespace}/{name}, which is neither emitted nor declared external; the pod "
        "will not start",
        fix=f"emit ConfigMap {name!r} in namespace {pod.namespace!r}, declare it in External.config_maps, or set "
        "optional: true",
    )


def _missing_secret(pod: PodTemplate, path: str, name: str, what: str) -> ReferenceFinding:
    return ReferenceFinding(
        ref=pod.ref,
        path=path,
        message=f"{what} Secret {pod.namespace}/{name}, which is not declared external (Secrets are never emitted); "
        "the pod will not start",
        fix=f"declare ({pod.namespace!r}, {name!r}) in External.secrets, create the Secret, or set optional: true",
    )


def _missing_key(pod: PodTemplate, path: str, name: str, key: str, keys: set[str]) -> ReferenceFinding:
    return ReferenceFinding(
        ref=pod.ref,
        path=path,
        message=f"key {key!r} is not in ConfigMap {pod.namespace}/{name} (keys: {', '.join(sorted(keys)) or 'none'})",
        fix=f"add {key!r} to the ConfigMap's data, use one of its keys, or set optional: true",
    )


def _config_map_ref(
    pod: PodTemplate,
    index: ManifestIndex,
    ref: Mapping[str, Any],
    path: str,
    what: str,
    keys: Iterable[tuple[str, str]],
) -> Iterator[ReferenceFinding]:
    """A (possibly optional) reference to ConfigMap ``ref["name"]`` and some of its keys (key, path of key)."""
    name = str(ref.get("name") or "")
    if ref.get("optional") is True or not name or _is_token(name):
        return
    if not index.has_config_map(pod.namespace, name):
        yield _missing_config_map(pod, f"{path}.name", name, what)
        return
    present = index.config_map_keys(pod.namespace, name)
    if present is None:
        return
    for key, key_path in keys:
        if not _is_token(key) and key not in present:
            yield _missing_key(pod, key_path, name, key, present)


def _secret_ref(
    pod: PodTemplate, index: ManifestIndex, ref: Mapping[str, Any], path: str, what: str, field: str = "name"
) -> Iterator[ReferenceFinding]:
    name = str(ref.get(field) or "")
    if ref.get("optional") is True or not name or _is_token(name):
        return
    if not index.has_secret(pod.namespace, name):
        yield _missing_secret(pod, f"{path}.{field}", name, what)


def _check_pod_env(pod: PodTemplate, index: ManifestIndex) -> Iterator[ReferenceFinding]:
    """``env[].valueFrom`` configMapKeyRef / secretKeyRef and ``envFrom[]`` refs resolve (unless optional)."""
    base = _spec_path(pod)
    for where, container in _indexed_containers(pod.spec):
        for j, env in enumerate(_items(container.get("env"))):
            value_from = env.get("valueFrom") if isinstance(env, Mapping) else None
            if not isinstance(value_from, Mapping):
                continue
            path = f"{base}.{where}.env[{j}].valueFrom"
            if isinstance(ref := value_from.get("configMapKeyRef"), Mapping):
                key = str(ref.get("key") or "")
                yield from _config_map_ref(
                    pod, index, ref, f"{path}.configMapKeyRef", "env reads", [(key, f"{path}.configMapKeyRef.key")]
                )
            if isinstance(ref := value_from.get("secretKeyRef"), Mapping):
                yield from _secret_ref(pod, index, ref, f"{path}.secretKeyRef", "env reads")
        for j, source in enumerate(_items(container.get("envFrom"))):
            if not isinstance(source, Mapping):
                continue
            path = f"{base}.{where}.envFrom[{j}]"
            if isinstance(ref := source.get("configMapRef"), Mapping):
                yield from _config_map_ref(pod, index, ref, f"{path}.configMapRef", "envFrom reads", [])
            if isinstance(ref := source.get("secretRef"), Mapping):
                yield from _secret_ref(pod, index, ref, f"{path}.secretRef", "envFrom reads")


def _item_keys(source: Mapping[str, Any], path: str) -> list[tuple[str, str]]:
    return [
        (str(item.get("key") or ""), f"{path}.items[{k}].key") for k, item in enumerate(_items(source.get("items")))
    ]


def _check_pod_volume_sources(pod: PodTemplate, index: ManifestIndex) -> Iterator[ReferenceFinding]:
    """configMap / secret / persistentVolumeClaim / projected volumes resolve; ephemeral claim templates name a
    StorageClass that exists."""
    base = _spec_path(pod)
    for i, volume in enumerate(_items(pod.spec.get("volumes"))):
        if not isinstance(volume, Mapping):
            continue
        path = f"{base}.volumes[{i}]"
        if isinstance(source := volume.get("configMap"), Mapping):
            keys = _item_keys(source, f"{path}.configMap")
            yield from _config_map_ref(pod, index, source, f"{path}.configMap", "volume mounts", keys)
        if isinstance(source := volume.get("secret"), Mapping):
            yield from _secret_ref(pod, index, source, f"{path}.secret", "volume mounts", field="secretName")
        if isinstance(source := volume.get("persistentVolumeClaim"), Mapping):
            claim = str(source.get("claimName") or "")
            if claim and not _is_token(claim) and not index.has_pvc(pod.namespace, claim):
                yield ReferenceFinding(
                    ref=pod.ref,
                    path=f"{path}.persistentVolumeClaim.claimName",
                    message=f"volume uses PersistentVolumeClaim {pod.namespace}/{claim}, which is neither emitted "
                    "nor declared external; the pod stays Pending",
                    fix=f"emit PVC {claim!r} in namespace {pod.namespace!r} or declare it in External.pvcs",
                )
        if isinstance(source := volume.get("projected"), Mapping):
            for k, projection in enumerate(_items(source.get("sources"))):
                where = f"{path}.projected.sources[{k}]"
                if isinstance(ref := projection.get("configMap"), Mapping):
                    keys = _item_keys(ref, f"{where}.configMap")
                    yield from _config_map_ref(pod, index, ref, f"{where}.configMap", "projected volume reads", keys)
                if isinstance(ref := projection.get("secret"), Mapping):
                    yield from _secret_ref(pod, index, ref, f"{where}.secret", "projected volume reads")
        ephemeral = volume.get("ephemeral")
        if isinstance(ephemeral, Mapping) and isinstance(template := ephemeral.get("volumeClaimTemplate"), Mapping):
            yield from _storage_class_ref(index, pod.ref, _spec(template), f"{path}.ephemeral.volumeClaimTemplate.spec")


def _check_pod_identity(pod: PodTemplate, index: ManifestIndex) -> Iterator[ReferenceFinding]:
    """serviceAccountName, priorityClassName and imagePullSecrets resolve."""
    base = _spec_path(pod)
    field = "serviceAccountName" if pod.spec.get("serviceAccountName") else "serviceAccount"
    account = str(pod.spec.get(field) or "default")
    if not _is_token(account) and not index.has_service_account(pod.namespace, account):
        yield ReferenceFinding(
            ref=pod.ref,
            path=f"{base}.{field}",
            message=f"ServiceAccount {pod.namespace}/{account} is neither emitted nor declared external; the "
            "controller cannot create the pods",
            fix=f"emit ServiceAccount {account!r} in namespace {pod.namespace!r} or declare it in "
            "External.service_accounts",
        )
    priority = pod.spec.get("priorityClassName")
    if priority and not _is_token(priority) and not index.has_priority_class(str(priority)):
        yield ReferenceFinding(
            ref=pod.ref,
            path=f"{base}.priorityClassName",
            message=f"PriorityClass {priority!r} is neither emitted nor declared external; admission rejects the pods",
            fix=f"emit PriorityClass {priority!r} or declare it in External.priority_classes",
        )
    for i, secret in enumerate(_items(pod.spec.get("imagePullSecrets"))):
        if isinstance(secret, Mapping):
            yield from _secret_ref(pod, index, secret, f"{base}.imagePullSecrets[{i}]", "image pull uses")


def check_pods(index: ManifestIndex) -> Iterator[ReferenceFinding]:
    """Check 1: everything a pod template references by name."""
    for pod in index.pods:
        yield from _check_pod_volumes(pod)
        yield from _check_pod_containers(pod)
        yield from _check_pod_env(pod, index)
        yield from _check_pod_volume_sources(pod, index)
        yield from _check_pod_identity(pod, index)


# --------------------------------------------------------------------------------------------------- namespaces


def check_namespaces(index: ManifestIndex) -> Iterator[ReferenceFinding]:
    """Check 2: every namespaced object's namespace (``default`` when unset) is emitted or external. This also
    covers the namespace of every pod template, which is its owner's."""
    for obj in index.manifests:
        if not index.namespaced(obj):
            continue
        namespace = index.namespace(obj)
        if not index.has_namespace(namespace):
            yield ReferenceFinding(
                ref=index.ref(obj),
                path="metadata.namespace",
                message=f"namespace {namespace!r} is neither emitted nor declared external; the API server rejects "
                "the object",
                fix=f"emit Namespace {namespace!r} (applied before this object) or declare it in External.namespaces",
            )


# --------------------------------------------------------------------------------------------------- Services


def _serving_ports(pod: PodTemplate) -> Iterator[Mapping[str, Any]]:
    """Ports a Service can route to: regular containers and sidecars (init containers with restartPolicy Always),
    the ones the EndpointSlice controller looks up a named targetPort in."""
    for field, container in pod.containers():
        if field == "containers" or (field == "initContainers" and container.get("restartPolicy") == "Always"):
            for port in _items(container.get("ports")):
                if isinstance(port, Mapping):
                    yield port


def _all_ports(pod: PodTemplate) -> Iterator[Mapping[str, Any]]:
    for _, container in pod.containers():
        for port in _items(container.get("ports")):
            if isinstance(port, Mapping):
                yield port


def _check_service_port(
    obj: Mapping[str, Any], index: ManifestIndex, pods: list[PodTemplate], i: int, port: Mapping[str, Any]
) -> Iterator[ReferenceFinding]:
    protocol = str(port.get("protocol") or "TCP")
    target = port.get("targetPort", port.get("port"))
    field = "targetPort" if "targetPort" in port else "port"
    path = f"spec.ports[{i}].{field}"
    if target is None or _is_token(target):
        return
    declared = [p for pod in pods for p in _serving_ports(pod)]
    if isinstance(target, str) and not target.isdigit():
        if any(p.get("name") == target and str(p.get("protocol") or "TCP") == protocol for p in declared):
            return
        other = sorted({str(p.get("protocol") or "TCP") for p in declared if p.get("name") == target})
        named = sorted({str(p["name"]) for p in declared if p.get("name")})
        detail = (
            f"the matching pods declare it only for protocol {', '.join(other)}"
            if other
            else f"no matching pod declares a container port with that name (names: {', '.join(named) or 'none'})"
        )
        yield ReferenceFinding(
            ref=index.ref(obj),
            path=path,
            message=f"targetPort {target!r} ({protocol}): {detail}; the Service gets no endpoints for this port",
            fix=f"name a container port {target!r} with protocol {protocol} in the selected pods, or target one "
            "of their port names",
        )
        return
    number = int(target)
    if any(p.get("containerPort") == number and str(p.get("protocol") or "TCP") == protocol for p in declared):
        return
    numbers = sorted({int(p["containerPort"]) for p in declared if isinstance(p.get("containerPort"), int)})
    defaults = " (targetPort defaults to port)" if field == "port" else ""
    yield ReferenceFinding(
        ref=index.ref(obj),
        path=path,
        message=f"warning: {protocol} port {number}{defaults} is not a declared containerPort of any matching pod "
        f"(declared: {', '.join(map(str, numbers)) or 'none'}); traffic reaches it only if a container listens there",
        fix=f"declare containerPort {number} in the selected pods, or target one of their (named) ports",
    )


def check_services(index: ManifestIndex) -> Iterator[ReferenceFinding]:
    """Check 3: a Service's selector (skipped when absent or empty) matches some pod template in its namespace;
    every targetPort (named, or numeric) is a port of a matching pod."""
    for obj in index.of_kind("", "Service"):
        spec = _spec(obj)
        selector = spec.get("selector")
        if not isinstance(selector, Mapping) or not selector or spec.get("type") == "ExternalName":
            continue
        namespace = index.namespace(obj)
        pods = [p for p in index.pods_in([namespace]) if _map_selector_matches(selector, p.labels)]
        if not pods:
            yield ReferenceFinding(
                ref=index.ref(obj),
                path="spec.selector",
                message=f"selector {dict(selector)} matches no pod template in namespace {namespace!r}; the Service "
                "has no endpoints",
                fix="make the selector a subset of the labels of the pods it should reach",
            )
            continue
        for i, port in enumerate(_items(spec.get("ports"))):
            if isinstance(port, Mapping):
                yield from _check_service_port(obj, index, pods, i, port)


# --------------------------------------------------------------------------------------------------- PDBs


def check_pod_disruption_budgets(index: ManifestIndex) -> Iterator[ReferenceFinding]:
    """Check 4: a PodDisruptionBudget's selector matches some pod template in its namespace (a null selector
    matches nothing, ``{}`` everything)."""
    for obj in index.of_kind("policy", "PodDisruptionBudget"):
        selector = _spec(obj).get("selector")
        namespace = index.namespace(obj)
        if selector is not None and not isinstance(selector, Mapping):
            continue
        if selector is not None and any(selector_matches(selector, p.labels) for p in index.pods_in([namespace])):
            continue
        yield ReferenceFinding(
            ref=index.ref(obj),
            path="spec.selector",
            message=(
                "has no selector, which selects no pods"
                if selector is None
                else f"selector {dict(selector)} matches no pod template in namespace {namespace!r}"
            )
            + "; the budget protects nothing",
            fix="set spec.selector.matchLabels to labels the protected pods carry",
        )


# --------------------------------------------------------------------------------------------------- monitors


def _monitor_namespaces(obj: Mapping[str, Any], index: ManifestIndex) -> list[str] | None:
    """Namespaces a PodMonitor / ServiceMonitor looks in (None = all)."""
    namespace_selector = _spec(obj).get("namespaceSelector") or {}
    if namespace_selector.get("any") is True:
        return None
    names = [str(n) for n in _items(namespace_selector.get("matchNames"))]
    return names or [index.namespace(obj)]


def _scope(namespaces: list[str] | None) -> str:
    return "any namespace" if namespaces is None else "namespace " + ", ".join(map(repr, namespaces))


def _monitor_selector(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    selector = _spec(obj).get("selector")
    return selector if isinstance(selector, Mapping) else {}


def _endpoint_ports(
    index: ManifestIndex, obj: Mapping[str, Any], field: str, names: set[str], what: str
) -> Iterator[ReferenceFinding]:
    """Each ``spec.<field>[].port`` of a monitor names one of ``names`` (the ports of what it selected)."""
    for i, endpoint in enumerate(_items(_spec(obj).get(field))):
        port = endpoint.get("port") if isinstance(endpoint, Mapping) else None
        if not port or _is_token(port) or str(port) in names:
            continue
        yield ReferenceFinding(
            ref=index.ref(obj),
            path=f"spec.{field}[{i}].port",
            message=f"port {port!r} is not a port name of any selected {what} (names: "
            f"{', '.join(sorted(names)) or 'none'}); the endpoint yields no targets",
            fix=f"name the {what} port {port!r}, or use one of the selected {what}s' port names",
        )


def check_pod_monitors(index: ManifestIndex) -> Iterator[ReferenceFinding]:
    """Check 5a: a PodMonitor's selector matches pods in its namespaceSelector scope; each podMetricsEndpoints
    port names a container port of a matching pod."""
    for obj in index.of_kind("monitoring.coreos.com", "PodMonitor"):
        selector = _monitor_selector(obj)
        namespaces = _monitor_namespaces(obj, index)
        pods = [p for p in index.pods_in(namespaces) if selector_matches(selector, p.labels)]
        if not pods:
            yield ReferenceFinding(
                ref=index.ref(obj),
                path="spec.selector",
                message=f"selector {dict(selector)} matches no pod template in {_scope(namespaces)}; Prometheus "
                "scrapes nothing",
                fix="make spec.selector match the labels of the pods to scrape (and spec.namespaceSelector their "
                "namespace)",
            )
            continue
        names = {str(p.get("name")) for pod in pods for p in _all_ports(pod) if p.get("name")}
        yield from _endpoint_ports(index, obj, "podMetricsEndpoints", names, "pod container")


def check_service_monitors(index: ManifestIndex) -> Iterator[ReferenceFinding]:
    """Check 5b: a ServiceMonitor's selector matches a Service in its namespaceSelector scope; each endpoints
    port names a port of a matching Service."""
    for obj in index.of_kind("monitoring.coreos.com", "ServiceMonitor"):
        selector = _monitor_selector(obj)
        namespaces = _monitor_namespaces(obj, index)
        services = [
            s
            for s in index.of_kind("", "Service")
            if (namespaces is None or index.namespace(s) in namespaces or any(map(_is_token, namespaces)))
            and selector_matches(selector, _meta(s).get("labels") or {})
        ]
        if not services:
            yield ReferenceFinding(
                ref=index.ref(obj),
                path="spec.selector",
                message=f"selector {dict(selector)} matches no Service in {_scope(namespaces)}; Prometheus scrapes "
                "nothing",
                fix="make spec.selector match the labels (metadata.labels) of the Services to scrape",
            )
            continue
        names = {str(p.get("name")) for s in services for p in _items(_spec(s).get("ports")) if p.get("name")}
        yield from _endpoint_ports(index, obj, "endpoints", names, "Service")


# --------------------------------------------------------------------------------------------------- scaling


def _check_scale_target(
    obj: Mapping[str, Any], index: ManifestIndex, target: Mapping[str, Any], api_version: str, kind: str, what: str
) -> Iterator[ReferenceFinding]:
    name = str(target.get("name") or "")
    if _is_token(name) or _is_token(api_version) or _is_token(kind):
        return
    namespace = index.namespace(obj)
    if index.get(_group(api_version), kind, namespace, name) is not None:
        return
    yield ReferenceFinding(
        ref=index.ref(obj),
        path="spec.scaleTargetRef.name" if name else "spec.scaleTargetRef",
        message=f"scaleTargetRef {api_version} {kind} {namespace}/{name} is not emitted; {what} scales nothing",
        fix=f"point scaleTargetRef (apiVersion, kind, name) at an emitted workload in namespace {namespace!r}",
    )


def check_scale_targets(index: ManifestIndex) -> Iterator[ReferenceFinding]:
    """Check 6: a KEDA ScaledObject's and an autoscaling/v2 HPA's scaleTargetRef names an emitted object in the
    same namespace (ScaledObject defaults: kind Deployment, apiVersion apps/v1)."""
    for obj in index.of_kind("keda.sh", "ScaledObject"):
        target = _spec(obj).get("scaleTargetRef")
        if isinstance(target, Mapping):
            api_version = str(target.get("apiVersion") or "apps/v1")
            kind = str(target.get("kind") or "Deployment")
            yield from _check_scale_target(obj, index, target, api_version, kind, "KEDA")
    for obj in index.of_kind("autoscaling", "HorizontalPodAutoscaler"):
        target = _spec(obj).get("scaleTargetRef")
        if isinstance(target, Mapping):
            api_version, kind = str(target.get("apiVersion") or ""), str(target.get("kind") or "")
            yield from _check_scale_target(obj, index, target, api_version, kind, "the HPA")


# --------------------------------------------------------------------------------------------------- storage


def _claim_class(claim: Mapping[str, Any]) -> str:
    """A PVC's (or PV's) class the way the binder reads it: the beta annotation wins over spec.storageClassName."""
    annotations = _meta(claim).get("annotations") or {}
    beta = annotations.get("volume.beta.kubernetes.io/storage-class")
    return str(beta if beta is not None else _spec(claim).get("storageClassName") or "")


def _storage_class_ref(
    index: ManifestIndex, ref: str, spec: Mapping[str, Any], path: str
) -> Iterator[ReferenceFinding]:
    """A dynamically provisioned claim's StorageClass is emitted or external."""
    name = spec.get("storageClassName")
    if spec.get("volumeName") or not name or _is_token(name) or index.has_storage_class(str(name)):
        return
    yield ReferenceFinding(
        ref=ref,
        path=f"{path}.storageClassName",
        message=f"StorageClass {name!r} is neither emitted nor declared external; the claim stays Pending",
        fix=f"emit StorageClass {name!r}, declare it in External.storage_classes, or use an existing class",
    )


def _check_binding(obj: Mapping[str, Any], index: ManifestIndex, pv: Mapping[str, Any]) -> Iterator[ReferenceFinding]:
    ref, spec, pv_spec = index.ref(obj), _spec(obj), _spec(pv)
    namespace, name, pv_name = index.namespace(obj), _name(obj), _name(pv)
    claim = pv_spec.get("claimRef")
    if isinstance(claim, Mapping) and not _has_token(claim):
        claim_ns = str(claim.get("namespace") or "")
        claim_name = str(claim.get("name") or "")
        if (claim_ns, claim_name) != (namespace, name):
            yield ReferenceFinding(
                ref=ref,
                path="spec.volumeName",
                message=f"PersistentVolume {pv_name!r} is reserved for claim {claim_ns}/{claim_name} "
                f"(spec.claimRef), not {namespace}/{name}; the claim stays Pending",
                fix=f"set the PV's spec.claimRef to namespace {namespace!r}, name {name!r} (or drop it)",
            )
    pvc_class, pv_class = _claim_class(obj), _claim_class(pv)
    if pvc_class != pv_class and not _is_token(pvc_class) and not _is_token(pv_class):
        yield ReferenceFinding(
            ref=ref,
            path="spec.storageClassName",
            message=f"storageClassName {pvc_class!r} differs from PersistentVolume {pv_name!r}'s {pv_class!r}; "
            "the claim does not bind",
            fix='give the PVC and the PV the same storageClassName ("" on both for static binding)',
        )
    pvc_mode = str(spec.get("volumeMode") or "Filesystem")
    pv_mode = str(pv_spec.get("volumeMode") or "Filesystem")
    if pvc_mode != pv_mode:
        yield ReferenceFinding(
            ref=ref,
            path="spec.volumeMode",
            message=f"volumeMode {pvc_mode} differs from PersistentVolume {pv_name!r}'s {pv_mode}; the claim "
            "does not bind",
            fix="give the PVC and the PV the same volumeMode",
        )
    pv_modes = {str(m) for m in _items(pv_spec.get("accessModes"))}
    missing = [str(m) for m in _items(spec.get("accessModes")) if str(m) not in pv_modes]
    if missing:
        yield ReferenceFinding(
            ref=ref,
            path="spec.accessModes",
            message=f"access modes {', '.join(missing)} are not offered by PersistentVolume {pv_name!r} "
            f"({', '.join(sorted(pv_modes)) or 'none'}); the claim does not bind",
            fix="request only access modes the PV lists, or add them to the PV",
        )
    yield from _check_capacity(obj, index, pv)


def _check_capacity(obj: Mapping[str, Any], index: ManifestIndex, pv: Mapping[str, Any]) -> Iterator[ReferenceFinding]:
    requested_raw = ((_spec(obj).get("resources") or {}).get("requests") or {}).get("storage")
    capacity_raw = (_spec(pv).get("capacity") or {}).get("storage")
    if requested_raw is None or _is_token(requested_raw) or _is_token(capacity_raw):
        return
    requested = parse_quantity(requested_raw)
    if requested is None:
        yield ReferenceFinding(
            ref=index.ref(obj),
            path="spec.resources.requests.storage",
            message=f"{requested_raw!r} is not a Kubernetes quantity",
            fix="write the size as a quantity such as 100Gi or 500M",
        )
        return
    capacity = parse_quantity(capacity_raw) if capacity_raw is not None else Fraction(0)
    if capacity is not None and capacity < requested:
        yield ReferenceFinding(
            ref=index.ref(obj),
            path="spec.resources.requests.storage",
            message=f"requests {requested_raw} but PersistentVolume {_name(pv)!r} has capacity "
            f"{capacity_raw if capacity_raw is not None else 'none'}; the claim does not bind",
            fix=f"request at most {capacity_raw} or enlarge the PV's spec.capacity.storage",
        )


def check_storage(index: ManifestIndex) -> Iterator[ReferenceFinding]:
    """Check 7: a PVC with spec.volumeName can bind to that emitted PV (claimRef, storageClassName, volumeMode,
    accessModes, capacity); a PVC (or a claim template) provisioned dynamically names a StorageClass that exists."""
    for obj in index.of_kind("", "PersistentVolumeClaim"):
        spec = _spec(obj)
        volume_name = spec.get("volumeName")
        if not volume_name:
            yield from _storage_class_ref(index, index.ref(obj), spec, "spec")
            continue
        if _is_token(volume_name):
            continue
        pv = index.get("", "PersistentVolume", "", str(volume_name))
        if pv is None:
            yield ReferenceFinding(
                ref=index.ref(obj),
                path="spec.volumeName",
                message=f"PersistentVolume {volume_name!r} is not emitted; the claim stays Pending",
                fix=f"emit PersistentVolume {volume_name!r} or drop spec.volumeName to provision dynamically",
            )
            continue
        yield from _check_binding(obj, index, pv)
    for obj in index.manifests:
        path, templates = _claim_templates(obj)
        for i, template in enumerate(templates):
            if isinstance(template, Mapping):
                yield from _storage_class_ref(index, index.ref(obj), _spec(template), f"{path}[{i}].spec")


# --------------------------------------------------------------------------------------------------- entry point

#: Every check, in the order findings are reported.
CHECKS: tuple[Callable[[ManifestIndex], Iterator[ReferenceFinding]], ...] = (
    check_namespaces,
    check_pods,
    check_services,
    check_pod_disruption_budgets,
    check_pod_monitors,
    check_service_monitors,
    check_scale_targets,
    check_storage,
)


def check_references(
    manifests: Iterable[Mapping[str, Any]],
    external: External = External(),
) -> list[ReferenceFinding]:
    """Every reference in ``manifests`` that the API server would reject or a controller would silently ignore
    (empty when all resolve). A reference resolves to an object of that kind emitted in the same namespace, or to
    one declared in ``external``."""
    index = ManifestIndex(list(manifests), external)
    return [finding for check in CHECKS for finding in check(index)]
