"""Operators and device plugins for accelerated nodes, installed with Helm at catalog-pinned versions.

Each runs only where it is needed: controllers on the system node group, node agents on the accelerated nodes
(tolerating their taints). inferstack owns the Neuron device plugin through the Neuron Helm chart; aws-cdk-lib's
built-in Neuron DaemonSet is never added (node groups are created without ``add_nodegroup_capacity``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_eks_v2 as eks
from constructs import Construct

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.kubernetes import (
    ACCELERATOR_LABEL,
    ACCELERATOR_TAINT_KEY,
    EFA_LABEL,
    POOL_LABEL,
    SYSTEM_POOL,
)
from inferstack.config.compute import Taint
from inferstack.stacks.helm import helm_chart

SYSTEM_NODES = {POOL_LABEL: SYSTEM_POOL}
#: The EKS account that hosts the EFA device plugin image in most commercial regions.
EKS_IMAGE_ACCOUNT = "602401143452"


def _toleration(key: str) -> dict[str, str]:
    return {"key": key, "operator": "Exists", "effect": "NoSchedule"}


def gpu_operator_values(extra_tolerations: Sequence[Taint] = ()) -> dict[str, Any]:
    """GPU operator values for EKS accelerated AMIs: driver and container toolkit are already on the AMI (so
    both are off), device plugin and DCGM exporter on, operator and NFD master on the system nodes."""
    tolerations = [_toleration(ACCELERATOR_TAINT_KEY[AcceleratorKind.NVIDIA])]
    tolerations += [{"key": t.key, "operator": "Exists", "effect": t.effect} for t in extra_tolerations]
    return {
        "driver": {"enabled": False},
        "toolkit": {"enabled": False},
        "devicePlugin": {"enabled": True},
        "dcgmExporter": {"enabled": True},
        "nfd": {"enabled": True},
        "operator": {"nodeSelector": SYSTEM_NODES},
        "daemonsets": {
            "tolerations": tolerations,
            "nodeSelector": {ACCELERATOR_LABEL: AcceleratorKind.NVIDIA.value},
        },
        "node-feature-discovery": {
            "master": {"nodeSelector": SYSTEM_NODES},
            "gc": {"nodeSelector": SYSTEM_NODES},
            "worker": {"tolerations": tolerations},
        },
    }


def neuron_values() -> dict[str, Any]:
    """Neuron chart values: device plugin on Neuron nodes (tolerating their taint), scheduler extension on."""
    neuron_nodes = {ACCELERATOR_LABEL: AcceleratorKind.NEURON.value}
    toleration = _toleration(ACCELERATOR_TAINT_KEY[AcceleratorKind.NEURON])
    return {
        "devicePlugin": {"nodeSelector": neuron_nodes, "tolerations": [toleration]},
        "scheduler": {
            "enabled": True,
            "nodeSelector": SYSTEM_NODES,
            "customScheduler": {"nodeSelector": SYSTEM_NODES},
        },
        "npd": {"enabled": True, "nodeSelector": neuron_nodes},
    }


def efa_plugin_values(region: str) -> dict[str, Any]:
    """EFA device plugin values: only on nodes labelled ``inferstack.io/efa=true``, tolerating GPU and Neuron
    taints, image from the deployment region's EKS registry."""
    return {
        "image": {"repository": f"{EKS_IMAGE_ACCOUNT}.dkr.ecr.{region}.amazonaws.com/eks/aws-efa-k8s-device-plugin"},
        "nodeSelector": {EFA_LABEL: "true"},
        "tolerations": [_toleration(key) for key in ACCELERATOR_TAINT_KEY.values()],
    }


def add_gpu_operator(scope: Construct, cluster: eks.ICluster, extra_tolerations: Sequence[Taint]) -> eks.HelmChart:
    return helm_chart(
        scope,
        "GpuOperator",
        cluster,
        "gpu-operator",
        "gpu-operator",
        gpu_operator_values(extra_tolerations),
        create_namespace=True,
    )


def add_neuron_chart(scope: Construct, cluster: eks.ICluster) -> eks.HelmChart:
    return helm_chart(scope, "Neuron", cluster, "neuron-helm-chart", "kube-system", neuron_values())


def add_efa_device_plugin(scope: Construct, cluster: eks.ICluster) -> eks.HelmChart:
    return helm_chart(
        scope, "EfaDevicePlugin", cluster, "aws-efa-k8s-device-plugin", "kube-system", efa_plugin_values(cdk.Aws.REGION)
    )
