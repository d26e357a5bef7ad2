"""Which connections each workload's pods need (the NetworkPolicies are rendered from this): who may connect to
them, and where they may connect, with ports on every rule. Each kind declares its pods' runtime paths
(:mod:`inferstack.plan.runtime_paths`, ``WorkloadKind.paths``): clients and gateways reach the serving ports,
Prometheus the metrics ports, operators their control ports, the group's own pods each other only where the kind
says so. Everything not listed is denied in the namespaces inferstack owns.

Sources, at the pinned versions:

* Prometheus pods carry ``app.kubernetes.io/name: prometheus`` (prometheus-operator's StatefulSet labels);
* the KubeRay operator polls the Ray head's dashboard and Serve endpoints (KubeRay v1.7.0, ray-operator
  ``utils/dashboardclient``), so ``ray_serve`` pods admit its namespace;
* AIBrix's gateway (Envoy proxies in ``envoy-gateway-system``) routes to the pods directly and its controllers in
  ``aibrix-system`` scrape them and load adapters (AIBrix v0.7.0 manifests); an AIBrix workload's clients connect
  to the gateway's proxies (port 80 of its listener, 10080 on the pods), never to the pods, whose serving port
  also loads LoRA adapters;
* a workload's extra ports (``pod.ports``) admit the clients each names (default: the workload's namespace), and
  those client pods, in a namespace inferstack owns, get egress to it (a policy of their own);
* Knative's activator (``knative-serving``) proxies the first request of a scaled-to-zero KServe predictor;
* every pod that reads the bucket with Pod Identity asks the EKS Pod Identity agent on its node
  (``169.254.170.23:80``, host network; the EKS user guide's Pod Identity considerations);
* the EKS API server, S3, the Hugging Face Hub, NGC and the Ollama registry are reached over TCP 443; their
  addresses are not fixed, so that egress is to any address (NetworkPolicy has no DNS names).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.kubernetes import (
    AIBRIX_GATEWAY_NAMESPACE,
    AIBRIX_GATEWAY_POD_PORT,
    AIBRIX_GATEWAY_PODS,
    KNATIVE_NAMESPACE,
    PROMETHEUS_NAMESPACE,
)
from inferstack.catalog.routing import EPP_METRICS_PORT
from inferstack.config.kinds import kind_of
from inferstack.config.kserve import DeploymentMode
from inferstack.config.litellm import DatabaseMode, LiteLLMWorkloadConfig
from inferstack.config.model import InferstackConfig
from inferstack.config.pod_ports import PortClient
from inferstack.plan import ResolvedPlatform, ResolvedWorkload, resolve
from inferstack.plan.bench import bench_pods
from inferstack.plan.kserve import knative_serving
from inferstack.plan.names import namespaces_to_create
from inferstack.plan.routing import ResolvedRouting
from inferstack.plan.runtime_paths import Call, RuntimePaths

NAME_LABEL = "app.kubernetes.io/name"
#: Labels of the one-off Jobs next to a workload (model sync, Neuron compile): they fetch and write the bucket.
MODEL_SYNC, NEURON_COMPILE = "model-sync", "neuron-compile"
COMPONENT_LABEL = "app.kubernetes.io/component"
PROMETHEUS_POD = {NAME_LABEL: "prometheus"}
POD_IDENTITY_AGENT = "169.254.170.23/32"
ANYWHERE = "0.0.0.0/0"
HTTPS = 443
POSTGRES = 5432


@dataclass(frozen=True)
class Peer:
    """Pods (in ``namespace``, matching ``pods``; ``pods`` None = every pod there) or an address block."""

    namespace: str | None = None
    pods: Mapping[str, str] | None = None
    cidr: str | None = None
    ports: tuple[int, ...] = ()
    """TCP ports; empty: every port."""


@dataclass(frozen=True)
class WorkloadFlows:
    """The connections one workload's pods may accept and open."""

    name: str
    namespace: str
    pods: Mapping[str, str]
    """The label selector of all its pods (servers, workers, heads, gateways and their databases)."""
    ingress: tuple[Peer, ...]
    egress: tuple[Peer, ...]
    owner: str | None = None
    """The workload these pods belong to, when it is not :attr:`name` (a benchmark's: the workload it loads)."""


