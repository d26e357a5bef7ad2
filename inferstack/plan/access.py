"""How to call each workload the day after deploy: its Service and port, the model names it serves, whether it is
reached only through a LiteLLM gateway, and the commands that try it (``inferstack endpoints CONFIG``).

Everything comes from the plan and the kinds' declared endpoints (:func:`~inferstack.plan.endpoints.endpoint_of`),
the same facts the gateways and the NetworkPolicies are rendered from, so the commands name the Services and ports
the cluster runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import urlsplit

from inferstack.catalog.kubernetes import (
    AIBRIX_CONTROLLER_NAMESPACE,
    AIBRIX_GATEWAY,
    AIBRIX_GATEWAY_NAMESPACE,
    AIBRIX_GATEWAY_PODS,
    AIBRIX_GATEWAY_SERVICE_PORT,
    KNATIVE_LOCAL_GATEWAYS,
)
from inferstack.config.kserve import DeploymentMode
from inferstack.config.litellm import LiteLLMWorkloadConfig
from inferstack.config.model import InferstackConfig
from inferstack.constructs.litellm import PORT as GATEWAY_PORT
from inferstack.plan import resolve
from inferstack.plan.endpoints import NoEndpointError, endpoint_of
from inferstack.plan.kserve import knative_serving
from inferstack.plan.network import gateways_in_front

#: The local port the commands forward to (any free port works).
LOCAL_PORT = 8080


@dataclass(frozen=True)
class Access:
    """How one workload is reached."""

    namespace: str
    """The workload's namespace."""
    name: str
    """The workload's name."""
    kind: str
    """Its kind (``vllm``, ``litellm``…)."""
    service: str | None
    """The Service that answers its OpenAI-compatible API; None for a kind that serves none."""
    port: int | None
    """The Service port (None: the URL's default, 80)."""
    path: str
    """The API's base path, e.g. ``/v1``."""
    models: tuple[str, ...]
    """What clients put in ``model`` (empty where the image names it, e.g. a NIM)."""
    gateways: tuple[str, ...]
    """``namespace/name`` of the LiteLLM gateways that route to it."""
    only_through_gateways: bool
    """Its NetworkPolicy admits the gateways (and Prometheus, its benchmark) but no other client."""
    no_endpoint: str | None = None
    """Why it serves no OpenAI-compatible API, for such a kind."""
    key_secret: tuple[str, str] | None = None
    """A gateway's master key Secret (name, key): requests carry it as a bearer token."""
    knative_gateway: tuple[str, str] | None = None
    """(namespace, Service) of Knative's local gateway, for a Knative Service (KServe's Knative mode): its address
    is routed by Host header there, and a port-forward to it (an ExternalName Service) reaches nothing."""
    routed: bool = False
    """Clients reach it through its router (``routing``): :attr:`service` is the router's."""
    aibrix_gateway: bool = False
    """Clients reach it through AIBrix's gateway only (an AIBrix workload: its pods admit no client, since their
    serving port also loads LoRA adapters); the gateway routes by the request's ``model``."""


def workload_access(config: InferstackConfig) -> list[Access]:
    """How each workload of ``config`` is reached, in config order."""
    platform = resolve(config)
    found = []
    for resolved in platform.workloads:
        workload = resolved.config
        gateways, only = gateways_in_front(platform, resolved)
        routed = tuple(f"{g.namespace}/{g.name}" for g in gateways)
        key = (
            (workload.master_key_secret.name, workload.master_key_secret.key)
            if isinstance(workload, LiteLLMWorkloadConfig)
            else None
        )
        if isinstance(workload, LiteLLMWorkloadConfig):  # what clients call: its routes' public names
            found.append(
                Access(
                    namespace=workload.namespace,
                    name=workload.name,
                    kind=workload.kind,
                    service=workload.name,
                    port=GATEWAY_PORT,
                    path="/v1",
                    models=tuple(route.name for route in workload.routes),
                    gateways=routed,
                    only_through_gateways=only,
                    key_secret=key,
                )
            )
            continue
        try:
            endpoint = endpoint_of(workload)
        except NoEndpointError as exc:
            found.append(
                Access(workload.namespace, workload.name, workload.kind, None, None, "", (), routed, only, str(exc))
            )
            continue
        url = urlsplit(endpoint.api_base)
        service = (url.hostname or "").split(".")[0]
        knative = knative_serving(config)
        local = (
            (knative.gateway_ns, KNATIVE_LOCAL_GATEWAYS[knative.ingress.value])
            if knative is not None and getattr(workload, "deployment_mode", None) is DeploymentMode.KNATIVE
            else None
        )
        found.append(
            Access(
                namespace=workload.namespace,
                name=workload.name,
                kind=workload.kind,
                service=service,
                port=url.port,
                path=url.path,
                models=endpoint.models,
                gateways=routed,
                only_through_gateways=only,
                key_secret=key,
                knative_gateway=local,
                aibrix_gateway=getattr(workload, "aibrix", None) is not None,
                routed=resolved.router is not None,
            )
        )
    return found


