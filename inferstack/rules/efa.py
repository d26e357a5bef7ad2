"""EFA rules: EFA only where the instance type has it, on one instance type per pool, within one AZ."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.catalog.instances import efa_capable
from inferstack.config.compute import KarpenterPoolConfig
from inferstack.config.model import InferstackConfig
from inferstack.plan import Role, resolve
from inferstack.rules.base import Finding, Rule, all_pools

UNSUPPORTED = "EFA-UNSUPPORTED"
SINGLE_AZ = "EFA-AZ"
ONE_TYPE = "EFA-ONE-TYPE"


def _types(pool: object) -> list[str]:
    if isinstance(pool, KarpenterPoolConfig):
        return [t.name for t in pool.instances]
    return [pool.instance_type]  # type: ignore[attr-defined]


def check_supported(config: InferstackConfig) -> Iterator[Finding]:
    """EFA requested for an instance type without EFA interfaces."""
    capable = set(efa_capable())
    for path, pool in all_pools(config):
        if not pool.efa:
            continue
        missing = [t for t in _types(pool) if t not in capable]
        if missing:
            field = "instance_type" if not isinstance(pool, KarpenterPoolConfig) else "efa"
            same_family = sorted(t for t in capable if t.split(".")[0] in {m.split(".")[0] for m in missing})
            yield Finding(
                rule=UNSUPPORTED,
                path=f"{path}.{field}",
                message=f"efa is on but {', '.join(missing)} has no EFA interface",
                fix=f"use an EFA-capable type ({', '.join(same_family or sorted(capable)[:12])}) or set efa: false",
            )


def cross_node_efa(config: InferstackConfig) -> dict[str, list[str]]:
    """Pool name → the workloads whose pods on it talk EFA to pods on other nodes: those with more than one role
    requesting EFA there (a multi-node group's leader and workers; prefill and decode pods, which move the KV
    cache over EFA). Replicas of one role (a Dynamo worker's) do not talk to each other."""
    users: dict[str, list[str]] = {}
    for workload in resolve(config).workloads:
        by_pool: dict[str, list[Role]] = {}
        for role in workload.roles.values():
            if role.pod.efa > 0:
                by_pool.setdefault(role.pool or workload.pool.name, []).append(role)
        for pool, roles in by_pool.items():
            if len(roles) > 1:
                users.setdefault(pool, []).append(workload.name)
    return users


def check_single_az(config: InferstackConfig) -> Iterator[Finding]:
    """EFA (OS-bypass) traffic cannot cross Availability Zones, and a cluster placement group lives in one: an EFA
    node group (one subnet) or an EFA pool with a placement group or with workloads that talk EFA across nodes
    must be pinned to one zone. An EFA Karpenter pool without a placement group whose workloads each stay on one
    node (EFA only within a pod) may span zones."""
    users = cross_node_efa(config)
    zones = "pin it to one zone: availability_zone: 0 (an index) or a name from network.availability_zones"
    for path, pool in all_pools(config):
        if not pool.efa or pool.availability_zone is not None:
            continue
        spread = f"EFA pool {pool.name!r} may place nodes in all {config.network.az_count} zones"
        if not isinstance(pool, KarpenterPoolConfig):
            yield Finding(
                rule=SINGLE_AZ,
                path=f"{path}.availability_zone",
                message=f"{spread}, and EFA traffic does not cross zones",
                fix=zones,
            )
        elif users.get(pool.name):
            yield Finding(
                rule=SINGLE_AZ,
                path=f"{path}.availability_zone",
                message=f"{spread}, and EFA traffic does not cross zones: {', '.join(users[pool.name])} talk EFA "
                "between nodes of it (multi-node groups, prefill/decode KV transfer)",
                fix=zones,
            )
        elif pool.uses_placement_group:
            yield Finding(
                rule=SINGLE_AZ,
                path=f"{path}.availability_zone",
                message=f"{spread}, but its cluster placement group (on by default for EFA pools) lives in one zone",
                fix=f"{zones}; or, when each of its workloads stays on one node, placement_group: false",
            )


def check_one_type(config: InferstackConfig) -> Iterator[Finding]:
    """An EFA Karpenter pool's interface layout depends on the instance type, so it takes exactly one."""
    for path, pool in all_pools(config):
        if isinstance(pool, KarpenterPoolConfig) and pool.efa and len(pool.instances) != 1:
            yield Finding(
                rule=ONE_TYPE,
                path=f"{path}.{pool.selection_field}",
                message=f"EFA pool {pool.name!r} covers {len(pool.instances)} instance types, but the EFA network "
                "interfaces (one per network card) differ per type",
                fix="list exactly one instance type instead, e.g. instance_types: [p5.48xlarge]; add one pool per type",
            )


RULES = (
    # Not acknowledgeable: a node group cannot attach EFA interfaces its type does not have (the compute stack
    # would fail to build it).
    Rule(id=UNSUPPORTED, title="EFA only on EFA-capable instance types", check=check_supported, acknowledgeable=False),
    Rule(
        id=SINGLE_AZ,
        title="EFA pools pinned to one Availability Zone where EFA crosses nodes or a placement group is used",
        check=check_single_az,
    ),
    Rule(id=ONE_TYPE, title="One instance type per EFA Karpenter pool", check=check_one_type),
)
