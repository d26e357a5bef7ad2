"""The network paths each kind's pods use at run time, with ports: what the NetworkPolicies are generated from
(:mod:`inferstack.plan.network`), registered per kind (``WorkloadKind.paths``).

Ports are the pods' container ports (a policy matches the port after a Service translated it). Sources, at the
pinned versions:

* vLLM serves the OpenAI API and ``/metrics`` on one port (8000, ``vllm serve --port``); the LoRA endpoints
  AIBrix's controller calls (``/v1/load_lora_adapter``) are on that port too (vllm-project/aibrix v0.7.0
  ``pkg/controller/modeladapter/lora_client.go``), and vLLM downloads a ``huggingface://`` adapter from the Hub itself;
* KubeRay v1.7.0 calls the head's dashboard (8265: ``/api/serve/applications/``, ``/api/jobs/``) and the Serve proxy
  (8000: ``/-/healthz``) — ``rayservice_controller.go:2014,2091-2094``; Ray's metrics export port is 8080
  (``common/pod.go:289-296``); GCS 6379, the Ray client 10001, the dashboard agent 52365, the object manager and
  workers use ports between the group's pods only;
* Knative Serving v0.48.1: the activator and the gateway reach a revision on the queue-proxy's 8012, the autoscaler
  scrapes it on 9090 (``pkg/reconciler/revision/resources/queue.go:55-73``); KServe's PodMonitor scrapes the user
  container's 8080 (the runtime's ``prometheus.kserve.io/port``);
* Triton: HTTP 8000, gRPC 8001, metrics 8002; SGLang 30000; TGI 8080 (``/metrics`` on the main port); Ollama 11434;
  LiteLLM 4000 and its own Postgres 5432; NIM 8000 (also called by the NIM operator); Dynamo's frontend 8000 and
  its workers' system port 9090 (19090 is NIXL's telemetry port, off by default: ``NIXL_TELEMETRY_ENABLE=n``), its
  request and event planes on ports chosen at run time (inferstack/constructs: each kind's own constants).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from inferstack.catalog.kubernetes import (
    AIBRIX_CONTROLLER_NAMESPACE,
    AIBRIX_GATEWAY_NAMESPACE,
    AIBRIX_GATEWAY_PODS,
    KNATIVE_NAMESPACE,
    KUBERAY_NAMESPACE,
    NIM_NAMESPACE,
)
from inferstack.config.kserve import DeploymentMode
from inferstack.config.workloads import ModelSourceType, VllmWorkloadConfig
from inferstack.plan import ResolvedPlatform, ResolvedWorkload
from inferstack.plan.kserve import knative_serving

VLLM_PORT = 8000
#: Ray: the Serve proxy, the head's dashboard, the metrics export port.
RAY_SERVE, RAY_DASHBOARD, RAY_METRICS = 8000, 8265, 8080
#: Ports of a Ray cluster's control plane that only its own pods (and KubeRay, for the dashboard) may reach.
RAY_INTERNAL = (6379, 8265, 10001, 52365)
KNATIVE_QUEUE, KNATIVE_AUTOSCALER_METRICS = 8012, 9090
KSERVE_PORT = 8080
#: Triton's HTTP, gRPC and metrics ports.
TRITON_HTTP, TRITON_GRPC, TRITON_METRICS = 8000, 8001, 8002
SGLANG_PORT, TGI_PORT, OLLAMA_PORT, LITELLM_PORT, POSTGRES_PORT = 30000, 8080, 11434, 4000, 5432
#: Dynamo's frontend and its workers' system port.
DYNAMO_FRONTEND, DYNAMO_SYSTEM = 8000, 9090
HTTPS = 443


@dataclass(frozen=True)
class Call:
    """An operator's (or gateway's) calls into the workload's pods: from every pod of ``namespace``, on ``ports``."""

    namespace: str
    ports: tuple[int, ...]
    why: str
    pods: Mapping[str, str] | None = None
    """Only the pods of ``namespace`` with these labels call. Default None: every pod there."""


