"""EFA rules: EFA only where the instance type has it, on one instance type per pool, within one AZ."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.catalog.instances import efa_capable
from inferstack.config.compute import KarpenterPoolConfig
from inferstack.config.model import InferstackConfig
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


def check_single_az(config: InferstackConfig) -> Iterator[Finding]:
    """EFA (OS-bypass) traffic cannot cross Availability Zones: an EFA pool must be pinned to one."""
    for path, pool in all_pools(config):
        if pool.efa and pool.availability_zone is None:
            yield Finding(
                rule=SINGLE_AZ,
                path=f"{path}.availability_zone",
                message=f"EFA pool {pool.name!r} may place nodes in all {config.network.az_count} zones, and EFA "
                "traffic does not cross zones",
                fix="pin it to one zone: availability_zone: 0 (an index) or a name from network.availability_zones",
            )


def check_one_type(config: InferstackConfig) -> Iterator[Finding]:
    """An EFA Karpenter pool's interface layout depends on the instance type, so it takes exactly one."""
    for path, pool in all_pools(config):
        if isinstance(pool, KarpenterPoolConfig) and pool.efa and len(pool.instances) != 1:
            yield Finding(
                rule=ONE_TYPE,
                path=f"{path}.{'instance_types' if pool.instance_types else 'instance_families'}",
                message=f"EFA pool {pool.name!r} covers {len(pool.instances)} instance types, but the EFA network "
                "interfaces (one per network card) differ per type",
                fix="list exactly one instance type instead, e.g. instance_types: [p5.48xlarge]; add one pool per type",
            )


RULES = (
    # Not acknowledgeable: a node group cannot attach EFA interfaces its type does not have (the compute stack
    # would fail to build it).
    Rule(id=UNSUPPORTED, title="EFA only on EFA-capable instance types", check=check_supported, acknowledgeable=False),
    Rule(id=SINGLE_AZ, title="EFA pools pinned to one Availability Zone", check=check_single_az),
    Rule(id=ONE_TYPE, title="One instance type per EFA Karpenter pool", check=check_one_type),
)
