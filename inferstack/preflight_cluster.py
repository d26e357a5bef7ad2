"""Preflight of a team's own cluster (``inferstack preflight --cluster NAME``): what it already runs — its EKS
add-ons (``eks:ListAddons``) and its Helm releases (the release Secrets Helm keeps, read with ``kubectl``) — against
what inferstack would install there, so "Addon already exists" or two operators fighting over one CRD is a line
with the switch that avoids it, before ``cdk deploy``.

The config is judged as :func:`~inferstack.config.existing_cluster.on_a_teams_cluster` makes it (the add-ons a
cluster usually runs are off unless the config turns them on). A switch that is on and finds its add-on or chart
running already fails; one that is off passes and says inferstack leaves it. Read-only: ``eks:DescribeCluster``,
``eks:ListAddons``, ``eks:DescribeAddon``, ``kubectl get secrets -l owner=helm`` and, when a workload has a router,
``kubectl get customresourcedefinitions`` (the InferencePool CRD: the cluster's own, or the one an earlier deploy
of inferstack applied, which carries ``app.kubernetes.io/part-of: inferstack``).
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import json
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from inferstack.catalog.routing import (
    APPLIED_BY,
    APPLIED_BY_LABEL,
    INFERENCE_POOL_BUNDLE_ANNOTATION,
    INFERENCE_POOL_CRD_NAME,
)
from inferstack.config.existing_cluster import on_a_teams_cluster
from inferstack.config.model import InferstackConfig
from inferstack.plan.kserve import installs_knative
from inferstack.plan.workloads import workloads_plan
from inferstack.preflight import CheckResult, ClientFactory, _error

#: EKS add-ons inferstack creates on a cluster → the config switch that installs them.
ADDON_SWITCHES: dict[str, str] = {
    "aws-mountpoint-s3-csi-driver": "storage.install_csi_drivers",
    "aws-fsx-csi-driver": "storage.install_csi_drivers",
    "aws-efs-csi-driver": "storage.install_csi_drivers",
    "aws-ebs-csi-driver": "observability.install_ebs_csi_driver",
    "cert-manager": "observability.install_cert_manager",
    "metrics-server": "observability.install_metrics_server",
}
#: The CSI drivers' add-ons inferstack creates only with their storage (stacks/storage.py: the Mountpoint driver with
#: the model bucket, FSx's with storage.fsx, EFS's with storage.efs): config → whether this platform creates it.
STORAGE_ADDONS: dict[str, Callable[[InferstackConfig], bool]] = {
    "aws-mountpoint-s3-csi-driver": lambda config: config.storage.model_bucket is not None,
    "aws-fsx-csi-driver": lambda config: config.storage.fsx is not None,
    "aws-efs-csi-driver": lambda config: config.storage.efs is not None,
}
#: Charts of the cluster's add-ons → the switch that installs them (inferstack installs each when its switch is on
#: and the platform needs it: pools of that accelerator, Karpenter pools). The charts of the EKS add-ons inferstack
#: creates are here too: a cluster may run cert-manager or a CSI driver as a Helm release instead.
CLUSTER_CHART_SWITCHES: dict[str, str] = {
    **ADDON_SWITCHES,
    "karpenter": "compute.install_karpenter",
    "karpenter-crd": "compute.install_karpenter",
    "gpu-operator": "compute.gpu_operator.install",
    "neuron-helm-chart": "compute.neuron_plugin.install",
    "aws-efa-k8s-device-plugin": "compute.efa_plugin.install",
    "kube-prometheus-stack": "observability.install_prometheus_stack",
}
#: Charts of the workload operators → (the operator the plan names, its switch): installed when a workload needs
#: the operator and the switch is on.
OPERATOR_CHART_SWITCHES: dict[str, tuple[str, str]] = {
    "kuberay-operator": ("kuberay", "observability.install_kuberay"),
    "lws": ("lws", "observability.install_lws"),
    "keda": ("keda", "observability.install_keda"),
    "k8s-nim-operator": ("nim", "observability.install_nim_operator"),
    "dynamo-platform": ("dynamo", "observability.install_dynamo_operator"),
    "kserve-crd": ("kserve", "observability.install_kserve"),
    "kserve-resources": ("kserve", "observability.install_kserve"),
    "kserve-runtime-configs": ("kserve", "observability.install_kserve"),
    "knative-operator": ("kserve", "observability.install_knative_serving"),
    "kserve": ("kserve", "observability.install_kserve"),  # KServe's single chart before v0.15
}
#: The fix where turning the switch off is not the way: the knative-operator's (KSERVE-KNATIVE then refuses a
#: Knative-mode workload without Knative).
DECLARE_INSTEAD: dict[str, str] = {
    "knative-operator": "declare the cluster's Knative Serving in cluster.knative_serving (gateway_namespace: "
    "knative-serving when the Knative Operator installed it): inferstack then installs none",
}
#: Catalog charts inferstack installs nowhere yet, each with the reason (every catalog chart is classified).
NOT_INSTALLED: dict[str, str] = {
    "inferencepool": "the Gateway API inference extension's release: workloads[].routing renders its picker (the "
    "image of this release) and InferencePool itself, in the standalone layout, without the chart",
}


@dataclass(frozen=True)
class HelmRelease:
    """A deployed Helm release on the cluster."""

    name: str
    namespace: str
    chart: str
    version: str
    problem: str | None = None
    """Why its release record could not be read (then ``chart`` is empty). Default none."""


HelmLister = Callable[[str], list[HelmRelease]]
"""``kubectl context → the cluster's deployed Helm releases``. :raises RuntimeError: they cannot be read."""


