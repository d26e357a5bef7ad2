"""NetworkPolicies for the namespaces inferstack owns: default deny, then only the paths the app needs."""

from __future__ import annotations

from pydantic import Field

from inferstack.config.base import StrictModel
from inferstack.config.types import KubernetesName


class NetworkPolicyConfig(StrictModel):
    """Kubernetes NetworkPolicies in every workload namespace inferstack creates (never in
    ``cluster.existing_namespaces``): deny all ingress and egress, then allow DNS, each workload's own pods to reach
    each other (multi-node, Ray, prefill/decode), Prometheus to scrape, gateways to reach their backends, clients
    to call the endpoints, and HTTPS out for pods that download models or call AWS / Kubernetes APIs.

    Enforced by the VPC CNI's network policy agent: inferstack turns it on in the ``vpc-cni`` add-on
    (``enableNetworkPolicy``) of the cluster it creates; on your own cluster, turn it on yourself."""

    enabled: bool = True
    """Render the policies (and enable enforcement in the VPC CNI add-on). Default on."""
    namespace_clients: bool = True
    """Pods of a workload's own namespace may call its endpoints (clients deployed next to the model). Default on."""
    client_namespaces: tuple[KubernetesName, ...] = Field(default=(), max_length=64)
    """Other namespaces whose pods may call every workload's endpoints (your applications). Default none: only the
    workload's namespace and the gateways routing to it."""