@dataclass(frozen=True)
class NamespaceFlows:
    """One namespace inferstack owns: deny by default, DNS for every pod, the batch Jobs' egress, each workload."""

    namespace: str
    workloads: tuple[WorkloadFlows, ...]
    namespace_clients: bool = True
    """Pods of the namespace may connect to each other's pods (each workload's ingress still decides)."""
    client_egress: tuple[Peer, ...] = field(default=())
    """Where else the namespace's clients connect: the Knative gateway and activator of its Knative predictors,
    AIBrix's gateway proxies for its AIBrix workloads."""
    batch: tuple[str, ...] = field(default=())
    """``app.kubernetes.io/component`` values of its one-off Jobs (``model-sync``, ``neuron-compile``)."""
    batch_egress: tuple[Peer, ...] = field(default=())
    port_clients: tuple[PortClientFlow, ...] = field(default=())
    """Its pods that a workload's extra port (``pod.ports``) names as clients, and their egress to it."""


@dataclass(frozen=True)
class PortClientFlow:
    """Egress of the pods of a namespace that a workload's extra port names as clients (each its own policy, so it
    holds whether or not ``namespace_clients`` lets the namespace's pods reach each other)."""

    name: str
    """``<workload>-<port name>``, with ``-<n>`` for a second client entry in the same namespace."""
    pods: Mapping[str, str]
    """The client pods' labels; empty: every pod of the namespace but its one-off Jobs."""
    egress: Peer


def workload_pods(workload: ResolvedWorkload) -> dict[str, str]:
    """The label every pod of ``workload`` carries, whichever kind and operator made it: ``app.kubernetes.io/name``
    is the workload's name on the pods inferstack renders and on the NIM operator's (v3.0.0: a NIMService's pods
    keep the operator's ``GetStandardLabels`` — ``app.kubernetes.io/part-of: nim-service`` wins over ours in
    ``utils.MergeMaps`` — and its NIMCache Job's pods get ``app.kubernetes.io/name: <NIMCache name>``,
    ``constructJob``), so no ``part-of`` in the selector."""
    return {NAME_LABEL: workload.name}


def runtime_paths(platform: ResolvedPlatform, workload: ResolvedWorkload) -> RuntimePaths:
    """The paths ``workload``'s kind declares for it (``WorkloadKind.paths``); with a router (``routing``), its pods
    call the serving port (Envoy sends the requests, the picker scrapes ``/metrics`` there) and clients reach the
    pods through it only."""
    paths = kind_of(workload.kind).paths(platform, workload)
    router = workload.router
    if router is None:
        return paths
    call = Call(
        workload.namespace,
        (router.target_port,),
        "the router's Envoy sends the requests its picker assigns, and the picker scrapes /metrics",
        pods=router_pods(router),
    )
    return replace(paths, calls=(*paths.calls, call), direct_clients=False)


def router_pods(router: ResolvedRouting) -> dict[str, str]:
    """The label of a router's pods."""
    return {NAME_LABEL: router.name}


def front_door(platform: ResolvedPlatform, workload: ResolvedWorkload) -> Peer:
    """Where a client of ``workload`` connects: its router's pods on the router port, else its own pods on the
    serving ports."""
    router = workload.router
    if router is not None:
        return Peer(namespace=workload.namespace, pods=router_pods(router), ports=(router.port,))
    return Peer(
        namespace=workload.namespace, pods=workload_pods(workload), ports=runtime_paths(platform, workload).serving
    )


def _clients(
    config: InferstackConfig, workload: ResolvedWorkload, paths: RuntimePaths, behind_gateway: bool = False
) -> Iterator[Peer]:
    """Client namespaces on the serving ports (when clients connect to the pods and the workload is not only
    reachable through a LiteLLM gateway), then the operators' calls."""
    if paths.direct_clients and not behind_gateway:
        if config.network_policies.namespace_clients:
            yield Peer(namespace=workload.namespace, ports=paths.serving)
        for namespace in config.network_policies.client_namespaces:
            if namespace != workload.namespace or not config.network_policies.namespace_clients:
                yield Peer(namespace=namespace, ports=paths.serving)
    for call in paths.calls:
        yield Peer(namespace=call.namespace, pods=call.pods, ports=call.ports)


