"""What a config costs at on-demand prices (:mod:`inferstack.catalog.prices`), per workload and per pool, hourly and
per 730-hour month.

A workload's cost is its pods' share of their nodes at its configured replicas (and its router's pods, on their
pool: ``routing``): each pod lands on the smallest
node of its pool that holds it and costs 1 / the pods that fit there (by devices, CPU and memory); an EFA pod,
holding every EFA device, costs a whole node. A pool's range is what its nodes cost from what stays running (a
node group's ``desired_size``) to its ceiling (``max_size``, or a Karpenter pool's limits filled the costliest
way). Spot and reserved capacity are priced on demand (the upper bound); a missing price is reported, never
guessed."""

from __future__ import annotations

import math
from dataclasses import dataclass

from inferstack.catalog.instances import INSTANCE_TYPES, InstanceType
from inferstack.catalog.kubernetes import SYSTEM_POOL
from inferstack.catalog.prices import DEFAULT_PRICE_REGION, HOURS_PER_MONTH, price
from inferstack.catalog.routing import ENVOY_CPU, ENVOY_MEMORY_GIB
from inferstack.config.compute import AcceleratedNodeGroupConfig, KarpenterPoolConfig
from inferstack.config.model import InferstackConfig
from inferstack.plan import ResolvedPlatform, resolve
from inferstack.plan.placement import PodPlan, allocatable_cpu, allocatable_memory_gib, pool_instances
from inferstack.plan.routing import ResolvedRouting

#: Days in a 730-hour month.
DAYS_PER_MONTH = HOURS_PER_MONTH / 24


@dataclass(frozen=True)
class Cost:
    subject: str
    hourly: float | None
    """USD per hour; None when a price is missing."""
    detail: str
    requests_per_day: int | None = None
    """The workload's stated traffic (``expected_requests_per_day``)."""

    @property
    def monthly(self) -> float | None:
        return None if self.hourly is None else self.hourly * HOURS_PER_MONTH

    @property
    def per_thousand_requests(self) -> float | None:
        """USD per 1,000 requests at the stated traffic (the month's cost over the month's requests)."""
        if self.monthly is None or not self.requests_per_day:
            return None
        return self.monthly / (self.requests_per_day * DAYS_PER_MONTH / 1000)


def price_region(config: InferstackConfig) -> str:
    return config.env.region or DEFAULT_PRICE_REGION


@dataclass(frozen=True)
class _Pod:
    """What a pod asks of its node (a role's :class:`~inferstack.plan.placement.PodPlan` has the same fields)."""

    cpu: float
    memory_gib: float
    accelerators: int = 0
    efa: int = 0


def _router_pod(router: ResolvedRouting) -> _Pod:
    """A router pod: the picker's requests and Envoy's."""
    return _Pod(cpu=router.cpu + ENVOY_CPU, memory_gib=router.memory_gib + ENVOY_MEMORY_GIB)


def _node(config: InferstackConfig, pod: PodPlan | _Pod, pool_name: str) -> InstanceType:
    """The node a pod lands on: the smallest of its pool (by devices, then vCPU) that holds its accelerators, CPU
    and memory."""
    if pool_name == SYSTEM_POOL:
        instances = [INSTANCE_TYPES[t] for t in config.cluster.system_nodes.instance_types]
    else:
        instances = pool_instances(config.pool(pool_name))
    fitting = [
        t
        for t in instances
        if t.accelerator_count >= pod.accelerators
        and allocatable_cpu(t) >= pod.cpu
        and allocatable_memory_gib(t) >= pod.memory_gib
    ]
    return min(fitting or instances, key=lambda t: (t.accelerator_count, t.vcpu, t.name))


