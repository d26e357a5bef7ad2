"""Preflight: what the real account must offer before a deploy, read with the caller's credentials (read-only
calls only) — so a missing quota, an instance type the zone does not sell or an expired reservation is a line with
its fix now, not a failed ``cdk deploy`` 30 minutes in.

Checks: EC2 vCPU quotas per instance category against what every node group and Karpenter pool could launch;
every instance type offered in its pool's zone(s) (an EFA pool: in its one zone); EFA support and interface count
against the catalog; named capacity reservations exist, are active, and match the type and zone; an existing model
bucket is reachable; the Kubernetes version is offered by EKS in the region. Each AWS error is a failed check with
its message, never a traceback."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from inferstack.catalog.instances import INSTANCE_TYPES, InstanceType
from inferstack.catalog.prices import DEFAULT_PRICE_REGION, price
from inferstack.config.compute import AcceleratedNodeGroupConfig, KarpenterPoolConfig, NodeCapacity
from inferstack.config.model import InferstackConfig
from inferstack.plan.placement import pool_instances

#: EC2 vCPU quotas (Service Quotas, service ``ec2``): quota code → its name. On-demand quotas are per category;
#: P5-family Spot has its own quota beside P2–P4's. From the Service Quotas EC2 list; the Inf/Trn spot codes are
#: unconfirmed (?), and p6 is taken to count as P5 (?).
QUOTA_NAMES: dict[str, str] = {
    "L-1216C47A": "Running On-Demand Standard instances",
    "L-DB2E81BA": "Running On-Demand G and VT instances",
    "L-417A185B": "Running On-Demand P instances",
    "L-1945791B": "Running On-Demand Inf instances",
    "L-2C3B7624": "Running On-Demand Trn instances",
    "L-34B43A08": "All Standard Spot Instance Requests",
    "L-3819A6DF": "All G and VT Spot Instance Requests",
    "L-7212CCBC": "All P4, P3 and P2 Spot Instance Requests",
    "L-C4BD4855": "All P5 Spot Instance Requests",
    "L-B5D1601B": "All Inf Spot Instance Requests",
    "L-6B0D517C": "All Trn Spot Instance Requests",
}
#: category → (on-demand, spot) quota codes.
QUOTA_CODES: dict[str, tuple[str, str]] = {
    "Standard": ("L-1216C47A", "L-34B43A08"),
    "G and VT": ("L-DB2E81BA", "L-3819A6DF"),
    "P": ("L-417A185B", "L-7212CCBC"),
    "P5": ("L-417A185B", "L-C4BD4855"),
    "Inf": ("L-1945791B", "L-B5D1601B"),
    "Trn": ("L-2C3B7624", "L-6B0D517C"),
}
ClientFactory = Callable[[str], Any]
"""``service name → boto3 client`` (in the config's region)."""


@dataclass(frozen=True)
class CheckResult:
    """One preflight check of one subject."""

    check: str
    subject: str
    passed: bool
    detail: str
    fix: str = ""


def quota_category(instance: InstanceType) -> str:
    """The EC2 vCPU quota an instance type counts against (by family letter)."""
    family = instance.family
    if family.startswith("trn"):
        return "Trn"
    if family.startswith("inf"):
        return "Inf"
    if family.startswith(("p5", "p6")):
        return "P5"
    if family.startswith("p"):
        return "P"
    if family.startswith(("g", "vt")):
        return "G and VT"
    return "Standard"


def _zone(config: InferstackConfig, zone: str | int | None) -> str | None:
    if isinstance(zone, str):
        return zone
    zones = config.network.availability_zones
    if isinstance(zone, int) and zones and zone < len(zones):
        return zones[zone]
    return None


def quota_code(instance: InstanceType, purchase: str) -> str:
    """The quota an instance counts against when bought ``on_demand`` or as ``spot``."""
    on_demand, spot = QUOTA_CODES[quota_category(instance)]
    return spot if purchase == "spot" else on_demand


def vcpu_demand(config: InferstackConfig) -> dict[str, int]:
    """vCPUs each quota (by code) must allow: what the system nodes, every node group at ``max_size`` and every
    Karpenter pool at its limits could run at once (Capacity Blocks use no vCPU quota; an ODCR counts as
    on-demand)."""
    demand: dict[str, int] = defaultdict(int)
    system = config.cluster.system_nodes
    largest = max((INSTANCE_TYPES[t] for t in system.instance_types), key=lambda t: t.vcpu)
    system_purchase = "spot" if system.capacity_type.value == "spot" else "on_demand"
    demand[quota_code(largest, system_purchase)] += system.max_size * largest.vcpu
    for pool in config.compute.pools:
        if isinstance(pool, AcceleratedNodeGroupConfig):
            if pool.capacity_type is NodeCapacity.CAPACITY_BLOCK:
                continue
            purchase = "spot" if pool.capacity_type is NodeCapacity.SPOT else "on_demand"
            demand[quota_code(pool.instance, purchase)] += pool.max_size * pool.instance.vcpu
            continue
        assert isinstance(pool, KarpenterPoolConfig)
        purchases = {"spot" if c is NodeCapacity.SPOT else "on_demand" for c in pool.capacity_types}
        for purchase in purchases:
            by_code: dict[str, int] = defaultdict(int)
            for instance in pool_instances(pool):
                if pool.accelerator_limit and instance.accelerator_count:
                    vcpus = math.ceil(pool.accelerator_limit / instance.accelerator_count) * instance.vcpu
                else:
                    vcpus = pool.cpu_limit or 0
                if pool.cpu_limit:
                    vcpus = min(vcpus, pool.cpu_limit) if vcpus else pool.cpu_limit
                by_memory = pool.memory_nodes(instance)
                if by_memory is not None:
                    vcpus = min(vcpus, by_memory * instance.vcpu) if vcpus else by_memory * instance.vcpu
                code = quota_code(instance, purchase)
                by_code[code] = max(by_code[code], vcpus)
            for code, vcpus in by_code.items():
                demand[code] += vcpus
    return dict(demand)


def _error(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        error = response.get("Error", {})
        return f"{error.get('Code', type(exc).__name__)}: {error.get('Message', '')}".strip()
    return f"{type(exc).__name__}: {exc}"


class Preflight:
    """The checks of one config against one account and region (clients from ``clients``)."""

    def __init__(self, config: InferstackConfig, clients: ClientFactory, *, prices: bool = False) -> None:
        """:param prices: also compare the vendored on-demand prices with the Pricing API's. Default False."""
        self.config, self.clients, self.with_prices = config, clients, prices

    def run(self) -> list[CheckResult]:
        results: list[CheckResult] = []
        checks = [self.quotas, self.offerings, self.efa, self.reservations, self.bucket, self.eks_version]
        if self.with_prices:
            checks.append(self.prices)
        for check in checks:
            try:
                results.extend(check())
            except Exception as exc:
                results.append(CheckResult(check.__name__, "-", False, _error(exc), "check credentials and region"))
        return results

    def quotas(self) -> Iterator[CheckResult]:
        client = self.clients("service-quotas")
        for code, needed in sorted(vcpu_demand(self.config).items()):
            name = QUOTA_NAMES[code]
            try:
                value = client.get_service_quota(ServiceCode="ec2", QuotaCode=code)["Quota"]["Value"]
            except Exception as exc:
                yield CheckResult("quota", f"{name} ({code})", False, _error(exc), f"look up quota {code}")
                continue
            ok = value >= needed
            yield CheckResult(
                "quota",
                f"{name} ({code})",
                ok,
                f"{value:g} vCPU allowed, the pools could launch {needed}",
                "" if ok else f"request {code} ≥ {needed} in Service Quotas, or lower the pools' max_size / limits",
            )

    def offerings(self) -> Iterator[CheckResult]:
        client = self.clients("ec2")
        for pool in self.config.compute.pools:
            zone = _zone(self.config, pool.availability_zone)
            zones = [zone] if zone else list(self.config.network.availability_zones or ())
            for instance in pool_instances(pool):
                pages = client.get_paginator("describe_instance_type_offerings").paginate(
                    LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": [instance.name]}]
                )
                offered = sorted(o["Location"] for page in pages for o in page.get("InstanceTypeOfferings", []))
                missing = [z for z in zones if z not in offered] if zones else ([] if offered else ["the region"])
                yield CheckResult(
                    "offering",
                    f"{pool.name}: {instance.name}",
                    not missing,
                    f"offered in {', '.join(offered) or 'no zone of the region'}",
                    ""
                    if not missing
                    else f"{instance.name} is not sold in {', '.join(missing)} — pick a zone among "
                    f"{', '.join(offered) or 'none'} (availability_zone) or another type",
                )

    def efa(self) -> Iterator[CheckResult]:
        pools = [p for p in self.config.compute.pools if p.efa]
        names = sorted({t.name for p in pools for t in pool_instances(p)})
        if not names:
            return
        types = self.clients("ec2").describe_instance_types(InstanceTypes=names)["InstanceTypes"]
        facts = {t["InstanceType"]: t.get("NetworkInfo", {}) for t in types}
        for name in names:
            network = facts.get(name, {})
            maximum = network.get("EfaInfo", {}).get("MaximumEfaInterfaces", 0) if network.get("EfaSupported") else 0
            expected = INSTANCE_TYPES[name].max_efa_interfaces
            ok = maximum == expected and maximum > 0
            yield CheckResult(
                "efa",
                name,
                ok,
                f"EC2 says {maximum} EFA interfaces, the catalog {expected}",
                "" if ok else "update the catalog (inferstack/catalog/instances.py) or use another EFA type",
            )

    def reservations(self) -> Iterator[CheckResult]:
        wanted: dict[str, tuple[str, list[str], str | None]] = {}
        for pool in self.config.compute.pools:
            zone = _zone(self.config, pool.availability_zone)
            if isinstance(pool, AcceleratedNodeGroupConfig) and pool.capacity_reservation_id:
                wanted[pool.capacity_reservation_id] = (pool.name, [pool.instance.name], zone)
            elif isinstance(pool, KarpenterPoolConfig):
                for rid in pool.capacity_reservation_ids:
                    wanted[rid] = (pool.name, [t.name for t in pool_instances(pool)], zone)
        if not wanted:
            return
        client = self.clients("ec2")
        found: dict[str, Any] = {}
        for rid in sorted(wanted):  # one per call: an unknown id fails the whole call
            try:
                (found[rid],) = client.describe_capacity_reservations(CapacityReservationIds=[rid])[
                    "CapacityReservations"
                ]
            except Exception as exc:
                if not _error(exc).startswith("InvalidCapacityReservationId"):
                    raise
        for rid, (pool, types, zone) in sorted(wanted.items()):
            r = found.get(rid)
            problems = []
            if r is None:
                problems.append("not found in this account and region")
            else:
                if r.get("State") not in ("active", "scheduled"):
                    problems.append(f"state {r.get('State')}")
                if r.get("InstanceType") not in types:
                    problems.append(f"for {r.get('InstanceType')}, the pool runs {', '.join(types)}")
                if zone and r.get("AvailabilityZone") != zone:
                    problems.append(f"in {r.get('AvailabilityZone')}, the pool is in {zone}")
            yield CheckResult(
                "reservation",
                f"{pool}: {rid}",
                not problems,
                "; ".join(problems) or f"{r['State']}, {r['InstanceType']} in {r['AvailabilityZone']}",  # type: ignore[index]
                "" if not problems else "fix the reservation id, its zone (availability_zone) or the instance type",
            )

    def bucket(self) -> Iterator[CheckResult]:
        bucket = self.config.storage.model_bucket
        name = bucket.existing_bucket_name if bucket else None
        if not name:
            return
        try:
            self.clients("s3").head_bucket(Bucket=name)
            yield CheckResult("bucket", name, True, "reachable")
        except Exception as exc:
            yield CheckResult("bucket", name, False, _error(exc), "check the name and that your role may read it")

    def eks_version(self) -> Iterator[CheckResult]:
        version = self.config.cluster.kubernetes_version
        response = self.clients("eks").describe_cluster_versions(clusterVersions=[version])
        offered = [v for v in response.get("clusterVersions", []) if v.get("clusterVersion") == version]
        status = (offered[0].get("versionStatus") or offered[0].get("status", "?")) if offered else None
        ok = bool(offered) and status != "UNSUPPORTED"
        extended = " — extended support is billed at a higher rate" if status == "EXTENDED_SUPPORT" else ""
        yield CheckResult(
            "eks-version",
            version,
            ok,
            f"EKS offers {version} ({status}){extended}" if offered else f"EKS does not offer {version} in this region",
            "" if ok else "pick a version EKS supports (aws eks describe-cluster-versions)",
        )

    def prices(self) -> Iterator[CheckResult]:
        """The vendored on-demand price of every pool's instance types against the Pricing API's (``plan``'s costs
        are only as current as the table)."""
        region = self.config.env.region or DEFAULT_PRICE_REGION
        client = self.clients("pricing")
        names = sorted({t.name for p in self.config.compute.pools for t in pool_instances(p)})
        for name in names:
            filters = [
                {"Type": "TERM_MATCH", "Field": field, "Value": value}
                for field, value in (
                    ("instanceType", name),
                    ("regionCode", region),
                    ("operatingSystem", "Linux"),
                    ("tenancy", "Shared"),
                    ("preInstalledSw", "NA"),
                    ("capacitystatus", "Used"),
                    ("marketoption", "OnDemand"),
                    ("productFamily", "Compute Instance"),
                )
            ]
            products = client.get_products(ServiceCode="AmazonEC2", Filters=filters).get("PriceList", [])
            live = _on_demand_usd(products)
            vendored = price(name, region)
            if live is None:
                yield CheckResult(
                    "price", name, False, "the Pricing API returned no on-demand price", "check the type and region"
                )
                continue
            if vendored is None:
                yield CheckResult("price", name, True, f"live ${live:g}/h; not in the vendored table")
                continue
            drift = abs(vendored.on_demand - live) / live
            ok = drift <= PRICE_DRIFT
            yield CheckResult(
                "price",
                name,
                ok,
                f"live ${live:g}/h, vendored ${vendored.on_demand:g}/h ({vendored.date})",
                "" if ok else "update inferstack/catalog/price_data/ec2-on-demand.json: plan's costs are stale",
            )


#: How far the vendored price may be from the Pricing API's before the check fails (5 %).
PRICE_DRIFT = 0.05


def _on_demand_usd(products: list[Any]) -> float | None:
    """The hourly on-demand USD price in a Pricing API ``PriceList`` (JSON strings of products)."""
    for product in products:
        data = json.loads(product) if isinstance(product, str) else product
        for term in data.get("terms", {}).get("OnDemand", {}).values():
            for dimension in term.get("priceDimensions", {}).values():
                usd = dimension.get("pricePerUnit", {}).get("USD")
                if usd is not None and float(usd) > 0:
                    return float(usd)
    return None


def boto3_clients(region: str | None) -> ClientFactory:
    """Clients of the caller's default credentials in ``region`` (default: the session's); the Pricing API's
    endpoint is us-east-1's."""
    try:
        import boto3
    except ImportError:  # an install without the preflight extra
        raise SystemExit("inferstack preflight needs boto3: pip install 'inferstack[preflight]'") from None

    session = boto3.Session(region_name=region) if region else boto3.Session()
    return lambda service: (
        session.client(service, region_name="us-east-1") if service == "pricing" else session.client(service)
    )


def table(results: list[CheckResult]) -> str:
    """The results as a table: check, subject, PASS/FAIL, detail — and the fix of each failure."""
    lines = [f"{'check':<12} {'subject':<40} {'':<4} detail"]
    for r in results:
        lines.append(f"{r.check:<12} {r.subject[:40]:<40} {'PASS' if r.passed else 'FAIL':<4} {r.detail}")
        if not r.passed and r.fix:
            lines.append(f"{'':<12} {'':<40} {'':<4} fix: {r.fix}")
    return "\n".join(lines)
