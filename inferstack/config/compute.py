"""Accelerated compute: managed node groups (static capacity, EFA) and Karpenter node pools (elastic capacity)."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from inferstack.catalog.instances import INSTANCE_TYPES, AcceleratorKind, InstanceType
from inferstack.catalog.kubernetes import ACCELERATOR_TAINT_KEY
from inferstack.config.base import StrictModel
from inferstack.config.karpenter_ami import AmiFamily, KarpenterAmiConfig, check_selector_tags, check_user_data
from inferstack.config.labels import LABEL_KEY, check_label
from inferstack.config.types import AvailabilityZone, InstanceTypeName, KubernetesName, check_plain

_DURATION = re.compile(r"^(([0-9]+(s|m|h))+|Never)$")
#: Karpenter's terminationGracePeriod (the NodePool CRD's pattern: no ``Never``).
_GRACE = re.compile(r"^([0-9]+(s|m|h))+$")
#: gp3's IOPS without provisioning.
GP3_BASELINE_IOPS = 3000


_FAMILY = re.compile(r"^([a-z]+?)(\d+)")


def instance_category(family: str) -> str:
    """Karpenter's ``instance-category`` of a family: its letters before the generation (``g6e`` → ``g``,
    ``inf2`` → ``inf``, ``trn1`` → ``trn``)."""
    match = _FAMILY.match(family)
    return match.group(1) if match else family


def instance_generation(family: str) -> int:
    """Karpenter's ``instance-generation`` of a family: the number after its category (``g6e`` → 6)."""
    match = _FAMILY.match(family)
    return int(match.group(2)) if match else 0


def _in_catalog(values: tuple[str, ...], known: set[str], what: str) -> tuple[str, ...]:
    """``values`` when each is a ``what`` (family, category, size) of the catalog; else the unknown ones named
    with the catalog's."""
    unknown = [value for value in values if value not in known]
    if unknown:
        raise PydanticCustomError(
            what,
            "unknown instance {what} {bad} — the catalog has {known}",
            {"what": what, "bad": ", ".join(unknown), "known": ", ".join(sorted(known))},
        )
    return values


class InstanceStorePolicy(StrEnum):
    """What Karpenter does with the instance-store (NVMe) disks (EC2NodeClass ``instanceStorePolicy``)."""

    RAID0 = "RAID0"
    """One RAID-0 array for the kubelet's and containerd's data."""


_RESERVATION = re.compile(r"^cr-[0-9a-z]+$")
_CRON = re.compile(r"^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$")
_RESERVED_LABEL_PREFIXES = ("inferstack.io/", "karpenter.sh/", "karpenter.k8s.aws/", "kubernetes.io/", "k8s.io/")


def _check_labels(labels: dict[str, str]) -> dict[str, str]:
    for key, value in labels.items():
        check_label(key, value)
        if key.startswith(_RESERVED_LABEL_PREFIXES):
            raise PydanticCustomError(
                "label_reserved",
                "{key} is managed by inferstack, Karpenter or Kubernetes — use your own prefix",
                {"key": key},
            )
    return labels


NodeLabels = Annotated[dict[str, str], AfterValidator(_check_labels)]


class NodeCapacity(StrEnum):
    """How a node group or pool buys capacity."""

    ON_DEMAND = "on_demand"
    SPOT = "spot"
    CAPACITY_BLOCK = "capacity_block"
    """EC2 Capacity Blocks for ML (needs ``capacity_reservation_id``)."""
    RESERVED = "reserved"
    """A targeted On-Demand Capacity Reservation (needs a reservation id)."""


class AmiVariant(StrEnum):
    """EKS-optimized AMI variants for accelerated nodes. Default: derived from the instance type."""

    AL2023_NVIDIA = "al2023_nvidia"
    AL2023_NEURON = "al2023_neuron"
    AL2023_STANDARD = "al2023_standard"
    BOTTLEROCKET_NVIDIA = "bottlerocket_nvidia"
    BOTTLEROCKET = "bottlerocket"
    """Bottlerocket's standard variant (used for Neuron types as well)."""


#: Which accelerator each AMI variant drives (None: CPU-only).
AMI_ACCELERATOR: dict[AmiVariant, AcceleratorKind] = {
    AmiVariant.AL2023_NVIDIA: AcceleratorKind.NVIDIA,
    AmiVariant.AL2023_NEURON: AcceleratorKind.NEURON,
    AmiVariant.AL2023_STANDARD: AcceleratorKind.NONE,
    AmiVariant.BOTTLEROCKET_NVIDIA: AcceleratorKind.NVIDIA,
    AmiVariant.BOTTLEROCKET: AcceleratorKind.NEURON,
}
DEFAULT_AMI: dict[AcceleratorKind, AmiVariant] = {
    AcceleratorKind.NVIDIA: AmiVariant.AL2023_NVIDIA,
    AcceleratorKind.NEURON: AmiVariant.AL2023_NEURON,
    AcceleratorKind.NONE: AmiVariant.AL2023_STANDARD,
}


