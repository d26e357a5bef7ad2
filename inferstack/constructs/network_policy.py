"""NetworkPolicy (``networking.k8s.io/v1``) from typed peers: pods of a namespace, or an address block, on given
ports. A policy that lists ``ingress`` (or ``egress``) isolates its pods in that direction: only what some policy
allows gets through (Kubernetes NetworkPolicy semantics; the VPC CNI's agent enforces them on EKS)."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.constructs import validation as check

#: The label every namespace carries (set by the API server since Kubernetes 1.22): selects a namespace by name.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
PROTOCOLS = ("TCP", "UDP", "SCTP")


@dataclass(frozen=True, kw_only=True)
class PolicyPeer:
    """Pods (``namespace`` + ``pods``) or an address block (``cidr``), on ``ports`` (default: every port)."""

    namespace: str | None = None
    """The peer pods' namespace. Default None: the policy's own namespace (pods) / any (with ``cidr``)."""
    pods: Mapping[str, str] | None = None
    """Labels the peer pods carry. Default None: every pod of ``namespace``."""
    cidr: str | None = None
    """An IPv4/IPv6 block instead of pods (e.g. ``0.0.0.0/0``). Default None."""
    ports: Sequence[int] = ()
    """Ports the rule opens. Default: every port."""
    protocols: Sequence[str] = ("TCP",)
    """Protocols of ``ports``. Default TCP."""


@dataclass(frozen=True, kw_only=True)
class NetworkPolicyProps:
    name: str
    """Name of the NetworkPolicy, an RFC 1123 subdomain."""
    namespace: str
    """Namespace of the policy and of the pods it selects. An RFC 1123 label."""
    pods: Mapping[str, str]
    """Labels of the pods the policy applies to; empty: every pod of the namespace."""
    excluded: Mapping[str, Sequence[str]] | None = None
    """Label → values: pods carrying one of those values are not selected (``NotIn``). Default none."""
    ingress: Sequence[PolicyPeer] | None = None
    """Who may connect to the pods. None: the policy says nothing of ingress; empty: nobody (deny)."""
    egress: Sequence[PolicyPeer] | None = None
    """Where the pods may connect. None: nothing said of egress; empty: nowhere (deny)."""
    labels: Mapping[str, str] | None = None
    """Labels of the NetworkPolicy object. Default none."""


def _check_peer(owner: str, where: str, peer: PolicyPeer) -> None:
    if peer.cidr is not None:
        if peer.namespace is not None or peer.pods is not None:
            raise check.PropError(f"{owner}: {where} — a peer is pods or a cidr, not both")
        try:
            ipaddress.ip_network(peer.cidr)
        except ValueError:
            raise check.PropError(f"{owner}: {where}.cidr {peer.cidr!r} — must be a CIDR such as 10.0.0.0/16") from None
    if peer.namespace is not None:
        check.dns_label(owner, f"{where}.namespace", peer.namespace)
    for port in peer.ports:
        if not 1 <= port <= 65535:
            raise check.PropError(f"{owner}: {where}.ports {port!r} — must be 1-65535")
    for protocol in peer.protocols:
        check.one_of(owner, f"{where}.protocols", protocol, PROTOCOLS)


def _peer(peer: PolicyPeer) -> k8s.NetworkPolicyPeer:
    if peer.cidr is not None:
        return k8s.NetworkPolicyPeer(ip_block=k8s.IpBlock(cidr=peer.cidr))
    return k8s.NetworkPolicyPeer(
        namespace_selector=k8s.LabelSelector(match_labels={NAMESPACE_NAME_LABEL: peer.namespace})
        if peer.namespace is not None
        else None,
        pod_selector=k8s.LabelSelector(match_labels=dict(peer.pods or {})),
    )


def _ports(peer: PolicyPeer) -> list[k8s.NetworkPolicyPort] | None:
    if not peer.ports:
        return None
    return [
        k8s.NetworkPolicyPort(port=k8s.IntOrString.from_number(port), protocol=protocol)
        for port in peer.ports
        for protocol in peer.protocols
    ]


class NetworkPolicy(Construct):
    """One NetworkPolicy: a rule per peer (``from``/``to`` that peer, on its ports)."""

    def __init__(self, scope: Construct, construct_id: str, props: NetworkPolicyProps) -> None:
        super().__init__(scope, construct_id)
        owner = f"NetworkPolicy {props.namespace}/{props.name}"
        check.dns_subdomain(owner, "name", props.name)
        check.dns_label(owner, "namespace", props.namespace)
        for direction, peers in (("ingress", props.ingress), ("egress", props.egress)):
            for index, peer in enumerate(peers or ()):
                _check_peer(owner, f"{direction}[{index}]", peer)
        if props.ingress is None and props.egress is None:
            raise check.PropError(f"{owner}: a policy needs ingress or egress (an empty list denies)")
        types = [name for name, peers in (("Ingress", props.ingress), ("Egress", props.egress)) if peers is not None]
        k8s.KubeNetworkPolicy(
            self,
            "policy",
            metadata=k8s.ObjectMeta(name=props.name, namespace=props.namespace, labels=dict(props.labels or {})),
            spec=k8s.NetworkPolicySpec(
                pod_selector=k8s.LabelSelector(
                    match_labels=dict(props.pods),
                    match_expressions=[
                        k8s.LabelSelectorRequirement(key=key, operator="NotIn", values=list(values))
                        for key, values in sorted((props.excluded or {}).items())
                    ]
                    or None,
                ),
                policy_types=types,
                ingress=[k8s.NetworkPolicyIngressRule(from_=[_peer(p)], ports=_ports(p)) for p in props.ingress]
                if props.ingress
                else None,
                egress=[k8s.NetworkPolicyEgressRule(to=[_peer(p)], ports=_ports(p)) for p in props.egress]
                if props.egress
                else None,
            ),
        )
