"""Operators whose CRDs workloads use: kube-prometheus-stack (PodMonitor) and KEDA (ScaledObject), installed with
Helm at catalog versions on the system nodes. Workload manifests depend on them (their CRDs must exist first).

Prometheus keeps its samples on a persistent volume: the EBS CSI driver add-on (Pod Identity role with the AWS
managed driver policy) and an encrypted gp3 StorageClass that retains the volume. CRDs: Helm installs a chart's
``crds/`` once and never upgrades them, so kube-prometheus-stack's own CRD upgrade Job is on (``crds.upgradeJob``,
chart 88.5.3 values.yaml) and KEDA's CRDs are templates (``crds.install``), which Helm upgrades.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import cdk8s
from aws_cdk import aws_eks_v2 as eks
from aws_cdk import aws_iam as iam
from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.kubernetes import (
    GP3_STORAGE_CLASS,
    POOL_LABEL,
    PROMETHEUS_NAMESPACE,
    SYSTEM_POOL,
    operator_namespaces,
)
from inferstack.catalog.versions import IMAGES, STORAGE_ADDONS
from inferstack.config.model import ObservabilityConfig
from inferstack.stacks.compute import add_chart_manifest
from inferstack.stacks.helm import helm_chart
from inferstack.stacks.nag import acknowledge, managed_policy
from inferstack.stacks.pod_identity import pod_identity_role

SYSTEM_NODES = {POOL_LABEL: SYSTEM_POOL}
EBS_CSI_ADDON = "aws-ebs-csi-driver"
EBS_CSI_SERVICE_ACCOUNT = "ebs-csi-controller-sa"
EBS_CSI_POLICY = "service-role/AmazonEBSCSIDriverPolicy"
EBS_CSI_MANAGED_POLICY = (
    "The EBS CSI controller creates, attaches and deletes volumes it cannot know in advance; AWS maintains "
    "AmazonEBSCSIDriverPolicy for exactly that (EBS CSI driver add-on documentation)"
)


class Gp3StorageClassChart(cdk8s.Chart):
    """The ``inferstack-gp3`` StorageClass (``ebs.csi.aws.com``, gp3, encrypted, ``Retain``,
    ``WaitForFirstConsumer`` so the volume is created in the zone of the pod)."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id, disable_resource_name_hashes=True)
        k8s.KubeStorageClass(
            self,
            "gp3",
            metadata=k8s.ObjectMeta(name=GP3_STORAGE_CLASS),
            provisioner="ebs.csi.aws.com",
            parameters={"type": "gp3", "encrypted": "true"},
            reclaim_policy="Retain",
            volume_binding_mode="WaitForFirstConsumer",
            allow_volume_expansion=True,
        )


def gp3_storage_class(scope: Construct, cluster: eks.ICluster) -> Construct:
    """The ``inferstack-gp3`` StorageClass manifest — once per stack: Prometheus' volume and a gateway's Postgres
    share it."""
    existing = scope.node.try_find_child("Gp3StorageClass")
    if existing is not None:
        return existing
    return add_chart_manifest(scope, "Gp3StorageClass", cluster, Gp3StorageClassChart(cdk8s.App(), "gp3"))


def add_ebs_csi_addon(scope: Construct, cluster: eks.ICluster) -> eks.Addon:
    """The EBS CSI driver add-on, its controller bound to a role with the AWS managed driver policy through Pod
    Identity. Once per stack: a second call returns the first add-on (Prometheus and the NIM cache both need it)."""
    existing = scope.node.try_find_child(f"Addon-{EBS_CSI_ADDON}")
    if isinstance(existing, eks.Addon):
        return existing
    role = pod_identity_role(
        scope,
        "Role-ebs-csi",
        "EBS CSI driver add-on (Prometheus volumes)",
        namespace="kube-system",
        service_accounts=(EBS_CSI_SERVICE_ACCOUNT,),
        cluster_name=cluster.cluster_name,
    )
    role.add_managed_policy(iam.ManagedPolicy.from_aws_managed_policy_name(EBS_CSI_POLICY))
    acknowledge(role, "IAM4", EBS_CSI_MANAGED_POLICY, (managed_policy(EBS_CSI_POLICY),))
    addon = eks.Addon(
        scope,
        f"Addon-{EBS_CSI_ADDON}",
        cluster=cluster,
        addon_name=EBS_CSI_ADDON,
        addon_version=STORAGE_ADDONS[EBS_CSI_ADDON],
        preserve_on_delete=False,
    )
    addon.node.default_child.add_property_override(  # type: ignore[union-attr]
        "PodIdentityAssociations", [{"ServiceAccount": EBS_CSI_SERVICE_ACCOUNT, "RoleArn": role.role_arn}]
    )
    return addon


#: The label the API server sets on every namespace to its name (Kubernetes 1.21+, NamespaceDefaultLabelName).
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
#: The kube-prometheus-stack 88.5.3 Prometheus selectors of the namespaces whose monitors, rules, probes and scrape
#: configs it loads (values.yaml: each ``{}``, every namespace, by default).
NAMESPACE_SELECTORS = (
    "podMonitorNamespaceSelector",
    "serviceMonitorNamespaceSelector",
    "ruleNamespaceSelector",
    "probeNamespaceSelector",
    "scrapeConfigNamespaceSelector",
)


def observed_namespaces(workload_namespaces: Sequence[str]) -> tuple[str, ...]:
    """The namespaces Prometheus loads monitors and rules from: the workloads', every platform namespace
    (:func:`~inferstack.catalog.kubernetes.operator_namespaces`: reserved, no tenant writes there) and kube-system."""
    return tuple(sorted({*workload_namespaces, *operator_namespaces(), "kube-system"}))


