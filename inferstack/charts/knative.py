"""Knative Serving for KServe's Knative mode, as the Knative Operator installs it: the ``knative-serving`` namespace
and one ``KnativeServing`` resource (operator.knative.dev/v1beta1, validated against the vendored CRD)."""

from __future__ import annotations

from typing import Any

import cdk8s
from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.kubernetes import KNATIVE_NAMESPACE, KNATIVE_SERVING_NAME
from inferstack.config.model import KnativeIngress, KnativeServingConfig
from inferstack.constructs.custom_resource import CustomResource

#: Knative's ``config-features`` flags a KServe predictor on GPU nodes needs (Knative 1.21 disables both by default:
#: a Knative Service with a node selector or tolerations is refused).
PODSPEC_FEATURES = {"kubernetes.podspec-nodeselector": "enabled", "kubernetes.podspec-tolerations": "enabled"}
#: Kourier's ingress class (net-kourier), the value of ``config-network``'s ``ingress-class``.
KOURIER_INGRESS_CLASS = "kourier.ingress.networking.knative.dev"
#: The Deployments the operator makes for Serving 1.21 with Kourier (knative/operator knative-v1.21.1:
#: cmd/operator/kodata/knative-serving/1.21.1/2-serving-core.yaml and 3-serving-hpa.yaml,
#: kodata/ingress/1.21/kourier/kourier.yaml); each is placed on the system nodes with ``spec.workloads``.
SERVING_DEPLOYMENTS = (
    "activator",
    "autoscaler",
    "autoscaler-hpa",
    "controller",
    "webhook",
    "net-kourier-controller",
    "3scale-kourier-gateway",
)


#: Serving's and Kourier's PodDisruptionBudgets (minAvailable 80 %: 2-serving-core.yaml, kourier.yaml at
#: knative-v1.21.1). Kubernetes rounds a percentage up, so 80 % of one or two replicas evicts none: a node drain
#: (a system node group's upgrade) would wait forever.
KNATIVE_PDBS = ("activator-pdb", "webhook-pdb", "3scale-kourier-gateway-pdb")
#: Replicas of Serving's control plane and Kourier (``spec.high-availability``; pkg/reconciler/common/ha.go sets
#: every Deployment's replicas, and the activator HPA's minimum).
HA_REPLICAS = 2


def knative_serving_spec(knative: KnativeServingConfig, node_selector: dict[str, str]) -> dict[str, Any]:
    """The ``KnativeServing`` spec: Serving ``knative.version`` (the operator installs the newest patch it carries:
    operator v1.21.1 bundles 1.21.0 and 1.21.1), Kourier with its ``kourier`` gateway Service cluster-internal
    (the operator's default is a LoadBalancer, an internet-facing NLB on EKS; the platform has no ingress and
    clients use ``kourier-internal``), Kourier as the ingress class (the operator does not set it; Serving's
    default is Istio's), the pod-spec features (knative/operator knative-v1.21.1:
    pkg/reconciler/knativeserving/ingress/kourier.go reads ``service-type``), and every Deployment of
    :data:`SERVING_DEPLOYMENTS` on ``node_selector`` (the operator sets no placement of its own); two replicas of
    each with the PDBs of :data:`KNATIVE_PDBS` at ``minAvailable: 1``, so a drain evicts one at a time instead of
    none (pkg/reconciler/common/poddisruptionbudget_override.go applies ``podDisruptionBudgets``)."""
    if knative.ingress is not KnativeIngress.KOURIER:
        raise ValueError(f"inferstack installs Knative Serving with Kourier, not {knative.ingress.value!r}")
    return {
        "version": knative.version,
        "ingress": {"kourier": {"enabled": True, "service-type": "ClusterIP"}},
        "config": {"network": {"ingress-class": KOURIER_INGRESS_CLASS}, "features": dict(PODSPEC_FEATURES)},
        "workloads": [{"name": name, "nodeSelector": dict(node_selector)} for name in SERVING_DEPLOYMENTS],
        "high-availability": {"replicas": HA_REPLICAS},
        "podDisruptionBudgets": [{"name": name, "minAvailable": 1} for name in KNATIVE_PDBS],
    }


class KnativeServingChart(cdk8s.Chart):
    """The ``knative-serving`` namespace and the ``KnativeServing`` resource the Knative Operator reconciles, its
    Deployments on the nodes ``node_selector`` selects."""

    def __init__(
        self, scope: Construct, construct_id: str, knative: KnativeServingConfig, node_selector: dict[str, str]
    ) -> None:
        super().__init__(scope, construct_id, disable_resource_name_hashes=True)
        k8s.KubeNamespace(self, "namespace", metadata=k8s.ObjectMeta(name=KNATIVE_NAMESPACE))
        CustomResource(
            self,
            "serving",
            manifest={
                "apiVersion": "operator.knative.dev/v1beta1",
                "kind": "KnativeServing",
                "metadata": {"name": KNATIVE_SERVING_NAME, "namespace": KNATIVE_NAMESPACE},
                "spec": knative_serving_spec(knative, node_selector),
            },
        )