def _share(pod: PodPlan | _Pod, node: InstanceType) -> float:
    """The share of ``node`` one pod costs: 1 / the pods that fit on it (an EFA pod takes every EFA device)."""
    if pod.efa:
        return 1.0
    fits = [
        math.floor(allocatable_cpu(node) / pod.cpu) if pod.cpu else math.inf,
        math.floor(allocatable_memory_gib(node) / pod.memory_gib) if pod.memory_gib else math.inf,
    ]
    if pod.accelerators:
        fits.append(node.accelerator_count // pod.accelerators)
    per_node = max(1, min(fits))
    return 1.0 / per_node


def workload_costs(config: InferstackConfig, plan: ResolvedPlatform | None = None) -> list[Cost]:
    """Each workload's hourly cost at its configured replicas."""
    plan = plan or resolve(config)
    region = price_region(config)
    costs = []
    for resolved in plan.workloads:
        total, parts, missing = 0.0, [], []
        replicas = resolved.config.replicas
        placed: list[tuple[str, PodPlan | _Pod, str, int]] = [
            (role.name, role.pod, role.pool or resolved.pool.name, role.pods_per_replica * replicas)
            for role in resolved.roles.values()
        ]
        router = resolved.router
        if router is not None:  # its pods on the system nodes or its CPU pool
            placed.append(("router", _router_pod(router), router.pool, router.replicas))
        for name, pod, pool_name, pods in placed:
            node = _node(config, pod, pool_name)
            found = price(node.name, region)
            if found is None:
                missing.append(node.name)
                continue
            total += pods * _share(pod, node) * found.on_demand
            parts.append(f"{name} {pods}×{_share(pod, node):.2g} {node.name}")
        costs.append(
            Cost(
                f"{resolved.namespace}/{resolved.name}",
                None if missing else total,
                "no price for " + ", ".join(sorted(set(missing))) if missing else ", ".join(parts),
                resolved.config.expected_requests_per_day,
            )
        )
    return costs


def _pool_ceiling(pool: KarpenterPoolConfig, region: str) -> tuple[int, InstanceType]:
    """The costliest way a Karpenter pool can fill its limits: over its types, the node count × price that is
    highest (a limit of 64 GPUs costs most as 64 one-GPU nodes of the pricier type, not as 8 eight-GPU ones)."""
    options = []
    for instance in pool_instances(pool):
        if pool.accelerator_limit and instance.accelerator_count:
            nodes = math.ceil(pool.accelerator_limit / instance.accelerator_count)
        else:
            nodes = math.ceil((pool.cpu_limit or instance.vcpu) / instance.vcpu)
        by_memory = pool.memory_nodes(instance)
        if by_memory is not None:
            nodes = min(nodes, by_memory)
        found = price(instance.name, region)
        options.append((nodes * found.on_demand if found else -1.0, nodes, instance))
    _, nodes, instance = max(options, key=lambda o: o[0])
    return nodes, instance


def _pool_nodes(pool: AcceleratedNodeGroupConfig | KarpenterPoolConfig, region: str) -> tuple[int, int, InstanceType]:
    """(running, ceiling) node counts and the type they are priced at."""
    if isinstance(pool, AcceleratedNodeGroupConfig):
        return pool.desired_size, pool.max_size, pool.instance
    ceiling, instance = _pool_ceiling(pool, region)
    return 0, ceiling, instance


def pool_costs(config: InferstackConfig) -> list[Cost]:
    """Each pool's hourly cost from what stays running to its ceiling (the detail says both)."""
    region = price_region(config)
    costs = []
    system = config.cluster.system_nodes
    node = max((INSTANCE_TYPES[t] for t in system.instance_types), key=lambda t: t.vcpu)
    pools = [(SYSTEM_POOL, system.desired_size, system.max_size, node)]
    pools += [(p.name, *_pool_nodes(p, region)) for p in config.compute.pools]
    for name, running, ceiling, instance in pools:
        found = price(instance.name, region)
        if found is None:
            costs.append(Cost(name, None, f"no price for {instance.name} in {region}"))
            continue
        costs.append(
            Cost(
                name,
                running * found.on_demand,
                f"{running}–{ceiling} × {instance.name} at ${found.on_demand:g}/h: up to "
                f"${ceiling * found.on_demand * HOURS_PER_MONTH:,.0f}/month",
            )
        )
    return costs


def cost_table(config: InferstackConfig) -> str:
    """The cost section of ``plan``."""
    region = price_region(config)
    lines = [f"cost (on-demand, {region}, vendored price table; spot/reserved priced on demand)"]
    lines.append(f"{'':2}{'workload':<32} {'$/hour':>9} {'$/month':>11}  pods")
    for cost in workload_costs(config):
        lines.append(_row(cost))
    lines.append(f"{'':2}{'pool':<32} {'$/hour':>9} {'$/month':>11}  nodes (running – ceiling)")
    for cost in pool_costs(config):
        lines.append(_row(cost))
    return "\n".join(lines)


def _row(cost: Cost) -> str:
    if cost.hourly is None:
        return f"  {cost.subject:<32} {'-':>9} {'-':>11}  {cost.detail}"
    per_k = cost.per_thousand_requests
    traffic = f"; ${per_k:.4f} per 1K requests at {cost.requests_per_day:,}/day" if per_k is not None else ""
    return f"  {cost.subject:<32} {cost.hourly:>9.2f} {cost.monthly:>11,.0f}  {cost.detail}{traffic}"
