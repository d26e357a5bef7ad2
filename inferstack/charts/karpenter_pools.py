"""KarpenterPoolsChart: one EC2NodeClass + NodePool per configured Karpenter pool."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import cdk8s
from constructs import Construct

from inferstack.catalog.efa_layout import karpenter_interfaces
from inferstack.catalog.kubernetes import ACCELERATOR_RESOURCE, POOL_LABEL
from inferstack.catalog.versions import KARPENTER_AMI_ALIASES
from inferstack.config.compute import KarpenterPoolConfig, NodeCapacity
from inferstack.config.karpenter_ami import AmiFamily
from inferstack.constructs.karpenter import (
    Budget,
    Ec2NodeClass,
    Ec2NodeClassProps,
    NodePool,
    NodePoolProps,
    NodeTaint,
    Requirement,
)
from inferstack.plan.placement import pool_labels, pool_node_taints

_CAPACITY = {NodeCapacity.ON_DEMAND: "on-demand", NodeCapacity.SPOT: "spot", NodeCapacity.RESERVED: "reserved"}


@dataclass(frozen=True, kw_only=True)
class PoolPlacement:
    """Where one pool's nodes go (values from the AWS side, often CDK tokens)."""

    subnet_ids: Sequence[str]
    zone: str | None = None
    """Zone name (may be a token) when the pool is pinned to one AZ."""
    security_group_ids: Sequence[str] = ()
    placement_group: str | None = None


@dataclass(frozen=True, kw_only=True)
class KarpenterPoolsProps:
    pools: Sequence[KarpenterPoolConfig]
    placements: Mapping[str, PoolPlacement]
    """Per pool name."""
    node_role_name: str
    tags: Mapping[str, str] = field(default_factory=dict)


def node_pool_props(pool: KarpenterPoolConfig, zone: str | None) -> NodePoolProps:
    """The NodePool for one configured pool (pure: no AWS values but the zone)."""
    types = sorted(t.name for t in pool.instances)
    requirements = [
        Requirement(key="node.kubernetes.io/instance-type", values=tuple(types)),
        Requirement(key="karpenter.sh/capacity-type", values=tuple(_CAPACITY[c] for c in pool.capacity_types)),
        Requirement(key="kubernetes.io/arch", values=("amd64",)),
    ]
    if zone is not None:
        requirements.append(Requirement(key="topology.kubernetes.io/zone", values=(zone,)))
    limits: dict[str, int | str] = {}
    if pool.is_accelerated:
        limits[ACCELERATOR_RESOURCE[pool.accelerator]] = pool.accelerator_limit or 0
    if pool.cpu_limit is not None:
        limits["cpu"] = pool.cpu_limit
    if pool.max_memory_gib is not None:
        limits["memory"] = f"{pool.max_memory_gib}Gi"
    return NodePoolProps(
        name=pool.name,
        node_class=pool.name,
        requirements=requirements,
        labels=pool_labels(pool),
        taints=[NodeTaint(key=t.key, value=t.value, effect=t.effect) for t in pool_node_taints(pool)],
        limits=limits,
        consolidation_policy=pool.effective_consolidation.value,
        consolidate_after=pool.consolidate_after,
        expire_after=pool.expire_after,
        budgets=[
            Budget(nodes=b.nodes, schedule=b.schedule, duration=b.duration, reasons=b.reasons)
            for b in pool.effective_budgets
        ],
        weight=pool.weight,
        termination_grace_period=pool.termination_grace_period,
    )


#: Bottlerocket's OS volume (``/dev/xvda``), GiB: Karpenter's own default for the family (v1.14.1,
#: ``pkg/providers/amifamily/bottlerocket.go DefaultBlockDeviceMappings``), kept when the data volume is sized.
BOTTLEROCKET_OS_VOLUME_GIB = 4
#: The volume that holds images, containers and emptyDirs, per family (Karpenter's ``EphemeralBlockDevice``).
DATA_DEVICE = {AmiFamily.AL2023: "/dev/xvda", AmiFamily.BOTTLEROCKET: "/dev/xvdb"}


def _ami(pool: KarpenterPoolConfig) -> dict[str, Any]:
    """The EC2NodeClass's AMI fields of ``pool``: its selector terms (the catalog's AL2023 alias by default), the
    family for its own AMIs, and the volumes of the family."""
    family = pool.ami_family
    return {
        "ami_selector_terms": pool.ami.selector_terms() if pool.ami else [{"alias": KARPENTER_AMI_ALIASES["al2023"]}],
        "ami_family": family.value if pool.ami and pool.ami.custom else None,
        "root_device": DATA_DEVICE[family],
        "os_volume_gib": BOTTLEROCKET_OS_VOLUME_GIB if family is AmiFamily.BOTTLEROCKET else None,
    }


class KarpenterPoolsChart(cdk8s.Chart):
    """EC2NodeClass + NodePool per pool: instance types expanded from the catalog (so scheduling checks know
    exactly what can launch), accelerator taint and label, limits, disruption budgets, EFA interfaces and
    placement group for EFA pools, the pool's AMI (the AL2023 alias pinned in the catalog by default)."""

    def __init__(self, scope: Construct, construct_id: str, props: KarpenterPoolsProps) -> None:
        super().__init__(scope, construct_id, disable_resource_name_hashes=True)
        for pool in props.pools:
            where = props.placements[pool.name]
            interfaces = karpenter_interfaces(pool.instances[0]) if pool.efa else ()
            Ec2NodeClass(
                self,
                f"{pool.name}-class",
                Ec2NodeClassProps(
                    name=pool.name,
                    role=props.node_role_name,
                    **_ami(pool),
                    subnet_ids=where.subnet_ids,
                    subnet_tags=pool.subnet_tags,
                    security_group_ids=where.security_group_ids,
                    security_group_tags=pool.security_group_tags,
                    root_volume_gib=pool.effective_root_volume_gib,
                    root_volume_iops=pool.root_volume_iops,
                    root_volume_throughput=pool.root_volume_throughput_mibps,
                    instance_store_policy=pool.instance_store_policy.value if pool.instance_store_policy else None,
                    user_data=pool.user_data,
                    network_interfaces=interfaces,
                    placement_group=where.placement_group,
                    capacity_reservation_ids=pool.capacity_reservation_ids,
                    tags={**props.tags, POOL_LABEL: pool.name},
                ),
            )
            NodePool(self, f"{pool.name}-pool", node_pool_props(pool, where.zone))
