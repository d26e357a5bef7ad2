"""SGLANG-ADMIN: an SGLang workload whose clients reach its pods directly also reaches its admin endpoints (a
warning).

SGLang serves its admin API on the serving port (30000), which a NetworkPolicy cannot split (L4). Read in the sglang
0.5.19 wheel from PyPI (``sglang-0.5.19-cp311-cp311-manylinux_2_34_x86_64.whl``): ``/flush_cache``,
``/update_weights_from_disk``, ``/load_lora_adapter``, ``/release_memory_occupation``, ``/start_profile``,
``/abort_request`` and some 40 others are ``ADMIN_OPTIONAL`` (``srt/entrypoints/http_server.py``), open to every
client when no key is set (``srt/utils/auth.py``, ``decide_request_auth``). ``--admin-api-key`` would guard them, but
``GET /server_info`` — a ``NORMAL`` endpoint — returns every server argument (``resolution_projection`` over all
fields, ``srt/arg_groups/overrides.py``), the admin key included, so the key protects nothing. What does: clients
that reach the pods only through a LiteLLM gateway (its backends admit the gateway, Prometheus and their benchmark:
:mod:`inferstack.plan.network`), with the NetworkPolicies on.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.model import InferstackConfig
from inferstack.config.sglang import SglangWorkloadConfig
from inferstack.plan import resolve
from inferstack.plan.network import gateways_in_front
from inferstack.rules.base import Finding, Rule, Severity

RULE_ID = "SGLANG-ADMIN"
#: A few of SGLang 0.5.19's admin endpoints, for the message.
ADMIN_ENDPOINTS = ("/flush_cache", "/update_weights_from_disk", "/load_lora_adapter", "/release_memory_occupation")


def check(config: InferstackConfig) -> Iterator[Finding]:
    platform = None
    for index, workload in enumerate(config.workloads):
        if not isinstance(workload, SglangWorkloadConfig):
            continue
        platform = platform or resolve(config)
        resolved = next(r for r in platform.workloads if r.config is workload)
        gateways, only_through = gateways_in_front(platform, resolved)
        if config.network_policies.enabled and only_through:
            continue
        router = resolved.router
        who = (
            "every pod of the cluster (network_policies.enabled is false)"
            if not config.network_policies.enabled
            else (
                f"every client its router {router.name} admits (Envoy forwards every path)"
                if router is not None
                else "every client its NetworkPolicy admits on 30000"
            )
            + (" (a gateway routes to it, but with direct_clients)" if gateways else "")
        )
        yield Finding(
            rule=RULE_ID,
            path=f"workloads[{index}]",
            message=f"{workload.namespace}/{workload.name}: SGLang's admin endpoints ({', '.join(ADMIN_ENDPOINTS)}, …) "
            f"share the serving port, open to {who}; --admin-api-key cannot close them (GET /server_info returns "
            "it)",
            fix=f"let clients reach it only through a LiteLLM gateway: a litellm workload with a route whose backend "
            f"is {{workload: {workload.name}}} (without direct_clients), NetworkPolicies on; or acknowledge "
            f"{RULE_ID} for a trusted namespace",
            severity=Severity.WARNING,
        )


RULE = Rule(id=RULE_ID, title="SGLang's admin endpoints are not open to its clients", check=check)
RULES = (RULE,)
