"""Rules of a workload's request router (``routing``, :mod:`inferstack.config.routing`):

* ROUTING-KIND — a router for a kind whose pods the picker cannot score (it reads vLLM's or SGLang's ``/metrics``);
* ROUTING-AIBRIX — a router beside AIBrix's gateway: both would route the same pods, and the AIBrix pods admit only
  AIBrix's gateway;
* ROUTING-METRICS — vLLM started with ``--disable-log-stats``: its ``/metrics`` exports no queue or KV-cache gauges
  (vLLM 0.19/0.31 ``AsyncLLM``: no stat loggers without ``log_stats``), so the picker reads nothing and scores every
  replica alike;
* ROUTING-POOL — ``routing.pool`` has accelerators (the router would hold a GPU node; a name that is no pool is a
  config error);
* ROUTING-FITS — the router pod (the picker's request and Envoy's 0.1 vCPU / 0.5 GiB) fits no node of its pool;
* ROUTING-SYSTEM-SHARE (warning) — the routers on the system nodes take more than half of what the fixed system
  group gives at ``desired_size`` (the rest runs the cluster's controllers: Karpenter, CoreDNS, the operators,
  Prometheus), so some would stay Pending;
* ROUTING-PREFIX-CACHE (warning) — the prefix scorer weighs in while the engine keeps no prefix cache;
* ROUTING-ONE-REPLICA (warning) — at most one replica: there is nothing to pick between.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.routing import ENVOY_CPU, ENVOY_MEMORY_GIB
from inferstack.config.kinds import KINDS, kind_of
from inferstack.config.model import InferstackConfig
from inferstack.config.workloads import WorkloadBase
from inferstack.plan.placement import allocatable_cpu, allocatable_memory_gib, largest_system_node, pool_instances
from inferstack.plan.routing import routed
from inferstack.rules.base import Finding, Rule, Severity

KIND = "ROUTING-KIND"
AIBRIX = "ROUTING-AIBRIX"
METRICS = "ROUTING-METRICS"
FITS = "ROUTING-FITS"
POOL = "ROUTING-POOL"
SYSTEM_SHARE = "ROUTING-SYSTEM-SHARE"
#: The share of the system group's allocatable CPU and memory routers may take (the rest: its controllers).
SYSTEM_SHARE_MAX = 0.5
PREFIX_CACHE = "ROUTING-PREFIX-CACHE"
ONE_REPLICA = "ROUTING-ONE-REPLICA"

#: vLLM's switch that turns its stat loggers (and so every Prometheus gauge) off.
DISABLE_LOG_STATS = "--disable-log-stats"


def _routed(config: InferstackConfig) -> Iterator[tuple[str, WorkloadBase]]:
    """``(path, workload)`` of every workload with ``routing`` on a kind that takes one."""
    for index, workload in enumerate(config.workloads):
        if routed(workload):
            yield f"workloads[{index}]", workload


def check_kind(config: InferstackConfig) -> Iterator[Finding]:
    """ROUTING-KIND: the kind declares the engine whose metrics the picker reads."""
    for index, workload in enumerate(config.workloads):
        if workload.routing is not None and kind_of(workload).routing_engine is None:
            kinds = ", ".join(k.name for k in KINDS.values() if k.routing_engine is not None)
            yield Finding(
                rule=KIND,
                path=f"workloads[{index}].routing",
                message=f"kind {workload.kind} exports none of the metrics the endpoint picker scores replicas by "
                "(vLLM's or SGLang's queue and KV-cache gauges)",
                fix=f"remove routing (kinds with a router: {kinds})",
            )


def check_aibrix(config: InferstackConfig) -> Iterator[Finding]:
    """ROUTING-AIBRIX: one router per workload."""
    for path, workload in _routed(config):
        if getattr(workload, "aibrix", None) is not None:
            yield Finding(
                rule=AIBRIX,
                path=f"{path}.routing",
                message="AIBrix's gateway routes this workload already (its pods admit only that gateway, since "
                "their serving port also loads LoRA adapters)",
                fix="remove routing, or aibrix",
            )


def check_metrics(config: InferstackConfig) -> Iterator[Finding]:
    """ROUTING-METRICS: vLLM exports its gauges (no ``--disable-log-stats``)."""
    for path, workload in _routed(config):
        if kind_of(workload).routing_engine != "vllm":
            continue
        args = tuple(getattr(getattr(workload, "engine", None), "extra_args", ()) or ())
        for position, arg in enumerate(args):
            if arg.split("=", 1)[0] == DISABLE_LOG_STATS:
                yield Finding(
                    rule=METRICS,
                    path=f"{path}.engine.extra_args[{position}]",
                    message=f"{DISABLE_LOG_STATS} turns off vLLM's stat loggers: /metrics has no queue or KV-cache "
                    "gauges, and the router's picker would score every replica alike",
                    fix=f"remove {DISABLE_LOG_STATS}, or routing",
                )


def check_pool(config: InferstackConfig) -> Iterator[Finding]:
    """ROUTING-POOL: the router runs on a CPU pool (the config refuses a name that is no pool)."""
    pools = {p.name: p for p in config.compute.pools}
    cpu_pools = sorted(name for name, p in pools.items() if p.accelerator is AcceleratorKind.NONE)
    for path, workload in _routed(config):
        routing = workload.routing
        assert routing is not None
        pool = pools.get(routing.pool) if routing.pool is not None else None
        if pool is not None and pool.accelerator is not AcceleratorKind.NONE:
            yield Finding(
                rule=POOL,
                path=f"{path}.routing.pool",
                message=f"pool {routing.pool!r} has accelerators: the router (a CPU proxy) would hold an accelerated "
                "node",
                fix=f"leave routing.pool unset (the system nodes) or use a CPU pool ({', '.join(cpu_pools) or 'none'})",
            )


def _router_pod(workload: WorkloadBase) -> tuple[float, float]:
    """One router pod's requests: the picker's and Envoy's (vCPU, GiB)."""
    routing = workload.routing
    assert routing is not None
    return routing.cpu + ENVOY_CPU, routing.memory_gib + ENVOY_MEMORY_GIB