def _knative(workload: ResolvedWorkload) -> bool:
    return getattr(workload.config, "deployment_mode", None) is DeploymentMode.KNATIVE


def _knative_gateway(config: InferstackConfig) -> str | None:
    knative = knative_serving(config)
    return knative.gateway_ns if knative is not None else None


#: The activator's ports (HTTP/1 and h2c, knative/serving v0.48.1 cmd/activator) and the local gateways' pod port
#: (kourier-internal and knative-local-gateway Services: port 80 → 8081, net-kourier / net-istio default installs).
KNATIVE_ACTIVATOR_PORTS, KNATIVE_GATEWAY_PORTS = (8012, 8013), (8081,)


def _to_knative(config: InferstackConfig, target: ResolvedWorkload) -> list[Peer]:
    """Egress a caller of ``target`` needs when it is a Knative predictor: its gateway and the activator."""
    if not _knative(target):
        return []
    gateway = _knative_gateway(config)
    activator = Peer(namespace=KNATIVE_NAMESPACE, ports=KNATIVE_ACTIVATOR_PORTS)
    return [activator, *([Peer(namespace=gateway, ports=KNATIVE_GATEWAY_PORTS)] if gateway else [])]


def _to_aibrix(target: ResolvedWorkload) -> list[Peer]:
    """Egress a caller of ``target`` needs when it has AIBrix: AIBrix's gateway proxies (the pods themselves admit
    no client: :func:`~inferstack.plan.runtime_paths.vllm_paths`)."""
    if getattr(target.config, "aibrix", None) is None:
        return []
    return [Peer(namespace=AIBRIX_GATEWAY_NAMESPACE, pods=AIBRIX_GATEWAY_PODS, ports=(AIBRIX_GATEWAY_POD_PORT,))]


def _gateways(platform: ResolvedPlatform) -> dict[tuple[str, str], list[ResolvedWorkload]]:
    """Backend ``(namespace, name)`` → the gateways routing to it."""
    routed: dict[tuple[str, str], list[ResolvedWorkload]] = {}
    for gateway in platform.workloads:
        if not isinstance(gateway.config, LiteLLMWorkloadConfig):
            continue
        for target in _backends(platform, gateway):
            routed.setdefault((target.namespace, target.name), []).append(gateway)
    return routed


def gateways_in_front(platform: ResolvedPlatform, workload: ResolvedWorkload) -> tuple[list[ResolvedWorkload], bool]:
    """The LiteLLM gateways routing to ``workload``, and whether clients reach it only through them (what its
    NetworkPolicy admits)."""
    gateways = _gateways(platform).get((workload.namespace, workload.name), [])
    return gateways, _only_through_gateways(workload, gateways)


def _only_through_gateways(workload: ResolvedWorkload, gateways: list[ResolvedWorkload]) -> bool:
    """A workload some LiteLLM gateway routes to is reached through it only — clients calling it directly would skip
    the gateway's keys and limits — unless a backend entry naming it sets ``direct_clients``."""
    if not gateways:
        return False
    for gateway in gateways:
        config = gateway.config
        assert isinstance(config, LiteLLMWorkloadConfig)
        for route in config.routes:
            for backend in route.backends:
                names = backend.workload == workload.name and backend.namespace in (None, workload.namespace)
                if names and backend.direct_clients:
                    return False
    return True


def _backends(platform: ResolvedPlatform, gateway: ResolvedWorkload) -> list[ResolvedWorkload]:
    config = gateway.config
    assert isinstance(config, LiteLLMWorkloadConfig)
    found: dict[tuple[str, str], ResolvedWorkload] = {}
    for route in config.routes:
        for backend in route.backends:
            if backend.workload is None:
                continue
            for target in platform.workloads:
                same = target.name == backend.workload and backend.namespace in (None, target.namespace)
                if same and target is not gateway:
                    found[(target.namespace, target.name)] = target
    return [found[key] for key in sorted(found)]