_TAINT_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")


class Taint(StrictModel):
    """A Kubernetes taint added to a pool's nodes (besides the accelerator taint inferstack adds itself)."""

    key: str
    """Taint key, e.g. ``dedicated``."""
    value: str | None = None
    """Taint value. Default none."""
    effect: str = "NoSchedule"
    """``NoSchedule`` (default), ``PreferNoSchedule`` or ``NoExecute``."""

    @field_validator("key")
    @classmethod
    def _key(cls, key: str) -> str:
        check_plain(key, "a taint key")
        if not LABEL_KEY.match(key):
            raise PydanticCustomError("taint_key", "not a valid taint key — e.g. 'dedicated' or 'example.com/team'")
        return key

    @field_validator("value")
    @classmethod
    def _value(cls, value: str | None) -> str | None:
        # Kubernetes validates a taint value like a label value: ≤ 63 characters, alphanumeric at both ends.
        if value is None:
            return value
        if not _TAINT_VALUE.match(check_plain(value, "a taint value")):
            raise PydanticCustomError(
                "taint_value",
                "not a valid taint value — at most 63 letters, digits, '-', '_', '.', alphanumeric at both ends",
            )
        return value

    @field_validator("effect")
    @classmethod
    def _effect(cls, effect: str) -> str:
        if effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise PydanticCustomError("effect", "must be one of NoSchedule, PreferNoSchedule, NoExecute")
        return effect


def _check_duration(value: str) -> str:
    check_plain(value, "a duration")
    if not _DURATION.match(value):
        raise PydanticCustomError("duration", "not a duration — use e.g. '30s', '30m', '720h' or 'Never'")
    return value


def _check_reservation(value: str) -> str:
    check_plain(value, "a capacity reservation id")
    if not _RESERVATION.match(value):
        raise PydanticCustomError("reservation", "not a capacity reservation id — e.g. 'cr-0123456789abcdef0'")
    return value


#: An EC2 capacity reservation id (``cr-`` and lowercase hex), each checked where it stands in a list.
ReservationId = Annotated[str, AfterValidator(_check_reservation)]


