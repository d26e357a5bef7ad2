"""NetworkPoliciesChart: per namespace inferstack owns, default deny plus the app's paths
(:mod:`inferstack.plan.network` decides them)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import cdk8s
from constructs import Construct

from inferstack.constructs.network_policy import NetworkPolicy, NetworkPolicyProps, PolicyPeer
from inferstack.plan.bench import BENCH_COMPONENT
from inferstack.plan.network import COMPONENT_LABEL, MODEL_SYNC, NEURON_COMPILE, NamespaceFlows, Peer, unique_peers

LABELS = {"app.kubernetes.io/part-of": "inferstack"}
DEFAULT_DENY = "inferstack-default-deny"
DNS = "inferstack-dns"
NAMESPACE_EGRESS = "inferstack-namespace"
#: CoreDNS pods (the EKS ``coredns`` add-on keeps the ``k8s-app: kube-dns`` label of upstream's manifests).
DNS_PEER = PolicyPeer(namespace="kube-system", pods={"k8s-app": "kube-dns"}, ports=(53,), protocols=("UDP", "TCP"))


def _peers(peers: Sequence[Peer]) -> list[PolicyPeer]:
    return [PolicyPeer(namespace=p.namespace, pods=p.pods, cidr=p.cidr, ports=p.ports) for p in peers]


class NetworkPoliciesChart(cdk8s.Chart):
    """In each namespace inferstack owns:

    * ``inferstack-default-deny``: every pod, no ingress, no egress;
    * ``inferstack-dns``: every pod may resolve names (CoreDNS, 53 UDP/TCP);
    * ``inferstack-namespace`` (with ``namespace_clients``): every pod but the batch Jobs may connect to the
      namespace's pods, whose own policies admit them or not;
    * ``inferstack-model-sync`` / ``inferstack-neuron-compile``: those Jobs reach S3 and the Pod Identity agent;
    * ``inferstack-port-<workload>-<port>``: the pods a workload's extra port names as clients reach it;
    * ``<workload>``: one per workload, its ingress and egress (:func:`inferstack.plan.network.network_flows`)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        namespaces: Sequence[NamespaceFlows],
        *,
        namespace_policies: bool = True,
        workloads: Collection[tuple[str, str]] | None = None,
    ) -> None:
        """``namespace_policies``: the per-namespace policies (default deny, DNS, namespace egress, batch Jobs).
        Default True. ``workloads``: ``(namespace, name)`` of the workloads whose own policies (and their
        benchmarks') to render. Default every one. A workloads stack renders the policies of the workloads it
        holds, so they shard with them; the first renders the namespaces'."""
        super().__init__(scope, construct_id, disable_resource_name_hashes=True)
        for flows in namespaces:
            ns = flows.namespace
            scope_ns = Construct(self, ns)
            if not namespace_policies:
                self._workloads(scope_ns, flows, workloads)
                continue
            NetworkPolicy(
                scope_ns,
                "deny",
                NetworkPolicyProps(name=DEFAULT_DENY, namespace=ns, pods={}, ingress=(), egress=(), labels=LABELS),
            )
            NetworkPolicy(
                scope_ns, "dns", NetworkPolicyProps(name=DNS, namespace=ns, pods={}, egress=(DNS_PEER,), labels=LABELS)
            )
            if flows.namespace_clients:
                NetworkPolicy(
                    scope_ns,
                    "namespace",
                    NetworkPolicyProps(
                        name=NAMESPACE_EGRESS,
                        namespace=ns,
                        pods={},
                        excluded={COMPONENT_LABEL: (MODEL_SYNC, NEURON_COMPILE, BENCH_COMPONENT)},
                        egress=(PolicyPeer(namespace=ns), *_peers(unique_peers(list(flows.client_egress)))),
                        labels=LABELS,
                    ),
                )
            for client in flows.port_clients:
                everyone = not client.pods
                NetworkPolicy(
                    scope_ns,
                    f"port-{client.name}",
                    NetworkPolicyProps(
                        name=f"inferstack-port-{client.name}",
                        namespace=ns,
                        pods=client.pods,
                        excluded={COMPONENT_LABEL: (MODEL_SYNC, NEURON_COMPILE, BENCH_COMPONENT)} if everyone else None,
                        egress=_peers([client.egress]),
                        labels=LABELS,
                    ),
                )
            if flows.batch_egress:
                for component in flows.batch:
                    NetworkPolicy(
                        scope_ns,
                        f"batch-{component}",
                        NetworkPolicyProps(
                            name=f"inferstack-{component}",
                            namespace=ns,
                            pods={COMPONENT_LABEL: component},
                            egress=_peers(flows.batch_egress),
                            labels=LABELS,
                        ),
                    )
            self._workloads(scope_ns, flows, workloads)

    @staticmethod
    def _workloads(scope_ns: Construct, flows: NamespaceFlows, only: Collection[tuple[str, str]] | None) -> None:
        for workload in flows.workloads:
            if only is not None and (flows.namespace, workload.owner or workload.name) not in only:
                continue
            NetworkPolicy(
                scope_ns,
                f"workload-{workload.name}",
                NetworkPolicyProps(
                    name=workload.name,
                    namespace=flows.namespace,
                    pods=workload.pods,
                    ingress=_peers(workload.ingress),
                    egress=_peers(workload.egress),
                    labels=LABELS,
                ),
            )
