"""The Helm releases of a synthesized app, rendered offline from the vendored chart sources.

A release is read from its ``Custom::AWSCDK-EKS-HelmChart`` resource (chart, version, release, namespace and the
values JSON; deploy-time tokens inside the values become ``${Token[deploy-time]}``). Its chart source is
``../shared/upstream/charts-src/<chart>/<version>`` (README there: every tree at the upstream commit, byte for
byte). Charts without a vendored source are listed in :data:`UNVENDORED` with the reason.

Releases render in deploy order: each sees, as ``.Capabilities.APIVersions``, the CRDs of the releases before it
in the same app (the kubectl provider runs ``helm upgrade --install`` against a cluster that has them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inferstack.catalog.versions import HELM_CHARTS
from inferstack.cli import json_property
from inferstack.gates.helm import HelmError, crd_api_versions, render

HELM_TYPE = "Custom::AWSCDK-EKS-HelmChart"

#: Charts inferstack installs whose full source is not vendored (../shared/upstream/charts-src/README.md), each
#: with the reason; their values are still checked against the vendored values.yaml (tests/gates/test_conformance).
UNVENDORED: dict[str, str] = {
    "neuron-helm-chart": "aws-neuron/neuron-helm-charts 1.10.0: only values.yaml (1.9.0) is vendored",
    "aws-mountpoint-s3-csi-driver": "installed as an EKS add-on, not a Helm release",
    "aws-fsx-csi-driver": "installed as an EKS add-on, not a Helm release",
    "inferencepool": "Gateway API inference extension chart: source not vendored",
    "knative-operator": (
        "knative/operator 1.21.1 (tag knative-v1.21.1, config/charts/knative-operator): only values.yaml is vendored; "
        "rendered by hand with our values at the tag (26 objects: our images, node affinity and seccomp profile "
        "land; its CRDs are in templates/, see cluster_view.UNVENDORED_CHART_CRDS)"
    ),
}


@dataclass(frozen=True)
class Release:
    """One Helm release of a synthesized app."""

    stack: str
    logical_id: str
    chart: str
    version: str
    release: str
    namespace: str
    values: Mapping[str, Any]
    depends_on: tuple[str, ...] = ()

    @property
    def ref(self) -> str:
        return f"{self.release} ({self.chart} {self.version}, {self.stack}/{self.logical_id})"


@dataclass(frozen=True)
class RenderedRelease:
    """A release with what helm rendered from it (``error`` when helm refused)."""

    release: Release
    objects: tuple[dict[str, Any], ...] = ()
    error: str | None = None
    skipped: str | None = None
    """Why it was not rendered (no vendored source)."""
    api_versions: frozenset[str] = field(default=frozenset())


def releases(templates: Mapping[str, Mapping[str, Any]]) -> list[Release]:
    """Every Helm release in ``templates`` (stack name → template), in stack order then template order."""
    found: list[Release] = []
    for stack, template in templates.items():
        for logical_id, resource in (template.get("Resources") or {}).items():
            if resource.get("Type") != HELM_TYPE:
                continue
            props = resource["Properties"]
            depends = resource.get("DependsOn") or ()
            found.append(
                Release(
                    stack=stack,
                    logical_id=logical_id,
                    chart=props["Chart"],
                    version=props["Version"],
                    release=props.get("Release") or props["Chart"],
                    namespace=props.get("Namespace") or "default",
                    values=json_property(props["Values"]) if "Values" in props else {},
                    depends_on=(depends,) if isinstance(depends, str) else tuple(depends),
                )
            )
    return found


def chart_source(charts_src: Path, chart: str, version: str) -> Path | None:
    """The vendored chart directory of ``chart`` at ``version`` (the catalog's ``reference_version`` names the
    directory where the published version differs, e.g. lws ``v0.10.0`` → ``0.10.0``), or None."""
    for candidate in _directory_names(chart, version):
        path = charts_src / chart / candidate
        if (path / "Chart.yaml").is_file():
            return path
    return None


def _directory_names(chart: str, version: str) -> Iterator[str]:
    yield version
    entry = HELM_CHARTS.get(chart)
    if entry is not None and entry.reference_version:
        yield entry.reference_version
    yield version.removeprefix("v")


def render_releases(found: Sequence[Release], charts_src: Path, *, kube_version: str) -> list[RenderedRelease]:
    """Render each release from ``charts_src`` in order, each seeing the CRDs rendered before it."""
    served: set[str] = set()
    rendered: list[RenderedRelease] = []
    for release in found:
        source = chart_source(charts_src, release.chart, release.version)
        if source is None:
            reason = UNVENDORED.get(release.chart, f"no vendored source for {release.chart} {release.version}")
            rendered.append(RenderedRelease(release, skipped=reason))
            continue
        apis = frozenset(served)
        try:
            objects = render(
                source,
                release=release.release,
                namespace=release.namespace,
                values=release.values,
                kube_version=kube_version,
                api_versions=apis,
            )
        except HelmError as error:
            rendered.append(RenderedRelease(release, error=str(error), api_versions=apis))
            continue
        for obj in objects:
            obj.setdefault("metadata", {}).setdefault("namespace", release.namespace) if _namespaced(obj) else None
        served |= crd_api_versions(objects)
        rendered.append(RenderedRelease(release, objects=tuple(objects), api_versions=apis))
    return rendered


#: Kinds helm renders that are cluster-scoped (no namespace is filled in for them).
CLUSTER_SCOPED = frozenset(
    {
        "Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "PriorityClass",
        "StorageClass", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "APIService",
        "PersistentVolume", "RuntimeClass", "IngressClass", "ClusterServingRuntime", "ClusterStorageContainer",
        "NodePool", "EC2NodeClass", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
        "ClusterPolicy", "NodeFeatureRule", "ClusterTrainingRuntime", "LLMInferenceServiceConfig",
        "CSIDriver", "PodSecurityPolicy",
    }
)  # fmt: skip


def _namespaced(obj: Mapping[str, Any]) -> bool:
    return obj.get("kind") not in CLUSTER_SCOPED


def rendered_objects(rendered: Sequence[RenderedRelease]) -> list[dict[str, Any]]:
    """Every object of every rendered release."""
    return [obj for r in rendered for obj in r.objects]
