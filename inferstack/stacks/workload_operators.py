"""The operators workloads' custom resources need, by the name the plan uses (``ResolvedWorkload.operators``):
``prometheus`` (PodMonitor), ``keda`` (ScaledObject), ``lws`` (LeaderWorkerSet). Each installs with Helm at the
catalog version on the system nodes, unless the config says the cluster already runs it (then ``None``: the
workloads' objects are applied without waiting for an inferstack release)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_eks_v2 as eks
from constructs import Construct

from inferstack.catalog.kubernetes import KUBERAY_NAMESPACE, LWS_NAMESPACE, POOL_LABEL, SYSTEM_POOL
from inferstack.catalog.versions import IMAGES
from inferstack.config.model import InferstackConfig
from inferstack.stacks.helm import helm_chart
from inferstack.stacks.observability import add_keda, add_prometheus_stack

OperatorInstaller = Callable[[Construct, eks.ICluster, InferstackConfig], Construct | None]
"""Installs an operator; returns what the workloads' objects depend on (the release, or a readiness gate after it)."""


#: The LWS chart's mutating webhook configuration (charts/lws/templates/webhook/webhook.yaml at v0.10.0, release
#: name ``lws``): ``failurePolicy: Fail`` on every LeaderWorkerSet and pod of one, so nothing may be applied before
#: the webhook serves. LWS's internal cert controller fills ``caBundle`` once it has generated the certificates.
LWS_MUTATING_WEBHOOK = "lws-mutating-webhook-configuration"
#: Controller replicas: its webhooks fail closed, so one replica drained off a system node would block every group
#: (re)creation until it is back; the chart's manager runs with leader election.
LWS_REPLICAS = 2


def lws_values() -> dict[str, Any]:
    """LWS chart values (v0.10.0 values.yaml): two controller replicas on the system nodes, the image pinned to the
    release (git's values say ``main`` / ``Always``), webhook certificates from LWS's built-in cert controller (the
    chart's default ``enableCertManager: false`` — no cert-manager needed)."""
    repository, tag = IMAGES["lws-controller"].rsplit(":", 1)
    return {
        "replicaCount": LWS_REPLICAS,
        "image": {"manager": {"repository": repository, "tag": tag, "pullPolicy": "IfNotPresent"}},
        "nodeSelector": {POOL_LABEL: SYSTEM_POOL},
        "enableCertManager": False,
    }


def add_lws(scope: Construct, cluster: eks.ICluster) -> eks.HelmChart:
    """The LeaderWorkerSet controller and CRD (the chart's ``crds/``) in ``lws-system``, installed with ``--wait``
    (its Deployment ready), and complete only once its webhook has a CA bundle (a ``KubernetesObjectValue`` polls
    the webhook configuration): the aws-eks-v2 apply handler does not retry a refused webhook call, so a
    LeaderWorkerSet applied earlier would fail the deploy. What depends on the returned construct waits for both.

    Caveat: the controller starts serving once the certificates it wrote are mounted into its pod, which can trail
    the CA bundle by the kubelet's secret sync (seconds, at most about a minute)."""
    chart = helm_chart(scope, "Lws", cluster, "lws", LWS_NAMESPACE, lws_values(), create_namespace=True, wait=True)
    ready = eks.KubernetesObjectValue(
        scope,
        "LwsWebhookReady",
        cluster=cluster,
        object_type="mutatingwebhookconfiguration",
        object_name=LWS_MUTATING_WEBHOOK,
        json_path=".webhooks[0].clientConfig.caBundle",
        timeout=Duration.minutes(10),
    )
    ready.node.add_dependency(chart)
    return ready


def kuberay_values() -> dict[str, Any]:
    """KubeRay operator values (chart 1.7.0 values.yaml): the operator on the system nodes, its image pinned to the
    chart's release. The chart has no admission webhooks, so RayServices need only the release (and its CRDs)."""
    repository, tag = IMAGES["kuberay-operator"].rsplit(":", 1)
    return {"image": {"repository": repository, "tag": tag}, "nodeSelector": {POOL_LABEL: SYSTEM_POOL}}


def add_kuberay(scope: Construct, cluster: eks.ICluster) -> eks.HelmChart:
    """The KubeRay operator and its CRDs (the chart's ``crds/``) in ``kuberay-system``, installed with ``--wait``:
    a RayService applied before the operator runs would wait unreconciled, and its CRD must exist."""
    return helm_chart(
        scope,
        "KubeRay",
        cluster,
        "kuberay-operator",
        KUBERAY_NAMESPACE,
        kuberay_values(),
        create_namespace=True,
        wait=True,
    )


def _prometheus(scope: Construct, cluster: eks.ICluster, config: InferstackConfig) -> eks.HelmChart | None:
    observability = config.observability
    return add_prometheus_stack(scope, cluster, observability) if observability.install_prometheus_stack else None


def _keda(scope: Construct, cluster: eks.ICluster, config: InferstackConfig) -> eks.HelmChart | None:
    return add_keda(scope, cluster) if config.observability.install_keda else None


def _lws(scope: Construct, cluster: eks.ICluster, config: InferstackConfig) -> Construct | None:
    return add_lws(scope, cluster) if config.observability.install_lws else None


def _kuberay(scope: Construct, cluster: eks.ICluster, config: InferstackConfig) -> Construct | None:
    return add_kuberay(scope, cluster) if config.observability.install_kuberay else None


#: Operator name (:data:`inferstack.catalog.kubernetes.WORKLOAD_OPERATORS`) → installer.
WORKLOAD_OPERATORS: dict[str, OperatorInstaller] = {
    "prometheus": _prometheus,
    "keda": _keda,
    "lws": _lws,
    "kuberay": _kuberay,
}
