"""A workload's request router (``routing``), decided once in the plan (``ResolvedWorkload.router``): its name, the
engine metrics its picker reads, the port it routes to, its scorers, its pods' requests and where they run — what
the chart renders, the NetworkPolicies admit and the rules judge (:mod:`inferstack.config.routing`, facts in
:mod:`inferstack.catalog.routing`). Callers holding only a workload's config (its endpoint) use :func:`router_name`.
"""

from __future__ import annotations

from dataclasses import dataclass

from inferstack.catalog.kubernetes import POOL_LABEL, SYSTEM_POOL
from inferstack.catalog.routing import ENGINE_METRICS, ROUTER_PORT, EngineMetricSpecs
from inferstack.config.kinds import kind_of
from inferstack.config.model import InferstackConfig
from inferstack.config.routing import RoutingScorersConfig
from inferstack.config.workloads import WorkloadBase
from inferstack.plan.placement import pool_taints

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
    pool: str
    """The pool its pods run on (``routing.pool``, else the system nodes)."""
    node_selector: dict[str, str]
    tolerations: frozenset[tuple[str, str]]
    """``(key, effect)`` of the pool's taints."""
    monitoring: bool
    """A PodMonitor scrapes the picker and its alerts are rendered: with the workload's ``monitoring``, while the
    workload is not parked (0 replicas without autoscaling: nothing to read, the alerts would fire all along)."""

    @property
    def port(self) -> int:
        """The router Service's (and Envoy's) port clients call."""
        return ROUTER_PORT


def routed(workload: WorkloadBase) -> bool:
    """``workload`` has a router (``routing`` set on a kind that takes one; ROUTING-KIND refuses the others)."""
    kind = kind_of(workload)
    return workload.routing is not None and kind.routing_engine is not None and kind.endpoint is not None


def router_name(workload: WorkloadBase) -> str | None:
    """``<name>-router`` when ``workload`` has a router, else None."""
    return f"{workload.name}{ROUTER_SUFFIX}" if routed(workload) else None


def resolve_routing(config: InferstackConfig, workload: WorkloadBase) -> ResolvedRouting | None:
    """The router of ``workload``, or None without one."""
    routing, kind, name = workload.routing, kind_of(workload), router_name(workload)
    if routing is None or name is None or kind.routing_engine is None or kind.endpoint is None:
        return None
    assert kind.endpoint.port is not None
    engine = getattr(workload, "engine", None)
    extra_args = tuple(getattr(engine, "extra_args", ()) or ())
    lora = kind.routing_engine == "vllm" and any(a.split("=", 1)[0] == VLLM_LORA_FLAG for a in extra_args)
    pool = next((p for p in config.compute.pools if p.name == routing.pool), None)  # ROUTING-POOL names a typo
    most = workload.autoscaling.max_replicas if workload.autoscaling is not None else workload.replicas
    return ResolvedRouting(
        name=name,
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
        pool=routing.pool or SYSTEM_POOL,
        node_selector={POOL_LABEL: routing.pool or SYSTEM_POOL},
        tolerations=frozenset(pool_taints(pool)) if pool is not None else frozenset(),
        monitoring=workload.monitoring and most > 0,
    )