def decode_release(secret: dict[str, Any]) -> HelmRelease:
    """A Helm 3/4 release Secret (``sh.helm.release.v1.<name>.v<n>``, label ``owner=helm``): its ``data.release`` is
    the API's base64 of Helm's own base64 of the gzipped release JSON (helm pkg/storage/driver/util.go)."""
    encoded = base64.b64decode(base64.b64decode(secret["data"]["release"]))
    payload = gzip.decompress(encoded) if encoded[:2] == b"\x1f\x8b" else encoded
    release = json.loads(payload)
    metadata = release["chart"]["metadata"]
    return HelmRelease(
        name=str(release["name"]),
        namespace=str(release["namespace"]),
        chart=str(metadata["name"]),
        version=str(metadata.get("version", "?")),
    )


def _kubectl_items(context: str, *args: str) -> list[dict[str, Any]]:
    """``items`` of ``kubectl --context CONTEXT get ARGS -o json``. :raises RuntimeError: kubectl is missing, refused
    or answered something that is not a list."""
    command = ["kubectl", "--context", context, "get", *args, "-o", "json"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"kubectl: {exc}") from exc
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip() or f"kubectl exited {result.returncode}")
    try:
        items = json.loads(result.stdout).get("items", [])
    except (ValueError, AttributeError) as exc:
        raise RuntimeError(f"kubectl printed no list: {exc}") from exc
    if not isinstance(items, list):
        raise RuntimeError(f"kubectl printed no list: items is {type(items).__name__}")
    return [item for item in items if isinstance(item, dict)]


def kubectl_releases(context: str) -> list[HelmRelease]:
    """The deployed releases of the cluster of kubeconfig context ``context`` (``aws eks update-kubeconfig`` names
    it by the cluster's ARN). :raises RuntimeError: kubectl is missing or refused."""
    found = _kubectl_items(context, "secrets", "--all-namespaces", "-l", "owner=helm,status=deployed")
    releases = []
    for item in found:
        try:
            releases.append(decode_release(item))
        except (KeyError, TypeError, ValueError, OSError) as exc:  # OSError: gzip's BadGzipFile
            meta = item.get("metadata") or {}
            labels = meta.get("labels") or {}
            name, namespace = str(labels.get("name", meta.get("name", "?"))), str(meta.get("namespace", "?"))
            releases.append(HelmRelease(name, namespace, "", "?", problem=f"{type(exc).__name__}: {exc}"))
    return releases


