"""EC2 Linux on-demand hourly prices (USD) per region, vendored with each price's source and date
(``price_data/ec2-on-demand.json``): us-east-1 from Karpenter's generated table (the AWS Price List API, generated
2026-07-20, after the June 2025 P4/P5 price cut); us-west-2, for the types it lists, from the SkyPilot catalog (a
snapshot older than that cut: its P prices were left out). A type or region without a price is ``None`` — never
guessed. ``preflight`` is the place to read current prices with the Pricing API."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

#: Hours in a billing month (AWS's 730-hour month).
HOURS_PER_MONTH = 730
#: The region prices are read for when the config names none (env-agnostic).
DEFAULT_PRICE_REGION = "us-east-1"


@dataclass(frozen=True)
class Price:
    on_demand: float
    """USD per hour."""
    source: str
    date: str


@cache
def _table() -> dict[str, dict[str, Price]]:
    raw = json.loads(resources.files("inferstack.catalog").joinpath("price_data/ec2-on-demand.json").read_text())
    return {
        region: {name: Price(e["on_demand"], e["source"], e["date"]) for name, e in entries.items()}
        for region, entries in raw["regions"].items()
    }


def price(instance_type: str, region: str) -> Price | None:
    """The on-demand price of ``instance_type`` in ``region``, or None when the vendored table has none."""
    return _table().get(region, {}).get(instance_type)


def regions() -> tuple[str, ...]:
    return tuple(sorted(_table()))