def prometheus_values(config: ObservabilityConfig, namespaces: Sequence[str] | None = None) -> dict[str, Any]:
    """kube-prometheus-stack values: Prometheus selects the PodMonitors/ServiceMonitors/PrometheusRules of
    ``namespaces`` (by ``kubernetes.io/metadata.name``, which the API server sets on every namespace; default: every
    namespace), Grafana (``grafana``) loads the dashboard ConfigMaps of its own namespace only — so a tenant of
    another namespace can neither add rules and scrape jobs nor replace a dashboard (same uid) — and Prometheus keeps
    ``prometheus_retention_days`` on a ``prometheus_storage_gib`` gp3 volume; operator, kube-state-metrics and the
    CRD upgrade Job on the system nodes."""
    selector: dict[str, Any] = (
        {"matchExpressions": [{"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": sorted(namespaces)}]}
        if namespaces is not None
        else {}
    )
    return {
        "crds": {
            "enabled": True,
            "upgradeJob": {
                "enabled": True,
                "image": {"busybox": {"tag": IMAGES["busybox"].rsplit(":", 1)[1]}},
                "nodeSelector": SYSTEM_NODES,
            },
        },
        # Grafana with its dashboard sidecar (chart defaults: label grafana_dashboard "1", every namespace); the admin
        # password is the grafana chart's generated one (88.5.3 sets none). The grafana subchart's own values are not
        # vendored, so nothing else of it is set.
        "grafana": {
            "enabled": config.grafana,
            "nodeSelector": SYSTEM_NODES,
            # only the ConfigMaps of Prometheus' namespace, where inferstack writes its dashboards (default: ALL)
            "sidecar": {"dashboards": {"searchNamespace": PROMETHEUS_NAMESPACE}},
        },
        "alertmanager": {"enabled": False},
        # EKS runs the control plane outside the cluster: no controller-manager, scheduler or etcd pod exists to
        # scrape, so their Services select nothing and the chart's ``absent(up{job=…})`` alerts
        # (KubeControllerManagerDown, KubeSchedulerDown, etcdMembersDown…) would fire for as long as the cluster runs
        # (the rendered-charts gate holds every rule's job to a target that exists). Alertmanager is not installed:
        # its rules go too.
        "kubeControllerManager": {"enabled": False},
        "kubeScheduler": {"enabled": False},
        "kubeEtcd": {"enabled": False},
        "defaultRules": {
            "rules": {
                "alertmanager": False,
                "etcd": False,
                "kubeControllerManager": False,
                "kubeSchedulerAlerting": False,
                "kubeSchedulerRecording": False,
            }
        },
        "prometheusOperator": {
            "nodeSelector": SYSTEM_NODES,
            # the webhook certificate Jobs (admission-create / -patch) read their own key
            "admissionWebhooks": {"patch": {"nodeSelector": SYSTEM_NODES}},
        },
        # kube_pod_labels with the pods' app.kubernetes.io/name: the GPU panels and alerts select a workload's GPUs
        # by its pods' label (a pod-name pattern would match <name>-bench and <name>-70b too)
        "kube-state-metrics": {
            "nodeSelector": SYSTEM_NODES,
            "metricLabelsAllowlist": ["pods=[app.kubernetes.io/name]"],
        },
        "prometheus": {
            "prometheusSpec": {
                "nodeSelector": SYSTEM_NODES,
                "retention": f"{config.prometheus_retention_days}d",
                # Prometheus sizes are base 2 ("GB" = GiB): 85 % of the volume, so a full disk never stops it.
                "retentionSize": f"{int(config.prometheus_storage_gib * 0.85)}GB",
                "podMonitorSelectorNilUsesHelmValues": False,
                "serviceMonitorSelectorNilUsesHelmValues": False,
                "ruleSelectorNilUsesHelmValues": False,
                **{name: selector for name in NAMESPACE_SELECTORS},
                "storageSpec": {
                    "volumeClaimTemplate": {
                        "spec": {
                            "storageClassName": config.prometheus_storage_class or GP3_STORAGE_CLASS,
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": f"{config.prometheus_storage_gib}Gi"}},
                        }
                    }
                },
            }
        },
    }


def add_prometheus_stack(
    scope: Construct, cluster: eks.ICluster, config: ObservabilityConfig, namespaces: Sequence[str] | None = None
) -> Construct:
    """Prometheus operator + a persistent Prometheus (see :func:`prometheus_values`) loading the monitors of
    ``namespaces`` (default: every namespace); with the default storage class, the gp3 StorageClass (and, unless
    ``install_ebs_csi_driver`` is off, the EBS CSI add-on) first."""
    dependencies: list[Construct] = []
    if config.prometheus_storage_class is None:
        if config.install_ebs_csi_driver:
            dependencies.append(add_ebs_csi_addon(scope, cluster))
        dependencies.append(gp3_storage_class(scope, cluster))
    chart = helm_chart(
        scope,
        "KubePrometheusStack",
        cluster,
        "kube-prometheus-stack",
        PROMETHEUS_NAMESPACE,
        prometheus_values(config, namespaces),
        create_namespace=True,
    )
    for dependency in dependencies:
        chart.node.add_dependency(dependency)
    return chart


def keda_values() -> dict[str, Any]:
    """KEDA values: operator and metrics server on the system nodes, CRDs as templates (so Helm upgrades them)."""
    return {"nodeSelector": SYSTEM_NODES, "crds": {"install": True}}


def add_keda(scope: Construct, cluster: eks.ICluster) -> Construct:
    """KEDA in its own namespace (ScaledObject CRD)."""
    return helm_chart(scope, "Keda", cluster, "keda", "keda", keda_values(), create_namespace=True)