def jsonpath_key(key: str) -> str:
    """A Secret data key as one kubectl JSONPath segment: its dots escaped (``tls.crt`` → ``tls\\.crt``), since a
    bare dot would descend into a child that does not exist and print nothing."""
    return key.replace(".", "\\.")


def _try_it(access: Access) -> list[str]:
    assert access.service is not None
    port = access.port or 80
    model = access.models[0] if access.models else "<the model the image serves: GET /v1/models>"
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 32})
    auth = ""
    if access.key_secret is not None:
        secret, key = access.key_secret
        auth = (
            f' -H "Authorization: Bearer $(kubectl -n {access.namespace} get secret {secret} '
            f"-o jsonpath='{{.data.{jsonpath_key(key)}}}' | base64 -d)\""
        )
    forward = f"kubectl -n {access.namespace} port-forward svc/{access.service} {LOCAL_PORT}:{port}"
    if access.aibrix_gateway:  # Envoy Gateway names its Service with a hash: find it by the owning Gateway's labels
        selector = ",".join(f"{k}={v}" for k, v in AIBRIX_GATEWAY_PODS.items())
        forward = (
            f"kubectl -n {AIBRIX_GATEWAY_NAMESPACE} port-forward "
            f'"$(kubectl -n {AIBRIX_GATEWAY_NAMESPACE} get svc -l {selector} -o name)" '
            f"{LOCAL_PORT}:{AIBRIX_GATEWAY_SERVICE_PORT}"
        )
    if access.knative_gateway is not None:  # Knative routes by Host at its local gateway
        namespace, gateway = access.knative_gateway
        forward = f"kubectl -n {namespace} port-forward svc/{gateway} {LOCAL_PORT}:80"
        auth += f" -H 'Host: {access.service}.{access.namespace}.svc.cluster.local'"
    return [
        forward,
        f"curl -s localhost:{LOCAL_PORT}{access.path}/chat/completions -H 'Content-Type: application/json'{auth} "
        f"-d '{body}'",
    ]


def access_report(config: InferstackConfig) -> str:
    """The per-workload part of "the day after deploy": where each workload answers and the commands that try it
    (run them with cluster access: an access entry, or from inside the VPC — the endpoint is private by default)."""
    lines: list[str] = []
    for access in workload_access(config):
        lines.append(f"{access.namespace}/{access.name} ({access.kind})")
        if access.service is None:
            lines.append(f"  no OpenAI-compatible API: {access.no_endpoint}")
            lines.append("")
            continue
        port = f":{access.port}" if access.port else ""
        served = ", ".join(access.models) or "the model its image names"
        lines.append(
            f"  Service {access.service}.{access.namespace}{port}, OpenAI API at {access.path}; model: {served}"
        )
        if access.aibrix_gateway:
            lines.append(
                f"  clients reach it through AIBrix's gateway ({AIBRIX_CONTROLLER_NAMESPACE}/{AIBRIX_GATEWAY}, its"
                f" proxies in {AIBRIX_GATEWAY_NAMESPACE}), which routes by model and never forwards the LoRA"
                " load/unload endpoints; the pods admit the gateway, AIBrix's controller, Prometheus and the"
                " benchmark"
            )
        if access.only_through_gateways:
            lines.append(
                f"  clients reach it only through {', '.join(access.gateways)} ("
                + (
                    f"its router {access.service} admits the gateway and its benchmark, the pods the router"
                    if access.routed
                    else "its NetworkPolicy admits the gateway, Prometheus and its benchmark"
                )
                + "); to try it directly as a cluster admin:"
            )
        elif access.gateways:
            lines.append(f"  also routed by {', '.join(access.gateways)}")
        lines += [f"  {command}" for command in _try_it(access)]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n" if lines else "no workloads\n"
