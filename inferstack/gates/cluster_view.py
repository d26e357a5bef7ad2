"""Checks over the objects a cluster runs: ours, the Helm releases rendered with our values and the pods operators
make. Each check is a pure function from objects (and the resolved pools) to findings, one string each naming the
object and the fix; ``[]`` means it holds.

What each models:

* :func:`controllers_off_system_pool` — every controller pod (Deployment, StatefulSet, Job, CronJob, and the
  Prometheus / Alertmanager custom resources whose StatefulSets prometheus-operator makes) selects the system node
  group (``inferstack.io/pool: system``): the value we set under the key the pinned chart really reads.
* :func:`daemons_missing_tolerations` — a DaemonSet tolerates the taints of every pool whose nodes its node
  selector admits (the pools it serves).
* :func:`unpinned_images` — every image has a tag other than ``latest``/``main``/``master``, or a digest.
* :func:`missing_webhook_services` — every webhook's ``clientConfig.service`` names a Service that exists.
* :func:`unresolvable_alert_jobs` — every ``job="…"`` an alerting or recording rule reads is a scrape job that
  exists, and the Service behind it selects pods that run on EKS (control-plane components do not).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inferstack.catalog.images import image_facts
from inferstack.catalog.kubernetes import POOL_LABEL, SYSTEM_POOL
from inferstack.gates.network import Address, Pod, connection_allowed
from inferstack.gates.pods import PodTemplate, all_pod_templates

Objects = Sequence[Mapping[str, Any]]

#: Controllers: what a Deployment, StatefulSet or Job runs should land on the system nodes.
CONTROLLER_KINDS = frozenset({"Deployment", "StatefulSet", "Job", "CronJob", "ReplicaSet"})
#: Custom resources whose pods prometheus-operator makes; their pod fields sit under ``spec``.
OPERATOR_POD_SPECS = frozenset({"Prometheus", "Alertmanager", "ThanosRuler", "PrometheusAgent"})
#: Tags that move.
MOVING_TAGS = frozenset({"latest", "main", "master", "nightly", "dev", "edge", "stable"})
#: Pods EKS itself runs in kube-system (the managed add-ons), by label: a Service selecting one of these selects
#: something. EKS runs the control plane (apiserver, controller-manager, scheduler, etcd) outside the cluster.
EKS_MANAGED_PODS: tuple[Mapping[str, str], ...] = (
    {"k8s-app": "aws-node"},
    {"k8s-app": "kube-proxy"},
    {"k8s-app": "kube-dns"},
    {"app.kubernetes.io/name": "eks-pod-identity-agent"},
)
#: Scrape jobs Prometheus always has: its own and prometheus-operator's kubelet endpoints (the operator manages
#: the ``<release>-kubelet`` Service itself, ``--kubelet-service``).
BUILT_IN_JOBS = frozenset({"kubelet"})
#: Services every cluster has: ``default/kubernetes`` (the API server's endpoints; labels from k8s.io/kubernetes
#: ``pkg/controlplane/controller/kubernetesservice``), which kube-prometheus-stack's ``apiserver`` job scrapes.
BUILT_IN_SERVICES: tuple[Mapping[str, Any], ...] = (
    {
        "kind": "Service",
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {},
    },
)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _ref(obj: Mapping[str, Any]) -> str:
    meta = _meta(obj)
    return f"{obj.get('kind')}/{meta.get('namespace') or '-'}/{meta.get('name')}"


# -- placement -------------------------------------------------------------------------------------------------
def controllers_off_system_pool(objects: Objects) -> list[str]:
    findings: list[str] = []
    for template in all_pod_templates(list(objects)):
        if template.owner.get("kind") not in CONTROLLER_KINDS:
            continue
        selector = template.spec.get("nodeSelector") or {}
        if selector.get(POOL_LABEL) != SYSTEM_POOL and not _requires_system_pool(template.spec):
            findings.append(
                f"{template.ref} {template.path}.spec.nodeSelector: {dict(selector)} — a controller pod must "
                f"select {POOL_LABEL}={SYSTEM_POOL} (set it under the key the pinned chart reads)"
            )
    for obj in objects:
        if obj.get("kind") in OPERATOR_POD_SPECS:
            selector = (obj.get("spec") or {}).get("nodeSelector") or {}
            if selector.get(POOL_LABEL) != SYSTEM_POOL:
                findings.append(f"{_ref(obj)} spec.nodeSelector: {dict(selector)} — select {POOL_LABEL}={SYSTEM_POOL}")
    return findings


def _requires_system_pool(spec: Mapping[str, Any]) -> bool:
    """A required node affinity whose every term holds ``inferstack.io/pool In [system]``."""
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms") or []
    return bool(terms) and all(
        any(
            e.get("key") == POOL_LABEL and e.get("operator") == "In" and e.get("values") == [SYSTEM_POOL]
            for e in term.get("matchExpressions") or ()
        )
        for term in terms
    )


def _tolerates(tolerations: Iterable[Mapping[str, Any]], key: str, effect: str) -> bool:
    for toleration in tolerations:
        if toleration.get("effect") not in (None, "", effect):
            continue
        if toleration.get("operator") == "Exists" and not toleration.get("key"):
            return True
        if toleration.get("key") == key:
            return True
    return False


def _admits(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """Whether a node with ``labels`` (the pool's, plus ``kubernetes.io/os: linux``) passes ``selector``; keys
    the pool does not set (hardware labels that NFD or the instance adds) are taken as present."""
    node = {"kubernetes.io/os": "linux", **labels}
    return all(node.get(k, v) == v for k, v in selector.items())


def daemons_missing_tolerations(
    objects: Objects, pools: Mapping[str, tuple[Mapping[str, str], Iterable[tuple[str, str]]]]
) -> list[str]:
    """``pools``: name → (labels, taints as ``(key, effect)``)."""
    findings: list[str] = []
    for template in all_pod_templates(list(objects)):
        if template.owner.get("kind") != "DaemonSet":
            continue
        selector = template.spec.get("nodeSelector") or {}
        tolerations = template.spec.get("tolerations") or []
        for pool, (labels, taints) in sorted(pools.items()):
            if not _admits(selector, labels):
                continue
            missing = sorted(f"{k}:{e}" for k, e in taints if not _tolerates(tolerations, k, e))
            if missing:
                findings.append(
                    f"{template.ref}: selects the nodes of pool {pool!r} but does not tolerate {missing} — add the "
                    "tolerations, or select only the pools it serves"
                )
    return findings


# -- images ------------------------------------------------------------------------------------------------------
def image_pinned(image: str) -> bool:
    if "@sha256:" in image:
        return True
    name = image.rsplit("/", 1)[-1]
    if ":" not in name:
        return False
    tag = name.rsplit(":", 1)[1]
    return bool(tag) and tag not in MOVING_TAGS and "${" not in tag


def _images(template: PodTemplate) -> Iterator[tuple[str, str]]:
    for field, container in template.containers():
        yield f"{field}/{container.get('name')}", str(container.get("image") or "")


def unpinned_images(objects: Objects) -> list[str]:
    return [
        f"{t.ref} {where}: image {image!r} — pin a release tag or a digest"
        for t in all_pod_templates(list(objects))
        for where, image in _images(t)
        if not image_pinned(image)
    ]


# -- webhooks --------------------------------------------------------------------------------------------------
def missing_webhook_services(objects: Objects) -> list[str]:
    services = {(_meta(o).get("namespace"), _meta(o).get("name")) for o in objects if o.get("kind") == "Service"}
    findings: list[str] = []
    for obj in objects:
        if obj.get("kind") not in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
            continue
        for hook in obj.get("webhooks") or ():
            service = (hook.get("clientConfig") or {}).get("service")
            if service and (service.get("namespace"), service.get("name")) not in services:
                findings.append(
                    f"{_ref(obj)} webhook {hook.get('name')}: Service {service.get('namespace')}/"
                    f"{service.get('name')} does not exist — every call fails ({hook.get('failurePolicy', 'Fail')})"
                )
    return findings


# -- alerts ------------------------------------------------------------------------------------------------------
_JOB_MATCHER = re.compile(r'\bjob\s*(=~|=)\s*"([^"]*)"')


def _selects(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def _running_pods(objects: Objects) -> list[tuple[str, Mapping[str, str]]]:
    pods = [(t.namespace, t.labels) for t in all_pod_templates(list(objects))]
    pods += [("kube-system", labels) for labels in EKS_MANAGED_PODS]
    return pods


def scrape_jobs(objects: Objects) -> dict[str, list[str]]:
    """Scrape job name → problems of its target (``[]``: it scrapes pods that exist). ServiceMonitor jobs are the
    Service's name, or its ``jobLabel`` label's value (prometheus-operator); PodMonitor jobs ``<ns>/<name>`` or
    ``jobLabel``."""
    services = [*BUILT_IN_SERVICES, *(o for o in objects if o.get("kind") == "Service")]
    pods = _running_pods(objects)
    jobs: dict[str, list[str]] = {job: [] for job in BUILT_IN_JOBS}
    for monitor in objects:
        spec = monitor.get("spec") or {}
        selector = (spec.get("selector") or {}).get("matchLabels") or {}
        namespaces = (spec.get("namespaceSelector") or {}).get("matchNames") or [_meta(monitor).get("namespace")]
        if monitor.get("kind") == "ServiceMonitor":
            for service in services:
                meta = _meta(service)
                if meta.get("namespace") not in namespaces or not _selects(selector, meta.get("labels") or {}):
                    continue
                label = spec.get("jobLabel")
                job = (meta.get("labels") or {}).get(label) if label else meta.get("name")
                target = (service.get("spec") or {}).get("selector") or {}
                ns = meta.get("namespace")
                problems = jobs.setdefault(str(job), [])
                if target and not any(p_ns == ns and _selects(target, labels) for p_ns, labels in pods):
                    problems.append(f"Service {ns}/{meta.get('name')} selects {dict(target)}: no such pods run")
        elif monitor.get("kind") == "PodMonitor":
            label = spec.get("jobLabel")
            job = selector.get(label) if label else f"{_meta(monitor).get('namespace')}/{_meta(monitor).get('name')}"
            jobs.setdefault(str(job), [])
    return jobs


def _rules(objects: Objects) -> Iterator[tuple[str, str, str]]:
    for obj in objects:
        if obj.get("kind") != "PrometheusRule":
            continue
        for group in (obj.get("spec") or {}).get("groups") or ():
            for rule in group.get("rules") or ():
                name = rule.get("alert") or rule.get("record") or "?"
                yield _ref(obj), str(name), str(rule.get("expr") or "")


def unresolvable_alert_jobs(objects: Objects) -> list[str]:
    jobs = scrape_jobs(objects)
    findings: list[str] = []
    for ref, name, expr in _rules(objects):
        for op, value in _JOB_MATCHER.findall(expr):
            matched = [j for j in jobs if (re.fullmatch(value, j) if op == "=~" else j == value)]
            if not matched:
                findings.append(f"{ref} {name}: job {op}{value!r} — no scrape job has that name (it never resolves)")
            for job in matched:
                for problem in jobs[job]:
                    findings.append(f"{ref} {name}: job {job!r} — {problem} (the alert never resolves)")
    return findings


# -- resources ---------------------------------------------------------------------------------------------------
def requests_over_limits(objects: Objects) -> list[str]:
    """A container whose request exceeds its limit is refused by the API server (``Invalid value: must be less
    than or equal to … limit``; k8s.io/kubernetes ``pkg/apis/core/validation`` ValidateResourceRequirements)."""
    from inferstack.gates.references import parse_quantity

    findings: list[str] = []
    for template in all_pod_templates(list(objects)):
        for field, container in template.containers():
            resources = container.get("resources") or {}
            requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
            for name, limit in limits.items():
                request, ceiling = parse_quantity(requests.get(name)), parse_quantity(limit)
                if request is not None and ceiling is not None and request > ceiling:
                    findings.append(
                        f"{template.ref} {field}/{container.get('name')}: requests.{name} {requests[name]} > "
                        f"limits.{name} {limit} — the API server refuses the pod; set the limit (≥ the request) "
                        "where the merged container gets it"
                    )
    return findings


# -- CRD ordering --------------------------------------------------------------------------------------------------
#: API groups the API server serves itself (no CRD needed).
BUILT_IN_GROUPS = frozenset(
    {
        "", "apps", "batch", "policy", "autoscaling", "networking.k8s.io", "rbac.authorization.k8s.io",
        "scheduling.k8s.io", "storage.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io",
        "coordination.k8s.io", "apiregistration.k8s.io", "node.k8s.io", "discovery.k8s.io", "certificates.k8s.io",
        "flowcontrol.apiserver.k8s.io", "resource.k8s.io",
    }
)  # fmt: skip


def api_group(obj: Mapping[str, Any]) -> str:
    version = str(obj.get("apiVersion") or "")
    return version.split("/", 1)[0] if "/" in version else ""


def crds_by_kind(objects: Iterable[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """``(group, kind)`` of every CustomResourceDefinition among ``objects``."""
    return {
        (str((o.get("spec") or {}).get("group")), str(((o.get("spec") or {}).get("names") or {}).get("kind")))
        for o in objects
        if o.get("kind") == "CustomResourceDefinition"
    }


@dataclass(frozen=True)
class DeployStep:
    """What one resource of the deploy applies (a Helm release's rendered objects, a manifest's objects), and the
    steps CloudFormation completes before it (its DependsOn, transitively, and every step of the stacks its stack
    depends on)."""

    name: str
    objects: Sequence[Mapping[str, Any]]
    after: frozenset[str]
    applies_crds: frozenset[tuple[str, str]] = frozenset()
    """``(group, kind)`` its software applies at run time rather than rendering them (:data:`RUNTIME_CRDS`)."""


#: Charts whose CRDs their operator applies when it starts, not the chart: the Dynamo platform 1.4.0 ships none; the
#: operator's ``crd-apply`` init container applies them (deploy/helm/charts/platform/components/operator/templates/
#: manager-rbac / deployment at 1.4.0). With ``--wait`` the release completes only once that pod is ready.
#: EKS add-ons that install CRDs: the cert-manager community add-on (cert-manager's own CRDs).
ADDON_CRDS: dict[str, frozenset[tuple[str, str]]] = {
    "cert-manager": frozenset(
        ("cert-manager.io", kind) for kind in ("Certificate", "CertificateRequest", "Issuer", "ClusterIssuer")
    ),
}
RUNTIME_CRDS: dict[str, frozenset[tuple[str, str]]] = {
    "dynamo-platform": frozenset(
        {
            ("nvidia.com", "DynamoGraphDeployment"),
            ("nvidia.com", "DynamoComponentDeployment"),
            ("nvidia.com", "DynamoGraphDeploymentRequest"),
            ("nvidia.com", "DynamoModel"),
        }
    ),
}
#: Charts whose source is not vendored (:data:`inferstack.gates.releases.UNVENDORED`), so the CRDs their templates
#: carry cannot be rendered here: the knative-operator chart 1.21.1 has its two CRDs in templates/operator.yaml, not
#: in crds/ (knative/operator knative-v1.21.1 config/charts/knative-operator; read at the tag).
UNVENDORED_CHART_CRDS: dict[str, frozenset[tuple[str, str]]] = {
    "knative-operator": frozenset(
        {("operator.knative.dev", "KnativeServing"), ("operator.knative.dev", "KnativeEventing")}
    ),
}


def custom_resources_without_a_crd_before(
    steps: Sequence[DeployStep], external_groups: Iterable[str] = ()
) -> list[str]:
    """Every custom resource's CRD must come from a step completed before its own, or from its own step (a release
    installs its ``crds/`` first). CloudFormation runs resources without a dependency between them concurrently, so
    "before" is a dependency, not template order. ``external_groups``: API groups the cluster is declared to serve
    already (e.g. Knative's, AIBrix's)."""
    provides = {step.name: crds_by_kind(step.objects) | step.applies_crds for step in steps}
    external = set(external_groups)
    findings: list[str] = []
    for step in steps:
        served = provides[step.name].union(*(provides.get(name, set()) for name in step.after))
        for obj in step.objects:
            group = api_group(obj)
            if group in BUILT_IN_GROUPS or group in external or obj.get("kind") == "CustomResourceDefinition":
                continue
            if (group, str(obj.get("kind"))) not in served:
                findings.append(
                    f"{step.name}: {_ref(obj)} ({group}) — no step it depends on installs its CRD: make it depend "
                    "on the release that does (node.add_dependency), or declare the operator as existing"
                )
    return findings


#: CoreDNS as policies see it (the EKS add-on keeps upstream's ``k8s-app: kube-dns``), and an address for the EKS
#: API endpoint (its ENIs are in the VPC, outside the pods' selectors).
COREDNS = Pod("kube-system", {"k8s-app": "kube-dns"})
API_ENDPOINT = Address("10.0.0.10")


def chart_pods_without_paths(charts: Objects, ours: Objects, owned: Iterable[str]) -> list[str]:
    """The rendered charts' pods that land in a namespace inferstack owns (default deny there) and are cut off from
    what every such pod needs: DNS; the Kubernetes API when its ServiceAccount token is mounted (the default); and,
    for each of the charts' Services that selects it, its target ports from the namespace's own pods."""
    namespaces = set(owned)
    policies = [o for o in ours if o.get("kind") == "NetworkPolicy"]
    services = [o for o in charts if o.get("kind") == "Service"]
    problems: list[str] = []
    for template in all_pod_templates(charts):
        if template.namespace not in namespaces:
            continue
        pod = Pod(template.namespace, dict(template.labels))
        if not connection_allowed(policies, pod, COREDNS, 53, "UDP"):
            problems.append(f"{template.ref}: no DNS")
        if template.spec.get("automountServiceAccountToken") is not False and not connection_allowed(
            policies, pod, API_ENDPOINT, 443
        ):
            problems.append(f"{template.ref}: its ServiceAccount token is mounted, but the Kubernetes API is denied")
        named = {p.get("name"): p.get("containerPort") for _, c in template.containers() for p in c.get("ports") or []}
        for service in services:
            selector = (service.get("spec") or {}).get("selector") or {}
            if _meta(service).get("namespace") != template.namespace or not _selects(selector, template.labels):
                continue
            client = Pod(template.namespace, {"inferstack.io/probe": "client"})
            for port in (service.get("spec") or {}).get("ports") or []:
                target = port.get("targetPort", port.get("port"))
                number = named.get(target) if isinstance(target, str) else target
                if number and not connection_allowed(policies, client, pod, int(number)):
                    problems.append(f"{template.ref}: Service {_meta(service).get('name')} port {number} is denied")
    return problems


# -- image facts -------------------------------------------------------------------------------------------------
def _env_value(container: Mapping[str, Any], name: str) -> str | None:
    for item in container.get("env") or []:
        if item.get("name") == name and "value" in item:
            return str(item["value"])
    return None


def _home_writable(container: Mapping[str, Any], home: str) -> bool:
    for mount in container.get("volumeMounts") or []:
        path = str(mount.get("mountPath", "")).rstrip("/")
        if not mount.get("readOnly") and (home == path or home.startswith(path + "/")):
            return True
    return False


def unwritable_homes(objects: Objects) -> list[str]:
    """Containers of a catalogued image that run as a non-root user without a writable HOME — caches under
    ``~/.cache`` (the Hub's, vLLM's compile cache, FlashInfer's JIT) then fail. HOME is the container's ``HOME`` env
    or the image's (:data:`inferstack.catalog.images.IMAGE_FACTS`); it is writable when a writable volume is mounted
    at or above it, or when the container runs as the image's own user on a writable root filesystem."""
    problems: list[str] = []
    for template in all_pod_templates(list(objects)):
        pod_uid = (template.spec.get("securityContext") or {}).get("runAsUser")
        for _, container in template.containers():
            facts = image_facts(str(container.get("image", "")))
            if facts is None:
                continue
            security = container.get("securityContext") or {}
            uid = security.get("runAsUser", pod_uid)
            uid = facts.uid if uid is None else int(uid)
            if uid == 0:
                continue
            home = _env_value(container, "HOME") or facts.home
            if _home_writable(container, home):
                continue
            if uid == facts.uid and not security.get("readOnlyRootFilesystem") and not _env_value(container, "HOME"):
                continue
            unsure = " (?)" if {"uid", "home"} & facts.unconfirmed else ""
            problems.append(
                f"{template.ref}: {container.get('name')} runs as uid {uid} with HOME {home}{unsure}, which the image "
                f"({facts.uri}, user {facts.uid}) does not give it to write — mount an emptyDir there or set HOME"
            )
    return problems