#: CRDs inferstack applies itself (no chart installs them) → (the operator that needs one, its install switch).
APPLIED_CRDS: dict[str, tuple[str, str]] = {
    INFERENCE_POOL_CRD_NAME: ("inference-pool", "observability.install_inference_pool_crd"),
}
#: ``name`` → its ``metadata`` (``labels``, ``annotations``), for each CRD the cluster serves of those asked for.
CrdLister = Callable[[str, tuple[str, ...]], dict[str, dict[str, dict[str, str]]]]


def kubectl_crds(context: str, names: tuple[str, ...]) -> dict[str, dict[str, dict[str, str]]]:
    """Which of the CRDs ``names`` the cluster of context ``context`` has, with their labels and annotations.
    :raises RuntimeError: kubectl is missing or refused."""
    found = {}
    for item in _kubectl_items(context, "customresourcedefinitions"):
        meta = item.get("metadata") or {}
        if meta.get("name") in names:
            found[str(meta["name"])] = {
                part: {str(k): str(v) for k, v in (meta.get(part) or {}).items()} for part in ("labels", "annotations")
            }
    return found


def _switch(config: InferstackConfig, path: str) -> bool:
    node: Any = config
    for name in path.split("."):
        node = getattr(node, name)
    return bool(node)


class TeamCluster:
    """The checks of one config against a team's cluster ``name`` (clients from ``clients``, releases from
    ``releases``)."""

    def __init__(
        self,
        config: InferstackConfig,
        name: str,
        clients: ClientFactory,
        releases: HelmLister = kubectl_releases,
        crds: CrdLister = kubectl_crds,
    ) -> None:
        self.name, self.clients, self.releases, self.crds = name, clients, releases, crds
        self.config = on_a_teams_cluster(config)
        self.operators = set(workloads_plan(self.config).operators)

    def run(self) -> list[CheckResult]:
        results: list[CheckResult] = []
        try:
            cluster = self.clients("eks").describe_cluster(name=self.name)["cluster"]
        except Exception as exc:
            return [CheckResult("cluster", self.name, False, _error(exc), "check the cluster name, region and role")]
        results.append(self._version(cluster))
        context = str(cluster.get("arn", self.name))
        for check in (self.addons, lambda: self.helm(context), lambda: self.applied_crds(context)):
            try:
                results.extend(check())
            except Exception as exc:
                results.append(CheckResult("cluster", self.name, False, _error(exc), "check credentials and region"))
        return results

    def _version(self, cluster: dict[str, Any]) -> CheckResult:
        version, wanted = str(cluster.get("version")), self.config.cluster.kubernetes_version
        ok = version == wanted
        return CheckResult(
            "cluster",
            self.name,
            ok,
            f"Kubernetes {version}" + ("" if ok else f"; the config says {wanted}"),
            "" if ok else f"set cluster.kubernetes_version: '{version}' (charts and flags follow it)",
        )

    def addons(self) -> Iterator[CheckResult]:
        client = self.clients("eks")
        running = [
            a for page in client.get_paginator("list_addons").paginate(clusterName=self.name) for a in page["addons"]
        ]
        for addon in sorted(running):
            switch = ADDON_SWITCHES.get(addon)
            if switch is None:
                yield CheckResult("addon", addon, True, "runs (inferstack does not install it)")
            elif addon in STORAGE_ADDONS and not STORAGE_ADDONS[addon](self.config):
                yield CheckResult("addon", addon, True, "runs (this platform has no storage that needs it)")
            else:
                yield self._judged(
                    "addon", addon, "runs", switch, addon, "creating it again fails the deploy (Addon already exists)"
                )

    def helm(self, context: str) -> Iterator[CheckResult]:
        try:
            releases = self.releases(context)
        except RuntimeError as exc:
            yield CheckResult(
                "helm",
                context,
                False,
                f"cannot list the Helm releases: {exc}",
                f"aws eks update-kubeconfig --name {self.name} (kubectl context {context}), with a role that may "
                "list Secrets",
            )
            return
        ours = {*CLUSTER_CHART_SWITCHES, *OPERATOR_CHART_SWITCHES}
        for release in sorted(releases, key=lambda r: (r.namespace, r.name)):
            subject = f"{release.namespace}/{release.name}"
            if release.problem is not None:
                yield CheckResult(
                    "helm",
                    subject,
                    False,
                    f"its release record does not read as Helm's: {release.problem}",
                    f"look at it with: helm -n {release.namespace} history {release.name}",
                )
                continue
            what = f"{release.chart} {release.version}"
            if release.chart not in ours:
                yield CheckResult("helm", subject, True, f"{what} (inferstack does not install it)")
                continue
            switch, needed = self._chart_switch(release.chart)
            if switch is None or not needed:
                yield CheckResult("helm", subject, True, f"{what}; inferstack does not install it here")
            else:
                consequence = "a second release fights it over its CRDs and webhooks"
                judged = self._judged("helm", subject, f"{what} runs", switch, release.chart, consequence)
                if not judged.passed and release.chart in DECLARE_INSTEAD:
                    judged = dataclasses.replace(judged, fix=DECLARE_INSTEAD[release.chart])
                yield judged

    def applied_crds(self, context: str) -> Iterator[CheckResult]:
        """The CRDs inferstack applies itself (the InferencePool's, for a router) against the cluster's: one there
        already is replaced when the switch is on; none there, with the switch off, leaves the custom resources
        without their CRD."""
        needed = {crd: why for crd, why in APPLIED_CRDS.items() if why[0] in self.operators}
        if not needed:
            return
        try:
            present = self.crds(context, tuple(sorted(needed)))
        except RuntimeError as exc:
            yield CheckResult(
                "crd",
                context,
                False,
                f"cannot list the CRDs: {exc}",
                f"aws eks update-kubeconfig --name {self.name} (kubectl context {context}), with a role that may "
                "list CustomResourceDefinitions",
            )
            return
        for crd, (_, switch) in sorted(needed.items()):
            on = _switch(self.config, switch)
            if crd in present and present[crd].get("labels", {}).get(APPLIED_BY_LABEL) == APPLIED_BY:
                yield CheckResult("crd", crd, True, "applied by inferstack (an earlier deploy)")
            elif crd in present:
                version = present[crd].get("annotations", {}).get(INFERENCE_POOL_BUNDLE_ANNOTATION, "?")
                yield CheckResult(
                    "crd",
                    crd,
                    not on,
                    f"the cluster has it (bundle {version})"
                    + (f", and {switch} is on: inferstack's would replace it" if on else f"; {switch} is off"),
                    f"set {switch}: false (the cluster's CRD serves the routers)" if on else "",
                )
            else:
                yield CheckResult(
                    "crd",
                    crd,
                    on,
                    "not on the cluster" + ("; inferstack applies it" if on else f", and {switch} is off"),
                    "" if on else f"set {switch}: true, or install the CRD (a router's InferencePool needs it)",
                )

    def _judged(self, check: str, subject: str, what: str, switch: str, name: str, consequence: str) -> CheckResult:
        """``name`` runs already: a failure when ``switch`` would install it again, else left alone."""
        if _switch(self.config, switch):
            return CheckResult(
                check,
                subject,
                False,
                f"{what} already, and {switch} is on: {consequence}",
                f"set {switch}: false (the cluster's {name} serves the platform)",
            )
        return CheckResult(check, subject, True, f"{what}; {switch} is off, inferstack leaves it")

    def _chart_switch(self, chart: str) -> tuple[str | None, bool]:
        """The switch that installs ``chart`` and whether this platform needs the chart at all."""
        if chart in CLUSTER_CHART_SWITCHES:
            return CLUSTER_CHART_SWITCHES[chart], True
        if chart == "knative-operator":
            return OPERATOR_CHART_SWITCHES[chart][1], installs_knative(self.config)
        if chart in OPERATOR_CHART_SWITCHES:
            operator, switch = OPERATOR_CHART_SWITCHES[chart]
            return switch, operator in self.operators
        return None, False
