"""Operators and device plugins for accelerated nodes, installed with Helm at catalog-pinned versions.

Each runs only where it is needed: controllers on the system node group, node agents on the accelerated nodes
(tolerating their taints). inferstack owns the Neuron device plugin through the Neuron Helm chart; aws-cdk-lib's
built-in Neuron DaemonSet is never added (node groups are created without ``add_nodegroup_capacity``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import aws_cdk as cdk
import cdk8s
from aws_cdk import aws_eks_v2 as eks
from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.kubernetes import (
    ACCELERATOR_LABEL,
    ACCELERATOR_TAINT_KEY,
    EFA_LABEL,
    NEURON_HEALTHCHECK_NAMESPACE,
    POOL_LABEL,
    SYSTEM_POOL,
)
from inferstack.catalog.versions import (
    DEFAULT_KUBERNETES_VERSION,
    EKS_REGISTRY_ACCOUNTS,
    KUBE_SCHEDULER_IMAGE,
    kube_scheduler_tag,
)
from inferstack.config.compute import Taint
from inferstack.stacks.helm import helm_chart

SYSTEM_NODES = {POOL_LABEL: SYSTEM_POOL}
EFA_PLUGIN_REPOSITORY = "eks/aws-efa-k8s-device-plugin"


def _tolerations(taints: Sequence[Taint]) -> list[dict[str, str]]:
    """Kubernetes tolerations (``Exists``) of ``taints``, in order, without repeats."""
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for taint in taints:
        seen.setdefault((taint.key, taint.effect), {"key": taint.key, "operator": "Exists", "effect": taint.effect})
    return list(seen.values())


def gpu_operator_values(
    tolerations: Sequence[Taint] = (Taint(key=ACCELERATOR_TAINT_KEY[AcceleratorKind.NVIDIA]),),
) -> dict[str, Any]:
    """GPU operator values for EKS accelerated AMIs: driver and container toolkit are already on the AMI (so
    both are off), device plugin and DCGM exporter on, operator and NFD master on the system nodes; the
    DaemonSets tolerate ``tolerations`` (``ComputeConfig.daemon_tolerations``)."""
    tolerations = _tolerations(tolerations)
    return {
        "driver": {"enabled": False},
        "toolkit": {"enabled": False},
        "devicePlugin": {"enabled": True},
        "dcgmExporter": {"enabled": True},
        "nfd": {"enabled": True},
        "operator": {"nodeSelector": SYSTEM_NODES},
        # The operator places its operands by NFD's NVIDIA PCI labels itself; ``daemonsets`` has no nodeSelector
        # key in v26.7.0 (values.yaml), so only the tolerations are set here.
        "daemonsets": {"tolerations": tolerations},
        "node-feature-discovery": {
            "master": {"nodeSelector": SYSTEM_NODES},
            "gc": {"nodeSelector": SYSTEM_NODES},
            "worker": {"tolerations": tolerations},
        },
    }


def neuron_values(
    tolerations: Sequence[Taint] = (Taint(key=ACCELERATOR_TAINT_KEY[AcceleratorKind.NEURON]),),
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION,
) -> dict[str, Any]:
    """Neuron chart values: device plugin and node-problem detector on Neuron nodes (tolerating ``tolerations``),
    the scheduler extension and its kube-scheduler ``my-scheduler`` on the system nodes (Neuron pods set
    ``schedulerName: my-scheduler`` to get contiguous devices). The detector lives in ``neuron-healthcheck-system``,
    which the chart does not create: :func:`add_neuron_chart` does."""
    neuron_nodes = {ACCELERATOR_LABEL: AcceleratorKind.NEURON.value}
    return {
        "devicePlugin": {"nodeSelector": neuron_nodes, "tolerations": _tolerations(tolerations)},
        "scheduler": {
            "enabled": True,
            "nodeSelector": SYSTEM_NODES,
            "customScheduler": {
                "enabled": True,
                "nodeSelector": SYSTEM_NODES,
                "image": {"repository": KUBE_SCHEDULER_IMAGE, "tag": kube_scheduler_tag(kubernetes_version)},
            },
        },
        "npd": {"enabled": True, "nodeSelector": neuron_nodes, "tolerations": _tolerations(tolerations)},
    }


def eks_registry(scope: Construct) -> str:
    """``<account>.dkr.ecr.<region>.<url suffix>`` of Amazon EKS's image registry in the stack's region: the account
    differs in opt-in, China and GovCloud regions (:data:`EKS_REGISTRY_ACCOUNTS`). A pinned region is looked up at
    synth (an unlisted one is an error); an env-agnostic stack reads it from a mapping at deploy."""
    region = cdk.Stack.of(scope).region
    if not cdk.Token.is_unresolved(region):
        account = EKS_REGISTRY_ACCOUNTS.get(region)
        if account is None:
            raise ValueError(
                f"env.region {region!r}: no Amazon EKS image registry is known there — valid regions: "
                f"{', '.join(sorted(EKS_REGISTRY_ACCOUNTS))}"
            )
        suffix = "amazonaws.com.cn" if region.startswith("cn-") else cdk.Aws.URL_SUFFIX
        return f"{account}.dkr.ecr.{region}.{suffix}"
    mapping = cdk.CfnMapping(
        scope,
        "EksImageRegistryAccounts",
        mapping={region: {"account": account} for region, account in sorted(EKS_REGISTRY_ACCOUNTS.items())},
    )
    return f"{mapping.find_in_map(cdk.Aws.REGION, 'account')}.dkr.ecr.{cdk.Aws.REGION}.{cdk.Aws.URL_SUFFIX}"


def efa_plugin_values(registry: str, tolerations: Sequence[Taint] = ()) -> dict[str, Any]:
    """EFA device plugin values: only on nodes labelled ``inferstack.io/efa=true``, tolerating ``tolerations``
    (the taints of the EFA pools), image from ``registry`` (:func:`eks_registry`: the region's EKS registry)."""
    return {
        "image": {"repository": f"{registry}/{EFA_PLUGIN_REPOSITORY}"},
        "nodeSelector": {EFA_LABEL: "true"},
        "tolerations": _tolerations(tolerations),
    }


def add_gpu_operator(scope: Construct, cluster: eks.ICluster, tolerations: Sequence[Taint]) -> Construct:
    """The GPU operator in its own namespace (see :func:`gpu_operator_values`)."""
    return helm_chart(
        scope,
        "GpuOperator",
        cluster,
        "gpu-operator",
        "gpu-operator",
        gpu_operator_values(tolerations),
        create_namespace=True,
    )


class NeuronHealthcheckNamespaceChart(cdk8s.Chart):
    """The namespace of the Neuron chart's node-problem detector (the chart installs into it, never creates it)."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id, disable_resource_name_hashes=True)
        k8s.KubeNamespace(self, "namespace", metadata=k8s.ObjectMeta(name=NEURON_HEALTHCHECK_NAMESPACE))


def add_neuron_chart(
    scope: Construct, cluster: eks.ICluster, tolerations: Sequence[Taint], kubernetes_version: str
) -> Construct:
    """The Neuron chart in kube-system (see :func:`neuron_values`), after the namespace of its node-problem
    detector."""
    namespace = eks.KubernetesManifest(
        scope,
        "NeuronHealthcheckNamespace",
        cluster=cluster,
        manifest=NeuronHealthcheckNamespaceChart(cdk8s.App(), "neuron-healthcheck").to_json(),
        prune=False,
    )
    values = neuron_values(tolerations, kubernetes_version)
    chart = helm_chart(scope, "Neuron", cluster, "neuron-helm-chart", "kube-system", values)
    chart.node.add_dependency(namespace)
    return chart


def add_efa_device_plugin(scope: Construct, cluster: eks.ICluster, tolerations: Sequence[Taint]) -> Construct:
    """The EFA device plugin in kube-system (see :func:`efa_plugin_values`)."""
    values = efa_plugin_values(eks_registry(scope), tolerations)
    return helm_chart(scope, "EfaDevicePlugin", cluster, "aws-efa-k8s-device-plugin", "kube-system", values)