class AcceleratedNodeGroupConfig(StrictModel):
    """A managed node group of one accelerated instance type: static capacity, the way to run EFA clusters of
    p5/p5en/trn2 nodes in one placement group, Capacity Blocks and ODCRs."""

    name: KubernetesName
    """Node group name; also the ``inferstack.io/pool`` label of its nodes."""
    instance_type: InstanceTypeName
    """One accelerated instance type (catalog key), e.g. ``p5.48xlarge``."""
    efa: bool = False
    """Attach every EFA interface the type supports (catalog) and install the EFA device plugin. Default off."""
    availability_zone: AvailabilityZone | int | None = None
    """The one AZ for the group: a zone name from ``network.availability_zones`` or an index into the VPC's zones.
    Default: all zones. Required with ``efa`` (EFA traffic cannot cross zones) and with capacity reservations."""
    placement_group: bool | None = None
    """Cluster placement group. Default: on with EFA, except with Capacity Blocks (already co-located)."""
    capacity_type: NodeCapacity = NodeCapacity.ON_DEMAND
    """Default on-demand."""
    capacity_reservation_id: str | None = None
    """Capacity Block or ODCR id (``cr-…``), required for ``capacity_block`` and ``reserved``."""
    min_size: int = Field(default=0, ge=0)
    """Default 0."""
    desired_size: int = Field(default=0, ge=0)
    """Default 0 (Capacity Blocks need 0 until the block starts)."""
    max_size: int = Field(default=2, ge=1)
    """Default 2."""
    disk_size_gib: int = Field(default=500, ge=50, le=16384)
    """Encrypted gp3 root volume, GiB. Default 500 (inference images are 10–30 GB; caches grow)."""
    ami: AmiVariant | None = None
    """AMI variant. Default: AL2023 NVIDIA for NVIDIA types, AL2023 Neuron for Neuron types."""
    labels: NodeLabels = Field(default_factory=dict)
    """Extra node labels."""
    taints: tuple[Taint, ...] = ()
    """Extra taints (the accelerator taint is always added)."""

    @field_validator("capacity_reservation_id")
    @classmethod
    def _reservation(cls, value: str | None) -> str | None:
        return None if value is None else _check_reservation(value)

    @field_validator("instance_type")
    @classmethod
    def _accelerated(cls, value: str) -> str:
        if INSTANCE_TYPES[value].accelerator is AcceleratorKind.NONE:
            raise PydanticCustomError(
                "not_accelerated",
                "has no GPU or Neuron device — accelerated node groups take e.g. g6e.12xlarge, p5.48xlarge, "
                "inf2.24xlarge; CPU capacity comes from cluster.system_nodes or a Karpenter CPU pool",
            )
        return value

    @model_validator(mode="after")
    def _consistent(self) -> AcceleratedNodeGroupConfig:
        if not self.min_size <= self.desired_size <= self.max_size:
            raise PydanticCustomError(
                "sizes",
                "need min_size ≤ desired_size ≤ max_size, got {a} ≤ {b} ≤ {c}",
                {"a": self.min_size, "b": self.desired_size, "c": self.max_size, "field": "desired_size"},
            )
        needs_id = self.capacity_type in (NodeCapacity.CAPACITY_BLOCK, NodeCapacity.RESERVED)
        if needs_id and not self.capacity_reservation_id:
            raise PydanticCustomError(
                "reservation_required",
                "required with capacity_type {ct} — the reservation id, e.g. cr-0123…",
                {"ct": self.capacity_type.value, "field": "capacity_reservation_id"},
            )
        if self.capacity_reservation_id and not needs_id:
            raise PydanticCustomError(
                "reservation_unused",
                "set capacity_type to capacity_block or reserved to use a reservation",
                {"field": "capacity_reservation_id"},
            )
        return self

    @property
    def instance(self) -> InstanceType:
        return INSTANCE_TYPES[self.instance_type]

    @property
    def accelerator(self) -> AcceleratorKind:
        return self.instance.accelerator

    @property
    def ami_variant(self) -> AmiVariant:
        return self.ami or DEFAULT_AMI[self.accelerator]

    @property
    def boots_bottlerocket(self) -> bool:
        """The nodes run Bottlerocket (its NVIDIA variant brings its own device plugin)."""
        return self.ami_variant in (AmiVariant.BOTTLEROCKET, AmiVariant.BOTTLEROCKET_NVIDIA)

    @property
    def uses_placement_group(self) -> bool:
        if self.placement_group is not None:
            return self.placement_group
        return self.efa and self.capacity_type is not NodeCapacity.CAPACITY_BLOCK