def _flows(platform: ResolvedPlatform, workload: ResolvedWorkload, gateways: list[ResolvedWorkload]) -> WorkloadFlows:
    config = platform.config
    paths = runtime_paths(platform, workload)
    own = workload_pods(workload)
    group = [] if paths.group == () else [Peer(namespace=workload.namespace, pods=own, ports=paths.group or ())]
    ingress = [*group, *_clients(config, workload, paths, behind_gateway=_only_through_gateways(workload, gateways))]
    router = workload.router
    if router is None:  # with a router, the gateways and the benchmark call it instead (_router_flows)
        ingress += [Peer(namespace=g.namespace, pods=workload_pods(g), ports=paths.serving) for g in gateways]
    if workload.config.monitoring and paths.metrics:
        ingress.append(Peer(namespace=PROMETHEUS_NAMESPACE, pods=PROMETHEUS_POD, ports=paths.metrics))
    if workload.bench is not None and router is None:
        ingress.append(Peer(namespace=workload.namespace, pods=bench_pods(workload.name), ports=paths.serving))
    ingress += _port_clients(workload)
    egress = list(group)
    if workload.readers:
        egress.append(Peer(cidr=POD_IDENTITY_AGENT, ports=(80,)))
    if paths.downloads or paths.api_server:
        egress.append(Peer(cidr=ANYWHERE, ports=(HTTPS,)))
    gateway = workload.config
    if isinstance(gateway, LiteLLMWorkloadConfig):
        for backend in _backends(platform, workload):
            egress += [front_door(platform, backend), *_service_peers(backend), *_to_knative(config, backend)]
        providers = any(b.provider is not None for r in gateway.routes for b in r.backends)
        if providers and Peer(cidr=ANYWHERE, ports=(HTTPS,)) not in egress:
            egress.append(Peer(cidr=ANYWHERE, ports=(HTTPS,)))
        if gateway.database.mode is DatabaseMode.EXISTING:
            egress.append(Peer(cidr=ANYWHERE, ports=(POSTGRES,)))
    return WorkloadFlows(
        name=workload.name,
        namespace=workload.namespace,
        pods=own,
        ingress=unique_peers(ingress),
        egress=unique_peers(egress),
    )


def _port_clients(workload: ResolvedWorkload) -> list[Peer]:
    """The pods admitted on each of the workload's extra ports (``pod.ports``): its ``clients``, by default the pods
    of the workload's namespace."""
    return [
        Peer(namespace=client.namespace or workload.namespace, pods=client.pods or None, ports=(port.port,))
        for port in workload.config.pod.ports
        for client in port.clients or (PortClient(),)
    ]


def _port_client_flows(platform: ResolvedPlatform, namespace: str) -> list[PortClientFlow]:
    """The client pods of ``namespace`` (one inferstack owns) that workloads' extra ports name — by default a port's
    clients are its workload's namespace — with their egress to the port."""
    flows: list[PortClientFlow] = []
    for workload in platform.workloads:
        for port in workload.config.pod.ports:
            clients = [c for c in port.clients or (PortClient(),) if (c.namespace or workload.namespace) == namespace]
            for index, client in enumerate(clients):
                target = Peer(namespace=workload.namespace, pods=workload_pods(workload), ports=(port.port,))
                name = f"{workload.name}-{port.name}" + (f"-{index + 1}" if index else "")
                flows.append(PortClientFlow(name=name, pods=dict(client.pods), egress=target))
    return flows


def _service_peers(target: ResolvedWorkload) -> list[Peer]:
    """Egress that reaches ``target``'s Service by its ClusterIP. The VPC CNI's policy controller resolves a rule's
    peer to Service ClusterIPs only where the rule's pod selector is a subset of the Service's selector
    (amazon-network-policy-controller-k8s ``pkg/resolvers/endpoints.go``, getMatchingServiceClusterIPs): the name
    label matches the Services inferstack renders, not an operator's. For those, every pod of the target's
    namespace on the Service's ports (an empty pod selector is a subset of any)."""
    ports = kind_of(target.kind).operator_service_ports
    return [Peer(namespace=target.namespace, ports=ports)] if ports else []


def _bench_flows(platform: ResolvedPlatform, workload: ResolvedWorkload) -> WorkloadFlows:
    """A benchmark's pods: nothing comes in; out to the workload it loads (through Knative's gateway for a Knative
    predictor), the Pod Identity agent and S3."""
    return WorkloadFlows(
        owner=workload.name,
        name=f"{workload.name}-bench",
        namespace=workload.namespace,
        pods=bench_pods(workload.name),
        ingress=(),
        egress=(
            front_door(platform, workload),
            *_service_peers(workload),
            *_to_knative(platform.config, workload),
            Peer(cidr=POD_IDENTITY_AGENT, ports=(80,)),
            Peer(cidr=ANYWHERE, ports=(HTTPS,)),
        ),
    )


