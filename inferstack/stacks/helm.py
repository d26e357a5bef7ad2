"""Helm releases at the chart versions pinned in the catalog."""

from __future__ import annotations

from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_eks_v2 as eks
from constructs import Construct

from inferstack.catalog.versions import HELM_CHARTS
from inferstack.stacks.delivery import HandedToGitOps, handed_to_gitops


def helm_chart(
    scope: Construct,
    construct_id: str,
    cluster: eks.ICluster,
    name: str,
    namespace: str,
    values: dict[str, Any],
    *,
    create_namespace: bool = False,
    release: str | None = None,
    skip_crds: bool = False,
    wait: bool = False,
) -> Construct:
    """Install catalog chart ``name`` (repository and version from ``HELM_CHARTS``) as release ``release``
    (default: the chart's catalog name). ``skip_crds``: leave the chart's ``crds/`` alone (another release owns
    them, e.g. ``karpenter-crd``). Default False. ``wait``: ``helm --wait`` — the release completes only when its
    Deployments are ready (15 min at most), e.g. before objects a fail-closed webhook of the chart admits. Default
    False. In a stack that hands its Kubernetes side to GitOps, a :class:`~inferstack.stacks.delivery.HandedToGitOps`
    (nothing applied)."""
    if handed_to_gitops(scope):
        return HandedToGitOps(scope, construct_id)
    chart = HELM_CHARTS[name]
    return eks.HelmChart(
        scope,
        construct_id,
        cluster=cluster,
        chart=chart.chart,
        repository=chart.repository,
        version=chart.version,
        namespace=namespace,
        create_namespace=create_namespace,
        release=release or name,
        values=values,
        skip_crds=skip_crds or None,
        wait=wait or None,
        timeout=Duration.minutes(15) if wait else None,
    )