def check_fits(config: InferstackConfig) -> Iterator[Finding]:
    """ROUTING-FITS: the router pod fits a node of its pool (the largest instance type it may get)."""
    pools = {p.name: p for p in config.compute.pools}
    for path, workload in _routed(config):
        routing = workload.routing
        assert routing is not None
        pool = pools.get(routing.pool) if routing.pool is not None else None
        if pool is not None and pool.accelerator is not AcceleratorKind.NONE:
            continue  # ROUTING-POOL
        instances = pool_instances(pool) if pool is not None else [largest_system_node(config)]
        best = max(instances, key=lambda t: (allocatable_cpu(t), allocatable_memory_gib(t)))
        cpu, memory = _router_pod(workload)
        if cpu > allocatable_cpu(best) or memory > allocatable_memory_gib(best):
            where = f"pool {routing.pool!r}" if pool is not None else "the system nodes"
            yield Finding(
                rule=FITS,
                path=f"{path}.routing",
                message=f"the router pod asks for {cpu:g} vCPU / {memory:g} GiB (the picker and Envoy); a node of "
                f"{where} ({best.name}) gives {allocatable_cpu(best):g} vCPU / "
                f"{allocatable_memory_gib(best):.1f} GiB, so it would stay Pending",
                fix="lower routing.cpu / routing.memory_gib, or run it on a larger pool (routing.pool, or "
                "cluster.system_nodes.instance_types)",
            )