@dataclass(frozen=True)
class RuntimePaths:
    """The paths one workload's pods use at run time. Every port is TCP."""

    serving: tuple[int, ...]
    """Pod ports its clients, the gateways routing to it and its benchmark connect to."""
    metrics: tuple[int, ...] = ()
    """Pod ports Prometheus scrapes (with ``monitoring``). Default none."""
    group: tuple[int, ...] | None = ()
    """Ports between the workload's own pods: ``()`` none (independent replicas, the default); ``None`` every port
    (NCCL, Ray's object manager and workers, NIXL open ports chosen at run time)."""
    calls: tuple[Call, ...] = ()
    """Operators' calls into the pods (KubeRay, Knative, AIBrix). Default none."""
    direct_clients: bool = True
    """Clients connect to the pods. False: they reach them through an operator's gateway only (a Knative predictor's
    Service is the gateway's ExternalName). Default True."""
    downloads: bool = False
    """Out to TCP 443 anywhere: S3 (the streamer), the Hub, NGC, the Ollama registry. Default False."""
    api_server: bool = False
    """Out to the Kubernetes API (TCP 443). Default False."""


def _hub(workload: ResolvedWorkload) -> bool:
    return bool(workload.readers) or any(m.config.source.type is ModelSourceType.HF for m in workload.models)


def vllm_paths(platform: ResolvedPlatform, workload: ResolvedWorkload) -> RuntimePaths:
    """One vLLM server per pod; with AIBrix, its gateway routes in and its controller loads adapters, which vLLM
    downloads from the Hub.

    With AIBrix, clients reach the pods through AIBrix's gateway only (``direct_clients`` False): vLLM's runtime LoRA
    endpoints (``/v1/load_lora_adapter``, ``/v1/unload_lora_adapter``) share the serving port, which a
    NetworkPolicy cannot split, and the gateway does not forward them — read at vllm-project/aibrix v0.7.0: the
    model router's HTTPRoute matches only its inference paths (``modelrouter_controller.go:67-79``: completions,
    chat, responses, messages, embeddings, rerank, classify, generate, audio), as do the install's
    ``reserved-router`` and metadata routes (``config/gateway/gateway-plugin/gateway-plugin.yaml``), and the gateway
    plugin answers any other path 501 (``pkg/plugins/gateway/util.go:159-180``); the controller calls the pods
    directly (``lora_client.go``). A LiteLLM gateway routing to the workload and its benchmark still reach it (they
    call only inference paths)."""
    config = workload.config
    aibrix = isinstance(config, VllmWorkloadConfig) and config.aibrix is not None
    calls = (
        (
            Call(
                AIBRIX_GATEWAY_NAMESPACE,
                (VLLM_PORT,),
                "AIBrix's Envoy gateway routes requests to the pods",
                pods=AIBRIX_GATEWAY_PODS,
            ),
            Call(AIBRIX_CONTROLLER_NAMESPACE, (VLLM_PORT,), "AIBrix's controller loads adapters and scrapes"),
        )
        if aibrix
        else ()
    )
    return RuntimePaths(
        serving=(VLLM_PORT,),
        metrics=(VLLM_PORT,),
        calls=calls,
        direct_clients=not aibrix,
        downloads=_hub(workload) or aibrix,
    )


def vllm_multinode_paths(platform: ResolvedPlatform, workload: ResolvedWorkload) -> RuntimePaths:
    """The leader serves; leader and workers talk on every port (29501 for the store, NCCL on random ports)."""
    return RuntimePaths(serving=(VLLM_PORT,), metrics=(VLLM_PORT,), group=None, downloads=_hub(workload))


def ray_serve_paths(platform: ResolvedPlatform, workload: ResolvedWorkload) -> RuntimePaths:
    """Clients reach Serve's proxy only; KubeRay the dashboard and the proxy; the head and workers every port."""
    return RuntimePaths(
        serving=(RAY_SERVE,),
        metrics=(RAY_METRICS,),
        group=None,
        calls=(Call(KUBERAY_NAMESPACE, (RAY_DASHBOARD, RAY_SERVE), "KubeRay polls Serve and the dashboard"),),
        downloads=_hub(workload),
        api_server=True,
    )


