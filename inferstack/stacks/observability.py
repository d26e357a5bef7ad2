"""Operators whose CRDs workloads use: kube-prometheus-stack (PodMonitor) and KEDA (ScaledObject), installed with
Helm at catalog versions on the system nodes. Workload manifests depend on them (their CRDs must exist first)."""

from __future__ import annotations

from aws_cdk import aws_eks_v2 as eks
from constructs import Construct

from inferstack.catalog.kubernetes import POOL_LABEL, SYSTEM_POOL
from inferstack.stacks.helm import helm_chart

SYSTEM_NODES = {POOL_LABEL: SYSTEM_POOL}
PROMETHEUS_NAMESPACE = "monitoring"
#: Service of the Prometheus this release creates (the default ``autoscaling.prometheus_url`` points here).
PROMETHEUS_URL = "http://kube-prometheus-stack-prometheus.monitoring.svc:9090"


def add_prometheus_stack(scope: Construct, cluster: eks.ICluster) -> eks.HelmChart:
    """Prometheus operator + Prometheus that selects every PodMonitor/ServiceMonitor in the cluster."""
    values = {
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
    }
    return helm_chart(
        scope,
        "KubePrometheusStack",
        cluster,
        "kube-prometheus-stack",
        PROMETHEUS_NAMESPACE,
        values,
        create_namespace=True,
    )


def add_keda(scope: Construct, cluster: eks.ICluster) -> eks.HelmChart:
    values = {"nodeSelector": SYSTEM_NODES, "crds": {"install": True}}
    return helm_chart(scope, "Keda", cluster, "keda", "keda", values, create_namespace=True)