def check_system_share(config: InferstackConfig) -> Iterator[Finding]:
    """ROUTING-SYSTEM-SHARE: the routers on the fixed system group leave half of it to the controllers."""
    on_system = [(path, w) for path, w in _routed(config) if w.routing is not None and w.routing.pool is None]
    if not on_system:
        return
    system = config.cluster.system_nodes
    node = largest_system_node(config)
    total_cpu = sum(_router_pod(w)[0] * w.routing.replicas for _, w in on_system if w.routing)
    total_memory = sum(_router_pod(w)[1] * w.routing.replicas for _, w in on_system if w.routing)
    cpu_room = SYSTEM_SHARE_MAX * system.desired_size * allocatable_cpu(node)
    memory_room = SYSTEM_SHARE_MAX * system.desired_size * allocatable_memory_gib(node)
    if total_cpu > cpu_room or total_memory > memory_room:
        path, _ = on_system[-1]
        yield Finding(
            rule=SYSTEM_SHARE,
            path=f"{path}.routing.pool",
            message=f"{len(on_system)} router(s) on the system nodes ask for {total_cpu:g} vCPU / "
            f"{total_memory:g} GiB together; the system group gives {system.desired_size} × {node.name}, and "
            f"above {SYSTEM_SHARE_MAX:.0%} of it ({cpu_room:g} vCPU / {memory_room:.1f} GiB) the controllers "
            "inferstack places there (Karpenter, CoreDNS, the operators, Prometheus) leave some router Pending",
            fix="run routers on a CPU pool (routing.pool), lower routing.cpu / memory_gib, or raise "
            "cluster.system_nodes.desired_size",
            severity=Severity.WARNING,
        )


def _prefix_cache_off(workload: WorkloadBase) -> str | None:
    """The engine setting that turns its prefix cache off, when set."""
    engine = getattr(workload, "engine", None)
    if kind_of(workload).routing_engine == "vllm" and getattr(engine, "enable_prefix_caching", True) is False:
        return "engine.enable_prefix_caching is false"
    if kind_of(workload).routing_engine == "sglang" and getattr(engine, "disable_radix_cache", False):
        return "engine.disable_radix_cache is true"
    return None


def check_prefix_cache(config: InferstackConfig) -> Iterator[Finding]:
    """ROUTING-PREFIX-CACHE: the prefix scorer sends a prompt where its prefix is cached — only if it is."""
    for path, workload in _routed(config):
        routing = workload.routing
        assert routing is not None
        off = _prefix_cache_off(workload)
        if off is not None and routing.scorers.prefix_cache > 0:
            yield Finding(
                rule=PREFIX_CACHE,
                path=f"{path}.routing.scorers.prefix_cache",
                message=f"{off}: no replica reuses a cached prefix, yet the prefix scorer keeps sending a prompt's "
                "prefix to the same replica, which only unbalances the load",
                fix="set routing.scorers.prefix_cache: 0, or turn the engine's prefix cache on",
                severity=Severity.WARNING,
            )


def check_one_replica(config: InferstackConfig) -> Iterator[Finding]:
    """ROUTING-ONE-REPLICA: a router picks among replicas."""
    for path, workload in _routed(config):
        most = workload.autoscaling.max_replicas if workload.autoscaling is not None else workload.replicas
        if most <= 1:
            yield Finding(
                rule=ONE_REPLICA,
                path=f"{path}.routing",
                message=f"the workload runs at most {most} replica{'' if most == 1 else 's'}: the router has no "
                "choice to make and adds a hop (and its pod) to every request",
                fix="raise replicas (or autoscaling.max_replicas) above 1, or remove routing",
                severity=Severity.WARNING,
            )


RULES = (
    Rule(id=KIND, title="A router's picker can read the kind's metrics", check=check_kind),
    Rule(id=AIBRIX, title="One router per workload", check=check_aibrix),
    Rule(id=METRICS, title="vLLM exports the gauges the router reads", check=check_metrics),
    Rule(id=POOL, title="A router runs on a CPU pool", check=check_pool),
    Rule(id=FITS, title="The router pod fits a node of its pool", check=check_fits),
    Rule(id=SYSTEM_SHARE, title="Routers leave the system nodes to the controllers", check=check_system_share),
    Rule(id=PREFIX_CACHE, title="The prefix scorer has a prefix cache to aim at", check=check_prefix_cache),
    Rule(id=ONE_REPLICA, title="A router has replicas to pick between", check=check_one_replica),
)
