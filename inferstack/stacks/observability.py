"""Operators whose CRDs workloads use: kube-prometheus-stack (PodMonitor) and KEDA (ScaledObject), installed with
Helm at catalog versions on the system nodes. Workload manifests depend on them (their CRDs must exist first)."""

from __future__ import annotations

from aws_cdk import aws_eks_v2 as eks
from constructs import Construct

from inferstack.catalog.kubernetes import POOL_LABEL, SYSTEM_POOL
from inferstack.catalog.versions import HELM_CHARTS

SYSTEM_NODES = {POOL_LABEL: SYSTEM_POOL}
PROMETHEUS_NAMESPACE = "monitoring"
#: Service of the Prometheus this release creates (the default ``autoscaling.prometheus_url`` points here).
PROMETHEUS_URL = "http://kube-prometheus-stack-prometheus.monitoring.svc:9090"


def _chart(
    scope: Construct, construct_id: str, cluster: eks.ICluster, name: str, namespace: str, values: dict
) -> eks.HelmChart:
    chart = HELM_CHARTS[name]
    return eks.HelmChart(
        scope,
        construct_id,
        cluster=cluster,
        chart=chart.chart,
        repository=chart.repository,
        version=chart.version,
        namespace=namespace,
        create_namespace=True,
        release=name,
        values=values,
    )


def add_prometheus_stack(scope: Construct, cluster: eks.ICluster) -> eks.HelmChart:
    """Prometheus operator + Prometheus that selects every PodMonitor/ServiceMonitor in the cluster."""
    return _chart(
        scope,
        "KubePrometheusStack",
        cluster,
        "kube-prometheus-stack",
        PROMETHEUS_NAMESPACE,
        {
            "grafana": {"enabled": False},
            "alertmanager": {"enabled": False},
            "prometheusOperator": {"nodeSelector": SYSTEM_NODES},
            "kube-state-metrics": {"nodeSelector": SYSTEM_NODES},
            "prometheus": {
                "prometheusSpec": {
                    "nodeSelector": SYSTEM_NODES,
                    "retention": "15d",
                    "podMonitorSelectorNilUsesHelmValues": False,
                    "serviceMonitorSelectorNilUsesHelmValues": False,
                }
            },
        },
    )


def add_keda(scope: Construct, cluster: eks.ICluster) -> eks.HelmChart:
    return _chart(
        scope,
        "Keda",
        cluster,
        "keda",
        "keda",
        {
            "nodeSelector": SYSTEM_NODES,
            "crds": {"install": True},
        },
    )
