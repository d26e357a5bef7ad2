"""What a config costs at on-demand prices (:mod:`inferstack.catalog.prices`), per workload and per pool, hourly and
per 730-hour month.

A workload's cost is its pods' share of their nodes at its configured replicas: a pod that holds 1 of a node's 4
GPUs costs a quarter of the node, an EFA pod (every EFA device) a whole node, a CPU pod its vCPU share. A pool's
range is what its nodes cost from what stays running (a node group's ``desired_size``) to its ceiling
(``max_size``, or a Karpenter pool's limits filled with its priciest type). Spot and reserved capacity are priced
on demand (the upper bound); a missing price is reported, never guessed."""

from __future__ import annotations

import math
from dataclasses import dataclass

from inferstack.catalog.instances import INSTANCE_TYPES, InstanceType
from inferstack.catalog.kubernetes import SYSTEM_POOL
from inferstack.catalog.prices import DEFAULT_PRICE_REGION, HOURS_PER_MONTH, price
from inferstack.config.compute import AcceleratedNodeGroupConfig, KarpenterPoolConfig
from inferstack.config.model import InferstackConfig
from inferstack.plan import ResolvedPlatform, Role, resolve
from inferstack.plan.placement import host_instance, pool_instances

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


def _node(config: InferstackConfig, role: Role, pool_name: str) -> InstanceType:
    if pool_name == SYSTEM_POOL:
        return min((INSTANCE_TYPES[t] for t in config.cluster.system_nodes.instance_types), key=lambda t: t.vcpu)
    instances = pool_instances(config.pool(pool_name))
    return host_instance(instances, role.pod.accelerators) or max(instances, key=lambda t: t.accelerator_count)


def _share(role: Role, node: InstanceType) -> float:
    if role.pod.efa:
        return 1.0  # every EFA device of the node: nothing else fits beside it
    if role.pod.accelerators and node.accelerator_count:
        return role.pod.accelerators / node.accelerator_count
    return min(1.0, role.pod.cpu / node.vcpu)


def workload_costs(config: InferstackConfig, plan: ResolvedPlatform | None = None) -> list[Cost]:
    """Each workload's hourly cost at its configured replicas."""
    plan = plan or resolve(config)
    region = price_region(config)
    costs = []
    for resolved in plan.workloads:
        total, parts, missing = 0.0, [], []
        replicas = resolved.config.replicas
        for role in resolved.roles.values():
            pool_name = role.pool or resolved.pool.name
            node = _node(config, role, pool_name)
            found = price(node.name, region)
            if found is None:
                missing.append(node.name)
                continue
            pods = role.pods_per_replica * replicas
            hourly = pods * _share(role, node) * found.on_demand
            total += hourly
            parts.append(f"{role.name} {pods}×{_share(role, node):.2g} {node.name}")
        costs.append(
            Cost(
                f"{resolved.namespace}/{resolved.name}",
                None if missing else total,
                "no price for " + ", ".join(sorted(set(missing))) if missing else ", ".join(parts),
                resolved.config.expected_requests_per_day,
            )
        )
    return costs


def _pool_nodes(pool: AcceleratedNodeGroupConfig | KarpenterPoolConfig) -> tuple[int, int, InstanceType]:
    """(running, ceiling) node counts and the type they are priced at."""
    if isinstance(pool, AcceleratedNodeGroupConfig):
        return pool.desired_size, pool.max_size, pool.instance
    instances = pool_instances(pool)
    priciest = max(instances, key=lambda t: (t.accelerator_count, t.vcpu))
    if pool.accelerator_limit and priciest.accelerator_count:
        ceiling = math.ceil(pool.accelerator_limit / priciest.accelerator_count)
    else:
        ceiling = math.ceil((pool.cpu_limit or priciest.vcpu) / priciest.vcpu)
    return 0, ceiling, priciest


def pool_costs(config: InferstackConfig) -> list[Cost]:
    """Each pool's hourly cost from what stays running to its ceiling (the detail says both)."""
    region = price_region(config)
    costs = []
    system = config.cluster.system_nodes
    node = max((INSTANCE_TYPES[t] for t in system.instance_types), key=lambda t: t.vcpu)
    pools = [(SYSTEM_POOL, system.desired_size, system.max_size, node)]
    pools += [(p.name, *_pool_nodes(p)) for p in config.compute.pools]
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
