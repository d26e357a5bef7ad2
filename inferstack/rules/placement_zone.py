"""PLACEMENT-ZONE: a node group or pool with a cluster placement group is pinned to one Availability Zone.

A cluster placement group packs instances into one zone; launches into it from subnets of other zones fail
(EC2 places a cluster placement group's instances in a single Availability Zone). EFA pools and node groups are
judged by EFA-AZ, which says the same for them; this rule covers the others that turn ``placement_group`` on.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.model import InferstackConfig
from inferstack.rules.base import Finding, Rule, all_pools

RULE_ID = "PLACEMENT-ZONE"


def check(config: InferstackConfig) -> Iterator[Finding]:
    for path, pool in all_pools(config):
        if pool.efa or not pool.uses_placement_group or pool.availability_zone is not None:
            continue
        yield Finding(
            rule=RULE_ID,
            path=f"{path}.availability_zone",
            message=f"{pool.name!r} has a cluster placement group, which lives in one zone, but may place nodes in "
            f"all {config.network.az_count} zones: launches outside the group's zone fail",
            fix="pin it to one zone (availability_zone: 0 or a name from network.availability_zones), or set "
            "placement_group: false",
        )


RULE = Rule(id=RULE_ID, title="A cluster placement group's pool is pinned to one zone", check=check)
