"""A small NetworkPolicy evaluator (``networking.k8s.io/v1`` semantics): would the policies among some manifests let
one pod open a connection to another pod, or to an address?

* A pod is isolated for egress (ingress) when a policy of its namespace selects it and lists ``Egress``
  (``Ingress``) in ``policyTypes``; then only what some such policy's rules allow passes. A pod no policy selects
  is not isolated.
* A connection between pods needs the source's egress and the destination's ingress both to allow it.
* A rule allows a peer when any of its ``from``/``to`` entries matches (``namespaceSelector`` and ``podSelector``
  in one entry both must match; no ``namespaceSelector`` = the policy's namespace; ``ipBlock`` matches addresses,
  and a pod only by its IP when one is given) and any of its ``ports`` matches (none listed = every port).
* Traffic from the pod's own node (kubelet probes) is never subject to policies — not modelled here.

Named ports and ``endPort`` ranges are understood; ``except`` lists are honoured.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from inferstack.gates.references import selector_matches

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class Pod:
    """A pod as policies see it."""

    namespace: str
    labels: Mapping[str, str]
    ip: str | None = None
    ports: Mapping[str, int] = field(default_factory=dict)
    """Named container ports (for rules that name a port). Default none."""


@dataclass(frozen=True)
class Address:
    """Anything that is not a pod: an IP outside the cluster's pods, or a host-network endpoint."""

    ip: str


Endpoint = Pod | Address


def _policies(manifests: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [m for m in manifests if m.get("kind") == "NetworkPolicy" and m.get("apiVersion") == "networking.k8s.io/v1"]


def _types(policy: Mapping[str, Any]) -> list[str]:
    spec = policy.get("spec") or {}
    declared = spec.get("policyTypes")
    if declared:
        return list(declared)
    return ["Ingress", *(["Egress"] if spec.get("egress") is not None else [])]


def _selecting(policies: list[Mapping[str, Any]], pod: Pod, direction: str) -> list[Mapping[str, Any]]:
    return [
        p
        for p in policies
        if (p.get("metadata") or {}).get("namespace", "default") == pod.namespace
        and direction in _types(p)
        and selector_matches((p.get("spec") or {}).get("podSelector") or {}, pod.labels)
    ]


def _in_block(ip: str | None, block: Mapping[str, Any]) -> bool:
    if ip is None:
        return False
    address = ipaddress.ip_address(ip)
    if address not in ipaddress.ip_network(block["cidr"]):
        return False
    return not any(address in ipaddress.ip_network(excluded) for excluded in block.get("except") or ())


def _peer_matches(
    peer: Mapping[str, Any], policy_namespace: str, other: Endpoint, namespaces: Mapping[str, Any]
) -> bool:
    if "ipBlock" in peer:
        return _in_block(other.ip, peer["ipBlock"])
    if not isinstance(other, Pod):
        return False
    if "namespaceSelector" in peer:
        labels = {NAMESPACE_NAME_LABEL: other.namespace, **(namespaces.get(other.namespace) or {})}
        if not selector_matches(peer["namespaceSelector"], labels):
            return False
    elif other.namespace != policy_namespace:
        return False
    return selector_matches(peer.get("podSelector") or {}, other.labels)


def _port_matches(rule_ports: list[Mapping[str, Any]] | None, target: Endpoint, port: int, protocol: str) -> bool:
    if not rule_ports:
        return True
    for entry in rule_ports:
        if (entry.get("protocol") or "TCP") != protocol:
            continue
        wanted = entry.get("port")
        if wanted is None:
            return True
        if isinstance(wanted, str):
            named = target.ports.get(wanted) if isinstance(target, Pod) else None
            if named == port:
                return True
            continue
        if wanted <= port <= (entry.get("endPort") or wanted):
            return True
    return False


def _allowed(
    policies: list[Mapping[str, Any]],
    pod: Pod,
    other: Endpoint,
    target: Endpoint,
    port: int,
    protocol: str,
    direction: str,
    namespaces: Mapping[str, Any],
) -> bool:
    selecting = _selecting(policies, pod, direction)
    if not selecting:
        return True
    rules_key, peers_key = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
    for policy in selecting:
        namespace = (policy.get("metadata") or {}).get("namespace", "default")
        for rule in (policy.get("spec") or {}).get(rules_key) or ():
            peers = rule.get(peers_key)
            peer_ok = not peers or any(_peer_matches(p, namespace, other, namespaces) for p in peers)
            if peer_ok and _port_matches(rule.get("ports"), target, port, protocol):
                return True
    return False


def connection_allowed(
    manifests: Iterable[Mapping[str, Any]],
    source: Endpoint,
    destination: Endpoint,
    port: int,
    protocol: str = "TCP",
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
) -> bool:
    """Whether the NetworkPolicies among ``manifests`` let ``source`` connect to ``destination`` on ``port``.
    ``namespaces``: extra labels of namespaces (``kubernetes.io/metadata.name`` is always there)."""
    policies = _policies(manifests)
    known = namespaces or {}
    if isinstance(source, Pod) and not _allowed(
        policies, source, destination, destination, port, protocol, "Egress", known
    ):
        return False
    if isinstance(destination, Pod):
        return _allowed(policies, destination, source, destination, port, protocol, "Ingress", known)
    return True
