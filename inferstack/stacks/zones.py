"""Which private subnet a pool or file system pinned to a zone goes in: config zones are an index into the VPC's
zones or a zone name."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import aws_ec2 as ec2


def zone_subnet(vpc: ec2.IVpc, zone: str | int, zones: Sequence[str] | None, owner: str) -> ec2.ISubnet:
    """The private subnet of ``vpc`` in ``zone``: an index into its private subnets, or a zone name looked up in
    ``zones`` (the zones the VPC was built over, in order; default: ``vpc.availability_zones``).

    :raises ValueError: naming ``owner`` and the valid zones when there is no such zone.
    """
    private = vpc.private_subnets
    if isinstance(zone, int):
        if not 0 <= zone < len(private):
            raise ValueError(
                f"{owner}: zone index {zone} — the VPC has {len(private)} private subnets (0–{len(private) - 1})"
            )
        return private[zone]
    names = list(zones) if zones else list(vpc.availability_zones)
    if zone not in names:
        raise ValueError(f"{owner}: zone {zone!r} is not one of the VPC's zones — valid: {', '.join(names)}")
    return private[names.index(zone)]
