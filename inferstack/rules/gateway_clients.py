"""NETWORK-GATEWAY-CLIENTS: with NetworkPolicies on, some client may call each LiteLLM gateway.

A workload a gateway routes to admits only the gateway (:mod:`inferstack.plan.network`), so the gateway is the way
in. Its own policy admits the pods of its namespace (``network_policies.namespace_clients``) and of
``network_policies.client_namespaces``; but in a namespace inferstack owns every pod's egress is denied except to its
own namespace (the ``inferstack-namespace`` policy, rendered with ``namespace_clients``), so a client namespace that
is itself one inferstack owns reaches no gateway of another namespace. When no namespace is left that may call a
gateway, every route of it is unreachable: a warning naming the field to set (a gateway that is reached otherwise —
through a namespace that is not listed — is not one inferstack can see).
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.litellm import LiteLLMWorkloadConfig
from inferstack.config.model import InferstackConfig
from inferstack.plan.names import namespaces_to_create
from inferstack.rules.base import Finding, Rule, Severity

RULE_ID = "NETWORK-GATEWAY-CLIENTS"


def client_namespaces(config: InferstackConfig, namespace: str) -> list[str]:
    """Namespaces whose pods may call a gateway in ``namespace`` under the NetworkPolicies: its own with
    ``namespace_clients``, and every listed client namespace inferstack does not own (an owned one's egress stays
    inside it). None of them matter when the policies are off or ``namespace`` is not one inferstack owns."""
    policies = config.network_policies
    owned = set(namespaces_to_create(config))
    own = [namespace] if policies.namespace_clients else []
    return own + [n for n in policies.client_namespaces if n not in owned]


def check(config: InferstackConfig) -> Iterator[Finding]:
    policies = config.network_policies
    if not policies.enabled:
        return
    owned = set(namespaces_to_create(config))
    for index, gateway in enumerate(config.workloads):
        if not isinstance(gateway, LiteLLMWorkloadConfig) or gateway.namespace not in owned:
            continue
        if client_namespaces(config, gateway.namespace):
            continue
        confined = [n for n in policies.client_namespaces if n in owned]
        why = (
            f"client_namespaces lists only namespaces inferstack owns ({', '.join(confined)}), whose pods' egress the "
            f"NetworkPolicies keep inside their own namespace"
            if confined
            else "client_namespaces is empty"
        )
        if not policies.namespace_clients:
            why = f"namespace_clients is false and {why}"
        yield Finding(
            rule=RULE_ID,
            path="network_policies.client_namespaces",
            message=f"no pod may call gateway {gateway.namespace}/{gateway.name} (workloads[{index}]), and its "
            f"backends admit only it: {why}",
            fix="add the namespace of the applications that call it (one inferstack does not own, e.g. apps) to "
            f"network_policies.client_namespaces, or set network_policies.namespace_clients: true and run them in "
            f"{gateway.namespace}",
            severity=Severity.WARNING,
        )


RULE = Rule(id=RULE_ID, title="Some client may call each LiteLLM gateway", check=check)
RULES = (RULE,)
