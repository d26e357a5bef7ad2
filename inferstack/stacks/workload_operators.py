"""The operators workloads' custom resources need, by the name the plan uses (``ResolvedWorkload.operators``):
``prometheus`` (PodMonitor), ``keda`` (ScaledObject), ``lws`` (LeaderWorkerSet). Each installs with Helm at the
catalog version on the system nodes, unless the config says the cluster already runs it (then ``None``: the
workloads' objects are applied without waiting for an inferstack release)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_cdk import aws_eks_v2 as eks
from constructs import Construct

from inferstack.catalog.kubernetes import LWS_NAMESPACE, POOL_LABEL, SYSTEM_POOL
from inferstack.catalog.versions import IMAGES
from inferstack.config.model import InferstackConfig
from inferstack.stacks.helm import helm_chart
from inferstack.stacks.observability import add_keda, add_prometheus_stack

OperatorInstaller = Callable[[Construct, eks.ICluster, InferstackConfig], eks.HelmChart | None]


def lws_values() -> dict[str, Any]:
    """LWS chart values (v0.10.0 values.yaml): the controller on the system nodes, its image pinned to the release
    (git's values say ``main`` / ``Always``), webhook certificates from LWS's built-in cert controller (the chart's
    default ``enableCertManager: false`` — no cert-manager needed)."""
    repository, tag = IMAGES["lws-controller"].rsplit(":", 1)
    return {
        "image": {"manager": {"repository": repository, "tag": tag, "pullPolicy": "IfNotPresent"}},
        "nodeSelector": {POOL_LABEL: SYSTEM_POOL},
        "enableCertManager": False,
    }


def add_lws(scope: Construct, cluster: eks.ICluster) -> eks.HelmChart:
    """The LeaderWorkerSet controller and CRD (the chart's ``crds/``) in ``lws-system``."""
    return helm_chart(scope, "Lws", cluster, "lws", LWS_NAMESPACE, lws_values(), create_namespace=True)


def _prometheus(scope: Construct, cluster: eks.ICluster, config: InferstackConfig) -> eks.HelmChart | None:
    observability = config.observability
    return add_prometheus_stack(scope, cluster, observability) if observability.install_prometheus_stack else None


def _keda(scope: Construct, cluster: eks.ICluster, config: InferstackConfig) -> eks.HelmChart | None:
    return add_keda(scope, cluster) if config.observability.install_keda else None


def _lws(scope: Construct, cluster: eks.ICluster, config: InferstackConfig) -> eks.HelmChart | None:
    return add_lws(scope, cluster) if config.observability.install_lws else None


#: Operator name → installer. A kind names the operators it needs in the kind registry; add new ones here.
WORKLOAD_OPERATORS: dict[str, OperatorInstaller] = {"prometheus": _prometheus, "keda": _keda, "lws": _lws}
