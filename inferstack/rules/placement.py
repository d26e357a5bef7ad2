"""PLACEMENT-CAPACITY-BLOCK: no cluster placement group with a Capacity Block.

Capacity Blocks are delivered already co-located in EC2 UltraClusters; AWS says a placement group is not needed,
and a launch template that names one for a block's instances risks insufficient-capacity launches.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.compute import NodeCapacity
from inferstack.config.model import InferstackConfig
from inferstack.rules.base import Finding, Rule, node_groups

RULE_ID = "PLACEMENT-CAPACITY-BLOCK"


def check(config: InferstackConfig) -> Iterator[Finding]:
    for path, group in node_groups(config):
        if group.capacity_type is NodeCapacity.CAPACITY_BLOCK and group.uses_placement_group:
            yield Finding(
                rule=RULE_ID,
                path=f"{path}.placement_group",
                message="a Capacity Block is already placed in one UltraCluster; a cluster placement group on top "
                "can make its instances fail to launch",
                fix="remove placement_group (the default is off for capacity_block) or set it to false",
            )


RULE = Rule(id=RULE_ID, title="No cluster placement group with a Capacity Block", check=check)
