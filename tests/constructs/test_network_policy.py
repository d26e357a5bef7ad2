"""NetworkPolicy construct: validation at construction, the rendered object, and the evaluator's semantics."""

from __future__ import annotations

import cdk8s
import pytest

from inferstack.constructs.network_policy import NetworkPolicy, NetworkPolicyProps, PolicyPeer
from inferstack.constructs.validation import PropError
from inferstack.gates.network import Address, Pod, connection_allowed


def render(props: NetworkPolicyProps) -> list[dict]:
    chart = cdk8s.Chart(cdk8s.App(), "c")
    NetworkPolicy(chart, "p", props)
    return chart.to_json()


def test_renders_one_rule_per_peer_with_its_ports():
    (policy,) = render(
        NetworkPolicyProps(
            name="web",
            namespace="apps",
            pods={"app": "web"},
            excluded={"tier": ["batch"]},
            ingress=[PolicyPeer(namespace="monitoring", pods={"app": "prom"}, ports=[9090])],
            egress=[PolicyPeer(cidr="0.0.0.0/0", ports=[443])],
        )
    )
    spec = policy["spec"]
    assert spec["policyTypes"] == ["Ingress", "Egress"]
    assert spec["podSelector"] == {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["batch"]}],
    }
    assert spec["ingress"] == [
        {
            "from": [
                {
                    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}},
                    "podSelector": {"matchLabels": {"app": "prom"}},
                }
            ],
            "ports": [{"port": 9090, "protocol": "TCP"}],
        }
    ]
    assert spec["egress"] == [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [{"port": 443, "protocol": "TCP"}]}]


def test_empty_lists_deny():
    (policy,) = render(NetworkPolicyProps(name="deny", namespace="apps", pods={}, ingress=(), egress=()))
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert "ingress" not in policy["spec"] and "egress" not in policy["spec"]


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (NetworkPolicyProps(name="x", namespace="a", pods={}), "needs ingress or egress"),
        (NetworkPolicyProps(name="x", namespace="a", pods={}, egress=[PolicyPeer(cidr="10.0.0/8")]), "CIDR"),
        (
            NetworkPolicyProps(name="x", namespace="a", pods={}, egress=[PolicyPeer(cidr="10.0.0.0/8", pods={})]),
            "pods or a cidr",
        ),
        (NetworkPolicyProps(name="x", namespace="a", pods={}, egress=[PolicyPeer(ports=[0])]), "1-65535"),
        (NetworkPolicyProps(name="x", namespace="a", pods={}, egress=[PolicyPeer(protocols=["ICMP"])]), "TCP"),
        (NetworkPolicyProps(name="X", namespace="a", pods={}, egress=()), "lowercase"),
    ],
)
def test_bad_props_are_named(props, message):
    with pytest.raises(PropError, match=message):
        render(props)


DENY = {
    "apiVersion": "networking.k8s.io/v1",
    "kind": "NetworkPolicy",
    "metadata": {"name": "deny", "namespace": "a"},
    "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]},
}


def _allow(name: str, namespace: str, spec: dict) -> dict:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def test_evaluator_unselected_pods_are_open_and_deny_closes_them():
    a, b = Pod("a", {"app": "x"}), Pod("b", {"app": "y"})
    assert connection_allowed([], a, b, 80)
    assert not connection_allowed([DENY], a, b, 80)  # a's egress
    assert not connection_allowed([DENY], b, a, 80)  # a's ingress
    assert connection_allowed([DENY], b, Address("1.2.3.4"), 80)  # b is in another namespace


def test_evaluator_needs_both_sides_and_matching_ports():
    a, b = Pod("a", {"app": "x"}), Pod("a", {"app": "y"})
    egress = _allow("out", "a", {"podSelector": {"matchLabels": {"app": "x"}}, "policyTypes": ["Egress"],
                                 "egress": [{"to": [{"podSelector": {"matchLabels": {"app": "y"}}}]}]})  # fmt: skip
    ingress = _allow("in", "a", {"podSelector": {"matchLabels": {"app": "y"}}, "policyTypes": ["Ingress"],
                                 "ingress": [{"from": [{"podSelector": {}}], "ports": [{"port": 8000}]}]})  # fmt: skip
    assert not connection_allowed([DENY, egress], a, b, 8000)
    assert connection_allowed([DENY, egress, ingress], a, b, 8000)
    assert not connection_allowed([DENY, egress, ingress], a, b, 8001)
    assert not connection_allowed([DENY, egress, ingress], a, b, 8000, "UDP")


def test_evaluator_namespace_selector_and_ip_blocks():
    a = Pod("a", {"app": "x"})
    rule = {"podSelector": {}, "policyTypes": ["Ingress", "Egress"],
            "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "mon"}}}]}],
            "egress": [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}],
                        "ports": [{"port": 443, "protocol": "TCP"}]}]}  # fmt: skip
    policies = [_allow("p", "a", rule)]
    assert connection_allowed(policies, Pod("mon", {}), a, 1234)
    assert not connection_allowed(policies, Pod("other", {}), a, 1234)
    assert connection_allowed(policies, a, Address("52.1.1.1"), 443)
    assert not connection_allowed(policies, a, Address("10.1.1.1"), 443)
    assert not connection_allowed(policies, a, Address("52.1.1.1"), 80)


def test_evaluator_a_pod_selector_alone_means_the_policy_namespace():
    a = Pod("a", {"app": "x"})
    rule = {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [{"from": [{"podSelector": {}}]}]}
    policies = [_allow("p", "a", rule)]
    assert connection_allowed(policies, Pod("a", {"any": "pod"}), a, 80)
    assert not connection_allowed(policies, Pod("b", {"any": "pod"}), a, 80)