class DisruptionBudget(StrictModel):
    """A Karpenter disruption budget: at most ``nodes`` disrupted at once, optionally only in a cron window."""

    nodes: str = "10%"
    """A count (``"0"``, ``"1"``) or a percentage (``"10%"``)."""
    schedule: str | None = None
    """Cron (UTC) at which the window starts, e.g. ``"0 8 * * mon-fri"``. Default: always."""
    duration: str | None = None
    """Window length, e.g. ``"10h"``. Required with ``schedule``."""
    reasons: tuple[str, ...] = ()
    """``Underutilized``, ``Empty``, ``Drifted``. Default: all reasons."""

    @field_validator("nodes")
    @classmethod
    def _nodes(cls, value: str) -> str:
        if not re.match(r"^((100|[0-9]{1,2})%|[0-9]+)$", value):
            raise PydanticCustomError("nodes", "a node count ('0', '2') or a percentage ('10%')")
        return value

    @field_validator("schedule")
    @classmethod
    def _schedule(cls, value: str | None) -> str | None:
        if value is not None and not _CRON.match(value):
            raise PydanticCustomError("cron", "not a cron schedule — e.g. '0 8 * * mon-fri' (UTC)")
        return value

    @field_validator("duration")
    @classmethod
    def _duration(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$", value):
            raise PydanticCustomError("duration", "not a window length — e.g. '10h' or '8h30m'")
        return value

    @field_validator("reasons")
    @classmethod
    def _reasons(cls, reasons: tuple[str, ...]) -> tuple[str, ...]:
        bad = [r for r in reasons if r not in ("Underutilized", "Empty", "Drifted")]
        if bad:
            raise PydanticCustomError(
                "reasons", "unknown reason {bad} — valid: Underutilized, Empty, Drifted", {"bad": ", ".join(bad)}
            )
        return reasons

    @model_validator(mode="after")
    def _window(self) -> DisruptionBudget:
        if (self.schedule is None) != (self.duration is None):
            raise PydanticCustomError(
                "window", "schedule and duration go together — set both or neither", {"field": "duration"}
            )
        return self


#: Default budgets for accelerator pools: at most 10% of nodes at a time, and none at all for consolidation or
#: drift during business hours (Mon–Fri 08:00–18:00 UTC), so serving GPUs are not drained mid-traffic.
BUSINESS_HOURS_BUDGETS: tuple[DisruptionBudget, ...] = (
    DisruptionBudget(nodes="10%"),
    DisruptionBudget(
        nodes="0", schedule="0 8 * * mon-fri", duration="10h", reasons=("Underutilized", "Empty", "Drifted")
    ),
)


class ConsolidationPolicy(StrEnum):
    WHEN_EMPTY = "WhenEmpty"
    WHEN_EMPTY_OR_UNDERUTILIZED = "WhenEmptyOrUnderutilized"


class KarpenterPoolConfig(StrictModel):
    """A Karpenter NodePool + EC2NodeClass. Pick instances by family (``g6e``) or by exact type."""

    name: KubernetesName
    """NodePool and EC2NodeClass name; also the ``inferstack.io/pool`` label."""
    instance_families: tuple[str, ...] = ()
    """Instance families from the catalog, e.g. ``[g6e]``. Either this or ``instance_types``."""
    instance_types: tuple[InstanceTypeName, ...] = ()
    """Exact instance types, e.g. ``[p4d.24xlarge]``. Either this or ``instance_families``."""
    instance_categories: tuple[str, ...] = ()
    """Instance categories, as Karpenter's ``karpenter.k8s.aws/instance-category`` names them (``g``, ``p``,
    ``inf``, ``trn``…): every catalogued family of them. Instead of ``instance_families`` or ``instance_types``.
    Default none."""
    min_instance_generation: int | None = Field(default=None, ge=1, le=20)
    """With ``instance_families`` or ``instance_categories``: only generations from this one up (``6``: g6e, g6,
    p6…; Karpenter's ``instance-generation``). Default: every generation."""
    instance_sizes: tuple[str, ...] = ()
    """With ``instance_families`` or ``instance_categories``: only these sizes, e.g. ``[12xlarge, 48xlarge]``
    (Karpenter's ``instance-size``). Default: every size. The NodePool still lists the exact types these select
    (scheduling checks know what can launch)."""
    capacity_types: tuple[NodeCapacity, ...] = (NodeCapacity.ON_DEMAND,)
    """Any of on_demand, spot, reserved. Default on-demand."""
    capacity_reservation_ids: tuple[ReservationId, ...] = ()
    """ODCR / Capacity Block ids the pool may use (``capacityReservationSelectorTerms``)."""
    efa: bool = False
    """EFA pool: every EFA interface of the type and, by default, a placement group. Needs exactly one instance
    type."""
    availability_zone: AvailabilityZone | int | None = None
    """Pin the pool to one AZ (name from ``network.availability_zones`` or index). Required with ``efa`` unless
    ``placement_group: false`` and every workload on the pool stays on one node (EFA-AZ). Default: every zone."""
    placement_group: bool | None = None
    """Cluster placement group (created by inferstack). Default: on for EFA pools."""
    max_accelerators: int | None = Field(default=None, ge=1)
    """NodePool limit on GPUs / Neuron devices. Default 64 for accelerator pools, none for CPU pools."""
    max_cpu: int | None = Field(default=None, ge=1)
    """NodePool limit on vCPUs. Default: 1000 for CPU pools, none for accelerator pools."""
    subnet_tags: dict[str, str] = Field(default_factory=dict, max_length=8)
    """Select the nodes' subnets by tag (``subnetSelectorTerms: [{tags: …}]``, e.g. ``{karpenter.sh/discovery:
    my-cluster}``; a value ``*`` matches any) instead of the VPC's private subnets by id — for a VPC whose subnets
    are added later. The subnets must be private subnets of the cluster's VPC with a route out (NAT): Karpenter
    launches into any that match (in the pool's zone when ``availability_zone`` is set). Default: by id."""
    security_group_tags: dict[str, str] = Field(default_factory=dict, max_length=8)
    """Attach, besides the cluster's security group (and the EFA group of an EFA pool), every security group with
    these tags (``securityGroupSelectorTerms``: terms are ORed, all matches attached), e.g. ``{team: ml-egress}`` for
    a group that opens your own endpoints to the nodes. The tags must select groups of the cluster's VPC only:
    Karpenter v1.14.1 filters by tag alone (``pkg/providers/securitygroup``), and a group of another VPC fails every
    launch. EC2 attaches at most 5 groups per network interface by default (a quota). Default none."""
    max_memory_gib: int | None = Field(default=None, ge=1)
    """NodePool limit on memory, GiB (``limits.memory``): Karpenter launches no node that would take the pool's
    nodes over it. Default none."""
    consolidation_policy: ConsolidationPolicy | None = None
    """Default WhenEmpty for accelerator pools (never repack serving GPUs), WhenEmptyOrUnderutilized for CPU."""
    consolidate_after: str = "30m"
    """Wait before consolidating, e.g. ``30m``. Default 30m: GPU nodes take minutes to come back."""
    expire_after: str = "720h"
    """Maximum node lifetime (``720h`` = 30 days) or ``Never``."""
    disruption_budgets: tuple[DisruptionBudget, ...] | None = None
    """Default: business-hours freeze for accelerator pools (see ``BUSINESS_HOURS_BUDGETS``); 10% for CPU."""
    root_volume_gib: int | None = Field(default=None, ge=20, le=16384)
    """Encrypted gp3 root volume, GiB. Default 500 for accelerator pools (large images), 100 for CPU pools."""
    weight: int | None = Field(default=None, ge=1, le=100)
    """NodePool weight (higher is preferred). Default none."""
    labels: NodeLabels = Field(default_factory=dict)
    """Extra node labels. Default none."""
    taints: tuple[Taint, ...] = ()
    """Extra taints (the accelerator taint is always added)."""
    termination_grace_period: str | None = None
    """How long Karpenter drains a node before it deletes the pods left (``terminationGracePeriod``, e.g. ``2h``;
    past it, PDBs and ``karpenter.sh/do-not-disrupt`` no longer hold the node). At least the serving pods'
    termination grace (KARPENTER-TERMINATION-GRACE). Default none: Karpenter waits for the pods."""
    root_volume_iops: int | None = Field(default=None, ge=3000, le=16000)
    """Provisioned IOPS of the gp3 root volume (3,000–16,000), e.g. for fast image pulls. Default: gp3's
    baseline, 3,000."""
    root_volume_throughput_mibps: int | None = Field(default=None, ge=125, le=1000)
    """Provisioned throughput of the gp3 root volume, MiB/s (125–1,000; at most 0.25 MiB/s per provisioned IOPS).
    Default: gp3's baseline, 125."""
    instance_store_policy: InstanceStorePolicy | None = None
    """``RAID0``: the instance types' NVMe instance-store disks become one RAID-0 array that holds the kubelet's and
    containerd's data — images and emptyDirs (a model cache) on local NVMe instead of the root volume. Every
    instance type of the pool needs instance store (KARPENTER-INSTANCE-STORE). Default none: the disks unused."""
    user_data: str | None = Field(default=None, min_length=1, max_length=16384)
    """EC2NodeClass ``userData`` Karpenter merges its own settings into: on AL2023 a nodeadm ``NodeConfig`` (YAML)
    or a MIME multi-part document, e.g. to turn on the SOCI snapshotter; on Bottlerocket TOML settings. At most
    16 KiB (EC2's user data limit). Default none."""
    ami: KarpenterAmiConfig | None = None
    """The AMI the pool launches (``amiSelectorTerms``): ``{alias: bottlerocket@v1.51.0}`` for another
    EKS-optimized release, or ``{terms: [...], family: AL2023}`` for your own AMIs. On Bottlerocket the root volume
    settings size the data volume (``/dev/xvdb``: images, containers, emptyDirs). Default: the catalog's pinned
    AL2023 release."""

    @field_validator("consolidate_after", "expire_after")
    @classmethod
    def _durations(cls, value: str) -> str:
        return _check_duration(value)

    @field_validator("termination_grace_period")
    @classmethod
    def _grace(cls, value: str | None) -> str | None:
        if value is not None and not _GRACE.match(value):
            raise PydanticCustomError("duration", "not a duration — use e.g. '30m' or '2h' (Never is not allowed)")
        return value

    @field_validator("user_data")
    @classmethod
    def _user_data(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise PydanticCustomError(
                "user_data", "blank — leave user_data out, or give a nodeadm NodeConfig (Bottlerocket: TOML settings)"
            )
        return value

    @model_validator(mode="after")
    def _user_data_format(self) -> KarpenterPoolConfig:
        """The user data reads in the format of the AMI's family (:func:`check_user_data`)."""
        if self.user_data is not None:
            check_user_data(self.user_data, self.ami_family, custom=bool(self.ami and self.ami.custom))
        return self

    @property
    def ami_family(self) -> AmiFamily:
        """How the pool's nodes boot: the ``ami``'s family, AL2023 by default."""
        return self.ami.effective_family if self.ami else AmiFamily.AL2023

    @property
    def boots_bottlerocket(self) -> bool:
        """The nodes run Bottlerocket (its NVIDIA variant brings its own device plugin)."""
        return self.ami_family is AmiFamily.BOTTLEROCKET

    @model_validator(mode="after")
    def _gp3_ratio(self) -> KarpenterPoolConfig:
        """gp3 provisions at most 0.25 MiB/s of throughput per provisioned IOPS (EBS gp3 volume limits)."""
        throughput = self.root_volume_throughput_mibps
        iops = self.root_volume_iops or GP3_BASELINE_IOPS
        # the selection is judged by _selection: with none, take the CPU pools' default size
        volume = self.effective_root_volume_gib if self.instances else self.root_volume_gib or 100
        if self.root_volume_iops is not None and self.root_volume_iops > volume * 500:
            raise PydanticCustomError(
                "gp3_iops",
                "root_volume_iops: {iops} needs a root volume of at least {needed} GiB (gp3 gives at most 500 IOPS "
                "per GiB); it is {volume} GiB — raise root_volume_gib to {needed} or lower the IOPS",
                {"iops": iops, "needed": -(-iops // 500), "volume": volume},
            )
        if throughput is not None and throughput > iops / 4:
            raise PydanticCustomError(
                "gp3_ratio",
                "root_volume_throughput_mibps: {throughput} needs at least {needed} IOPS (gp3 gives 0.25 MiB/s per "
                "IOPS); root_volume_iops is {iops} — raise root_volume_iops to {needed} or lower the throughput",
                {"throughput": throughput, "needed": throughput * 4, "iops": iops},
            )
        return self

    @field_validator("instance_categories")
    @classmethod
    def _categories(cls, categories: tuple[str, ...]) -> tuple[str, ...]:
        return _in_catalog(categories, {instance_category(t.family) for t in INSTANCE_TYPES.values()}, "category")

    @field_validator("instance_sizes")
    @classmethod
    def _sizes(cls, sizes: tuple[str, ...]) -> tuple[str, ...]:
        return _in_catalog(sizes, {t.name.split(".", 1)[1] for t in INSTANCE_TYPES.values()}, "size")

    @field_validator("instance_families")
    @classmethod
    def _families(cls, families: tuple[str, ...]) -> tuple[str, ...]:
        return _in_catalog(families, {t.family for t in INSTANCE_TYPES.values()}, "family")

    @model_validator(mode="after")
    def _selection(self) -> KarpenterPoolConfig:
        ways = [bool(self.instance_families), bool(self.instance_types), bool(self.instance_categories)]
        if sum(ways) != 1:
            raise PydanticCustomError(
                "selection",
                "set exactly one of instance_families (e.g. [g6e]), instance_types or instance_categories",
                {"field": "instance_types"},
            )
        narrowing = [n for n in ("min_instance_generation", "instance_sizes") if n in self.model_fields_set]
        if self.instance_types and narrowing:
            raise PydanticCustomError(
                "narrowing",
                "{name} narrows instance_families or instance_categories, not exact instance_types — remove it, "
                "or list the types you mean",
                {"name": narrowing[0], "field": narrowing[0]},
            )
        if not self.instances:
            offered = sorted(
                {
                    t.name
                    for t in INSTANCE_TYPES.values()
                    if t.family in self.instance_families or instance_category(t.family) in self.instance_categories
                }
            )
            raise PydanticCustomError(
                "no_instances",
                "min_instance_generation and instance_sizes leave no instance type of the catalog — the families or "
                "categories offer {offered}",
                {"offered": ", ".join(offered) or "none", "field": "instance_sizes"},
            )
        kinds = {t.accelerator for t in self.instances}
        if len(kinds) > 1:
            raise PydanticCustomError(
                "mixed",
                "mixes {kinds} instances — one pool serves one accelerator kind; split it into pools",
                {
                    "kinds": " and ".join(sorted(k.value for k in kinds)),
                    "field": self.selection_field,
                },
            )
        if not self.capacity_types:
            raise PydanticCustomError(
                "capacity_types",
                "an empty list would give Karpenter a capacity-type requirement with no values, which no node meets "
                "— list at least one of on_demand, spot, reserved (or leave it unset: on_demand)",
                {"field": "capacity_types"},
            )
        if len(set(self.capacity_types)) != len(self.capacity_types):
            raise PydanticCustomError(
                "capacity_types", "lists a capacity type twice — list each once", {"field": "capacity_types"}
            )
        if self.capacity_reservation_ids and NodeCapacity.RESERVED not in self.capacity_types:
            raise PydanticCustomError(
                "reserved",
                "add 'reserved' to capacity_types to use capacity_reservation_ids",
                {"field": "capacity_types"},
            )
        if NodeCapacity.CAPACITY_BLOCK in self.capacity_types:
            raise PydanticCustomError(
                "capacity_block",
                "Karpenter selects Capacity Blocks as 'reserved' capacity "
                "through capacity_reservation_ids; use capacity_types: [reserved]",
                {"field": "capacity_types"},
            )
        return self

    @property
    def instances(self) -> list[InstanceType]:
        """The catalogued types the pool launches: ``instance_types``, or those of ``instance_families`` /
        ``instance_categories`` left by ``min_instance_generation`` and ``instance_sizes``."""
        if self.instance_types:
            return [INSTANCE_TYPES[t] for t in self.instance_types]
        chosen = (
            t
            for t in INSTANCE_TYPES.values()
            if (t.family in self.instance_families or instance_category(t.family) in self.instance_categories)
            and (self.min_instance_generation is None or instance_generation(t.family) >= self.min_instance_generation)
            and (not self.instance_sizes or t.name.split(".", 1)[1] in self.instance_sizes)
        )
        return sorted(chosen, key=lambda t: t.name)

    @property
    def selection_field(self) -> str:
        """The field that picks the pool's types: ``instance_types``, ``instance_families`` or
        ``instance_categories``."""
        if self.instance_types:
            return "instance_types"
        return "instance_families" if self.instance_families else "instance_categories"

    @property
    def accelerator(self) -> AcceleratorKind:
        return self.instances[0].accelerator

    @property
    def is_accelerated(self) -> bool:
        return self.accelerator is not AcceleratorKind.NONE

    @property
    def uses_placement_group(self) -> bool:
        return self.efa if self.placement_group is None else self.placement_group

    @property
    def accelerator_limit(self) -> int | None:
        if not self.is_accelerated:
            return None
        return self.max_accelerators or 64

    @field_validator("subnet_tags")
    @classmethod
    def _subnet_tags(cls, tags: dict[str, str]) -> dict[str, str]:
        return check_selector_tags(tags, "subnet_tag")

    @field_validator("security_group_tags")
    @classmethod
    def _security_group_tags(cls, tags: dict[str, str]) -> dict[str, str]:
        return check_selector_tags(tags, "security_group_tag")

    @property
    def cpu_limit(self) -> int | None:
        return self.max_cpu or (None if self.is_accelerated else 1000)

    def memory_nodes(self, instance: InstanceType) -> int | None:
        """Nodes of ``instance`` that ``max_memory_gib`` admits (Karpenter launches none that would take the pool's
        memory over it); None without a memory limit."""
        if self.max_memory_gib is None:
            return None
        return int(self.max_memory_gib // instance.memory_gib)

    @property
    def effective_consolidation(self) -> ConsolidationPolicy:
        if self.consolidation_policy:
            return self.consolidation_policy
        return (
            ConsolidationPolicy.WHEN_EMPTY if self.is_accelerated else ConsolidationPolicy.WHEN_EMPTY_OR_UNDERUTILIZED
        )

    @property
    def effective_budgets(self) -> tuple[DisruptionBudget, ...]:
        if self.disruption_budgets is not None:
            return self.disruption_budgets
        return BUSINESS_HOURS_BUDGETS if self.is_accelerated else (DisruptionBudget(nodes="10%"),)

    @property
    def effective_root_volume_gib(self) -> int:
        return self.root_volume_gib or (500 if self.is_accelerated else 100)


#: An IAM role name (IAM's ``[\w+=,.@-]{1,64}``, ASCII only).
IamRoleName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_+=,.@-]{1,64}$")]


class NodeDaemonConfig(StrictModel):
    """A node daemon inferstack installs (GPU operator, Neuron device plugin, EFA device plugin)."""

    install: bool = True
    """Install it when a pool needs it. Turn off on a cluster that already runs it (two GPU operators, or two
    device plugins, fight over the same nodes). Default on — off on a team's own cluster (``build_platform`` with
    ``cluster=``) unless set."""
    extra_tolerations: tuple[Taint, ...] = ()
    """Taints of the pools it serves that its DaemonSets must tolerate besides the accelerator taints inferstack
    adds itself. Default none (rule NODE-DAEMON-TAINTS names any taint left out)."""


#: Kept for configs and code written against the GPU-operator-only settings.
GpuOperatorConfig = NodeDaemonConfig


class NodeDaemon(StrEnum):
    """Node daemons inferstack installs, by the ``compute`` key of their settings."""

    GPU_OPERATOR = "gpu_operator"
    """NVIDIA GPU operator (device plugin, DCGM exporter, NFD worker) — on NVIDIA pools."""
    NEURON_PLUGIN = "neuron_plugin"
    """Neuron Helm chart's device plugin and node-problem detector — on Neuron pools."""
    EFA_PLUGIN = "efa_plugin"
    """EFA device plugin — on pools with ``efa: true``."""


class ComputeConfig(StrictModel):
    """Accelerated and elastic capacity. Operators and device plugins follow from what is configured here."""

    node_groups: tuple[AcceleratedNodeGroupConfig, ...] = ()
    """Managed accelerated node groups. Default none."""
    karpenter_pools: tuple[KarpenterPoolConfig, ...] = ()
    """Karpenter NodePools. Default none (Karpenter is installed when at least one pool is configured)."""
    gpu_operator: NodeDaemonConfig = NodeDaemonConfig()
    """NVIDIA GPU operator (installed when any NVIDIA node group or pool exists)."""
    neuron_plugin: NodeDaemonConfig = NodeDaemonConfig()
    """Neuron device plugin (installed when any Neuron node group or pool exists)."""
    efa_plugin: NodeDaemonConfig = NodeDaemonConfig()
    """EFA device plugin (installed when any pool has EFA)."""
    install_karpenter: bool = True
    """Install Karpenter (its CRDs, controller, controller role, interruption queue and a node role) when pools are
    configured. Turn off on a cluster that runs Karpenter already: inferstack then applies only its EC2NodeClasses
    and NodePools, with ``karpenter_node_role`` as their nodes' role. Default on — off on a team's own cluster
    (``build_platform`` with ``cluster=``) unless set."""
    karpenter_node_role: IamRoleName | None = None
    """With ``install_karpenter`` off: the name of the IAM role of the nodes the cluster's Karpenter launches (its
    controller may pass only that role: Karpenter's reference policy scopes ``iam:PassRole`` to it, and the role
    needs an EC2 Linux access entry). Required then; refused with ``install_karpenter: true``, without pools, and
    on inferstack's own cluster. Default none."""

    @model_validator(mode="after")
    def _karpenter_node_role(self) -> ComputeConfig:
        """A node role is named exactly when pools go to a Karpenter inferstack does not install."""
        if self.karpenter_pools and not self.install_karpenter and self.karpenter_node_role is None:
            raise PydanticCustomError(
                "karpenter_node_role",
                "karpenter_node_role: required with install_karpenter off (the default on a team's own cluster) — "
                "name the IAM role of the nodes your cluster's Karpenter launches, or set install_karpenter: true",
            )
        chosen = "install_karpenter" in self.model_fields_set  # unset: on, but off on a team's own cluster
        if self.karpenter_node_role is not None and ((chosen and self.install_karpenter) or not self.karpenter_pools):
            raise PydanticCustomError(
                "karpenter_node_role",
                "karpenter_node_role '{role}': read only with install_karpenter off and karpenter_pools set (the "
                "Karpenter inferstack installs brings its own node role) — remove it, or set install_karpenter: false",
                {"role": self.karpenter_node_role},
            )
        return self

    @model_validator(mode="after")
    def _unique_names(self) -> ComputeConfig:
        names = [g.name for g in self.node_groups] + [p.name for p in self.karpenter_pools]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates or "system" in names:
            raise PydanticCustomError(
                "names",
                "pool names must be unique and not 'system' (the system node group): {dups}",
                {"dups": ", ".join(duplicates or ["system"])},
            )
        return self

    @property
    def pools(self) -> list[AcceleratedNodeGroupConfig | KarpenterPoolConfig]:
        return [*self.node_groups, *self.karpenter_pools]

    def has(self, kind: AcceleratorKind) -> bool:
        return any(p.accelerator is kind for p in self.pools)

    @property
    def has_efa(self) -> bool:
        return any(p.efa for p in self.pools)

    def daemon_pools(self, daemon: NodeDaemon) -> list[AcceleratedNodeGroupConfig | KarpenterPoolConfig]:
        """The pools whose nodes ``daemon`` must run on."""
        if daemon is NodeDaemon.GPU_OPERATOR:
            return [p for p in self.pools if p.accelerator is AcceleratorKind.NVIDIA]
        if daemon is NodeDaemon.NEURON_PLUGIN:
            return [p for p in self.pools if p.accelerator is AcceleratorKind.NEURON]
        return [p for p in self.pools if p.efa]

    def daemon_tolerations(self, daemon: NodeDaemon) -> tuple[Taint, ...]:
        """What ``daemon``'s DaemonSets tolerate: the accelerator taint of every pool it serves (inferstack's own),
        then its ``extra_tolerations``. The Helm values and rule NODE-DAEMON-TAINTS both read this."""
        own = sorted(
            {
                ACCELERATOR_TAINT_KEY[p.accelerator]
                for p in self.daemon_pools(daemon)
                if p.accelerator is not AcceleratorKind.NONE
            }
        )
        settings: NodeDaemonConfig = getattr(self, daemon.value)
        return (*(Taint(key=key) for key in own), *settings.extra_tolerations)