def _router_flows(
    platform: ResolvedPlatform, workload: ResolvedWorkload, router: ResolvedRouting, gateways: list[ResolvedWorkload]
) -> WorkloadFlows:
    """A router's pods: the workload's clients (its namespace, ``client_namespaces`` — unless LiteLLM gateways
    front it —, the gateways, its benchmark) on the router port, Prometheus on the picker's metrics port; out to the
    serving pods' port and to the Kubernetes API (the picker watches the pods and its InferencePool)."""
    config = platform.config
    port = (router.port,)
    ingress: list[Peer] = []
    if not _only_through_gateways(workload, gateways):
        if config.network_policies.namespace_clients:
            ingress.append(Peer(namespace=workload.namespace, ports=port))
        for namespace in config.network_policies.client_namespaces:
            if namespace != workload.namespace or not config.network_policies.namespace_clients:
                ingress.append(Peer(namespace=namespace, ports=port))
    ingress += [Peer(namespace=g.namespace, pods=workload_pods(g), ports=port) for g in gateways]
    if workload.bench is not None:
        ingress.append(Peer(namespace=workload.namespace, pods=bench_pods(workload.name), ports=port))
    if router.monitoring:
        ingress.append(Peer(namespace=PROMETHEUS_NAMESPACE, pods=PROMETHEUS_POD, ports=(EPP_METRICS_PORT,)))
    egress = [
        Peer(namespace=workload.namespace, pods=workload_pods(workload), ports=(router.target_port,)),
        Peer(cidr=ANYWHERE, ports=(HTTPS,)),
    ]
    return WorkloadFlows(
        owner=workload.name,
        name=router.name,
        namespace=workload.namespace,
        pods=router_pods(router),
        ingress=unique_peers(ingress),
        egress=unique_peers(egress),
    )


def unique_peers(peers: list[Peer]) -> tuple[Peer, ...]:
    """``peers`` without repeats, in order."""
    kept: list[Peer] = []
    for peer in peers:
        if peer not in kept:
            kept.append(peer)
    return tuple(kept)


#: What the model-sync and Neuron compile Jobs reach: the Pod Identity agent and S3 / the Hub over HTTPS.
BATCH_EGRESS = (Peer(cidr=POD_IDENTITY_AGENT, ports=(80,)), Peer(cidr=ANYWHERE, ports=(HTTPS,)))


def network_flows(config: InferstackConfig) -> tuple[NamespaceFlows, ...]:
    """The flows of every namespace inferstack owns (none when ``network_policies.enabled`` is off)."""
    if not config.network_policies.enabled:
        return ()
    platform = resolve(config)
    routed = _gateways(platform)
    owned = set(namespaces_to_create(config))
    result = []
    for namespace in sorted(owned):
        workloads = [w for w in platform.workloads if w.namespace == namespace]
        flows = tuple(_flows(platform, w, routed.get((w.namespace, w.name), [])) for w in workloads)
        flows += tuple(_bench_flows(platform, w) for w in workloads if w.bench is not None)
        flows += tuple(
            _router_flows(platform, w, router, routed.get((w.namespace, w.name), []))
            for w in workloads
            if (router := w.router) is not None
        )
        batch = [MODEL_SYNC] if any(w.sync for w in workloads) else []
        if any(w.writes_bucket and w.pool.accelerator is AcceleratorKind.NEURON for w in workloads):
            batch.append(NEURON_COMPILE)
        egress = BATCH_EGRESS if batch else ()
        result.append(
            NamespaceFlows(
                namespace=namespace,
                workloads=flows,
                namespace_clients=config.network_policies.namespace_clients,
                client_egress=tuple(p for w in workloads for p in (*_to_knative(config, w), *_to_aibrix(w))),
                batch=tuple(batch),
                batch_egress=egress,
                port_clients=tuple(_port_client_flows(platform, namespace)),
            )
        )
    return tuple(result)
