"""A workload's request router (``routing``), decided once: its name, the engine metrics its picker reads, the port
it routes to, its scorers and its pods' requests — what the chart renders, the NetworkPolicies admit, the endpoint
names and the rules judge (:mod:`inferstack.config.routing`, facts in :mod:`inferstack.catalog.routing`)."""

from __future__ import annotations

from dataclasses import dataclass

from inferstack.catalog.kubernetes import POOL_LABEL, SYSTEM_POOL
from inferstack.catalog.routing import ENGINE_METRICS, ROUTER_PORT, EngineMetricSpecs
from inferstack.config.kinds import kind_of
from inferstack.config.routing import RoutingScorersConfig
from inferstack.config.workloads import WorkloadBase

#: ``<workload>-router``: the router's Deployment, Service, ServiceAccount, ConfigMaps and InferencePool.
ROUTER_SUFFIX = "-router"
#: The vLLM switch that turns LoRA on (the picker then reads ``vllm:lora_requests_info``).
VLLM_LORA_FLAG = "--enable-lora"


@dataclass(frozen=True)
class ResolvedRouting:
    """The router of one workload."""

    name: str
    """``<workload>-router``."""
    namespace: str
    workload: str
    """The routed workload's name (its serving pods carry ``app.kubernetes.io/name: <workload>``)."""
    engine: EngineMetricSpecs
    """What its picker reads from the serving pods' ``/metrics``."""
    lora: bool
    """The servers run LoRA adapters (the picker reads their LoRA metric)."""
    target_port: int
    """The serving pods' port the router sends requests to (and scrapes ``/metrics`` on)."""
    scorers: RoutingScorersConfig
    replicas: int
    cpu: float
    """The picker's CPU request, vCPUs."""
    memory_gib: float
    memory_limit_gib: float
    node_selector: dict[str, str]
    """The system nodes."""
    monitoring: bool
    """A PodMonitor scrapes the picker's metrics (with the workload's ``monitoring``)."""

    @property
    def port(self) -> int:
        """The router Service's (and Envoy's) port clients call."""
        return ROUTER_PORT


def routed(workload: WorkloadBase) -> bool:
    """``workload`` has a router (``routing`` set on a kind that takes one; ROUTING-KIND refuses the others)."""
    return workload.routing is not None and kind_of(workload).routing_engine is not None


def routing_of(workload: WorkloadBase) -> ResolvedRouting | None:
    """The router of ``workload``, or None without one."""
    routing = workload.routing
    kind = kind_of(workload)
    if routing is None or kind.routing_engine is None or kind.endpoint is None or kind.endpoint.port is None:
        return None
    engine = getattr(workload, "engine", None)
    extra_args = tuple(getattr(engine, "extra_args", ()) or ())
    lora = kind.routing_engine == "vllm" and any(
        a == VLLM_LORA_FLAG or a.startswith(f"{VLLM_LORA_FLAG}=") for a in extra_args
    )
    return ResolvedRouting(
        name=f"{workload.name}{ROUTER_SUFFIX}",
        namespace=workload.namespace,
        workload=workload.name,
        engine=ENGINE_METRICS[kind.routing_engine],
        lora=lora,
        target_port=kind.endpoint.port,
        scorers=routing.scorers,
        replicas=routing.replicas,
        cpu=routing.cpu,
        memory_gib=routing.memory_gib,
        memory_limit_gib=routing.memory_limit,
        node_selector={POOL_LABEL: SYSTEM_POOL},
        monitoring=workload.monitoring,
    )
