"""A LiteLLM gateway's routes and its clients (issue 24 §10): a backend that does not resolve is reported at the field
that is wrong with the real problem (the gateway itself, another namespace, a near name), and a gateway no client may
reach under the NetworkPolicies is a warning naming the field to set."""

from __future__ import annotations

import copy
from typing import Any

import cdk8s
import pytest

from inferstack.charts.network_policies import NetworkPoliciesChart
from inferstack.config import parse_config
from inferstack.gates.network import Pod, connection_allowed
from inferstack.plan.network import network_flows
from inferstack.rules import Severity, evaluate
from inferstack.rules import gateway_clients as rule
from tests.rules.test_registry import BASE

GATEWAY = {
    "kind": "litellm",
    "name": "gateway",
    "pool": "general",
    "master_key_secret": {"name": "litellm"},
    "routes": [{"name": "chat", "backends": [{"workload": "qwen"}]}],
}
#: BASE with a gateway in front of its Qwen: the gateway in namespace ``gateway``, the model in ``inference``.
WITH_GATEWAY: dict[str, Any] = {**BASE, "workloads": [*BASE["workloads"], {**GATEWAY, "namespace": "gateway"}]}


def _with_backend(**backend: Any) -> dict[str, Any]:
    data = copy.deepcopy(WITH_GATEWAY)
    data["workloads"][1]["routes"][0]["backends"] = [backend]
    return data


def _backend_findings(data: dict[str, Any]) -> list[str]:
    return [str(f) for f in evaluate(parse_config(data)).errors if f.rule == "LITELLM-BACKEND"]


BACKEND = "workloads[1].routes[0].backends[0]"
BACKENDS = [
    ({"workload": "gateway"}, f"{BACKEND}.workload", "is this gateway itself"),
    ({"workload": "qwen", "namespace": "apps"}, f"{BACKEND}.namespace", "'qwen' is in namespace inference"),
    ({"workload": "qwn"}, f"{BACKEND}.workload", "did you mean qwen?"),
]


@pytest.mark.parametrize(("backend", "path", "words"), BACKENDS, ids=[str(b) for b, _, _ in BACKENDS])
def test_a_backend_that_does_not_resolve_names_the_real_problem(backend, path, words):
    (finding,) = _backend_findings(_with_backend(**backend))
    assert f"] {path}: " in finding, finding
    assert words in finding, finding
    assert "is not a workload of this config" not in finding or "did you mean" in finding, finding


def test_a_backend_that_resolves_is_not_reported():
    assert _backend_findings(_with_backend(workload="qwen", namespace="inference")) == []


def _warnings(data: dict[str, Any]) -> list[Any]:
    return [f for f in evaluate(parse_config(data)).warnings if f.rule == rule.RULE_ID]


def _policies(**policies: Any) -> dict[str, Any]:
    return {**copy.deepcopy(WITH_GATEWAY), "network_policies": policies}


def test_a_gateway_clients_may_call_is_not_reported():
    """GIVEN the gateway's own namespace admitted (the default), or a namespace of applications inferstack does not
    own, THEN no warning."""
    assert _warnings(_policies()) == []
    assert _warnings(_policies(namespace_clients=False, client_namespaces=["apps"])) == []
    assert _warnings(_policies(namespace_clients=False, enabled=False)) == []


def test_a_gateway_no_client_may_call_is_a_warning_naming_the_field_to_set():
    (finding,) = _warnings(_policies(namespace_clients=False))
    assert finding.severity is Severity.WARNING
    assert finding.path == "network_policies.client_namespaces"
    assert "gateway/gateway (workloads[1])" in finding.message
    assert "namespace_clients is false and client_namespaces is empty" in finding.message
    assert "network_policies.client_namespaces" in finding.fix and "namespace_clients: true" in finding.fix


def test_a_client_namespace_inferstack_owns_reaches_no_gateway_of_another():
    """``inference`` holds the model, so inferstack owns it and keeps its pods' egress inside it: listing it as a
    client namespace admits it at the gateway, but its pods cannot leave."""
    (finding,) = _warnings(_policies(namespace_clients=False, client_namespaces=["inference"]))
    assert "lists only namespaces inferstack owns (inference)" in finding.message


GRID = [
    {},
    {"namespace_clients": False},
    {"namespace_clients": False, "client_namespaces": ["inference"]},
    {"namespace_clients": False, "client_namespaces": ["gateway"]},
    {"namespace_clients": False, "client_namespaces": ["apps"]},
    {"namespace_clients": False, "client_namespaces": ["inference", "default"]},
    {"client_namespaces": ["inference"]},
]


@pytest.mark.parametrize("policies", GRID, ids=[str(p) for p in GRID])
def test_the_warning_agrees_with_the_rendered_policies(policies):
    """The rule judges the config; the gate evaluates the NetworkPolicies rendered from it: the rule warns exactly
    when no pod of any namespace it could name (the gateway's, the listed ones, a stranger's) may open the
    gateway's port (LiteLLM's 4000)."""
    config = parse_config(_policies(**policies))
    objects = NetworkPoliciesChart(cdk8s.App(), "np", network_flows(config)).to_json()
    gateway = Pod("gateway", {"app.kubernetes.io/name": "gateway"})
    callers = {"gateway", "inference", "apps", "default", "someone-else", *policies.get("client_namespaces", ())}
    reachable = any(connection_allowed(objects, Pod(ns, {"app": "client"}), gateway, 4000) for ns in callers)
    assert bool(_warnings(_policies(**policies))) is not reachable