def triton_paths(platform: ResolvedPlatform, workload: ResolvedWorkload) -> RuntimePaths:
    return RuntimePaths(serving=(TRITON_HTTP, TRITON_GRPC), metrics=(TRITON_METRICS,), downloads=_hub(workload))


def sglang_paths(platform: ResolvedPlatform, workload: ResolvedWorkload) -> RuntimePaths:
    return RuntimePaths(serving=(SGLANG_PORT,), metrics=(SGLANG_PORT,), downloads=_hub(workload))


def tgi_paths(platform: ResolvedPlatform, workload: ResolvedWorkload) -> RuntimePaths:
    return RuntimePaths(serving=(TGI_PORT,), metrics=(TGI_PORT,), downloads=_hub(workload))


def ollama_paths(platform: ResolvedPlatform, workload: ResolvedWorkload) -> RuntimePaths:
    """Ollama pulls its tags from its registry at start."""
    return RuntimePaths(serving=(OLLAMA_PORT,), downloads=True)


def litellm_paths(platform: ResolvedPlatform, workload: ResolvedWorkload) -> RuntimePaths:
    """The proxy serves 4000; its own Postgres (database mode deploy) is one of its pods, on 5432."""
    return RuntimePaths(serving=(LITELLM_PORT,), metrics=(LITELLM_PORT,), group=(POSTGRES_PORT,))


def kserve_paths(platform: ResolvedPlatform, workload: ResolvedWorkload) -> RuntimePaths:
    """Standard: clients reach the predictor's 8080. Knative: the activator and the gateway reach the queue-proxy
    on 8012, the autoscaler scrapes 9090; clients only through the gateway."""
    knative = getattr(workload.config, "deployment_mode", None) is DeploymentMode.KNATIVE
    if not knative:
        return RuntimePaths(serving=(KSERVE_PORT,), metrics=(KSERVE_PORT,), downloads=_hub(workload))
    calls = [
        Call(KNATIVE_NAMESPACE, (KNATIVE_QUEUE, KNATIVE_AUTOSCALER_METRICS), "activator and autoscaler"),
    ]
    knative_config = knative_serving(platform.config)
    if knative_config is not None:
        calls.append(Call(knative_config.gateway_ns, (KNATIVE_QUEUE,), "the networking layer's gateway"))
    return RuntimePaths(
        serving=(KNATIVE_QUEUE,),
        metrics=(KSERVE_PORT,),
        calls=tuple(calls),
        direct_clients=False,
        downloads=_hub(workload),
    )


NIM_PORT = 8000


def nim_paths(platform: ResolvedPlatform, workload: ResolvedWorkload) -> RuntimePaths:
    """NIM downloads its profiles from NGC (the cache Job) whatever the model source; the NIM operator reads each
    NIMService's ``/v1/models`` through its Service, and the NIMService is not Ready until that answers
    (NVIDIA/k8s-nim-operator v3.0.0 ``internal/controller/platform/standalone/nimservice.go:509-516,600-670``)."""
    calls = (Call(NIM_NAMESPACE, (NIM_PORT,), "the NIM operator reads /v1/models for the NIMService's status"),)
    return RuntimePaths(serving=(NIM_PORT,), metrics=(NIM_PORT,), calls=calls, downloads=True)


def dynamo_paths(platform: ResolvedPlatform, workload: ResolvedWorkload) -> RuntimePaths:
    """The frontend serves 8000; frontend and workers talk on every port (the request plane, NIXL's 19090 and the
    KV transfers); Dynamo discovers its components through the Kubernetes API."""
    return RuntimePaths(
        serving=(DYNAMO_FRONTEND,),
        metrics=(DYNAMO_FRONTEND, DYNAMO_SYSTEM),
        group=None,
        downloads=_hub(workload),
        api_server=True,
    )
