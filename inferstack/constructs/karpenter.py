"""Karpenter v1 NodePool and EC2NodeClass as typed cdk8s constructs, validated against the upstream CRDs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from constructs import Construct

from inferstack.catalog.efa_layout import NetworkInterface
from inferstack.constructs.custom_resource import CustomResource

NODEPOOL_API = "karpenter.sh/v1"
NODECLASS_API = "karpenter.k8s.aws/v1"


@dataclass(frozen=True, kw_only=True)
class Requirement:
    """A NodePool scheduling requirement (``key operator values``)."""

    key: str
    """Node label key, e.g. ``karpenter.k8s.aws/instance-family``, ``karpenter.sh/capacity-type``,
    ``kubernetes.io/arch``."""
    operator: str = "In"
    """``In``, ``NotIn``, ``Exists``, ``DoesNotExist``, ``Gt``, ``Lt``, ``Gte`` or ``Lte`` (the CRD's enum). Default
    ``In``."""
    values: tuple[str, ...] = ()
    """Label values the operator compares with (one integer for ``Gt``/``Lt``…); not rendered when empty. Default
    none."""

    def render(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "operator": self.operator}
        if self.values:
            out["values"] = list(self.values)
        return out


@dataclass(frozen=True, kw_only=True)
class NodeTaint:
    key: str
    """Taint key, e.g. ``nvidia.com/gpu``."""
    value: str | None = None
    """Taint value. Default none (not rendered)."""
    effect: str = "NoSchedule"
    """``NoSchedule``, ``PreferNoSchedule`` or ``NoExecute``. Default ``NoSchedule``."""

    def render(self) -> dict[str, Any]:
        out = {"key": self.key, "effect": self.effect}
        if self.value is not None:
            out["value"] = self.value
        return out


@dataclass(frozen=True, kw_only=True)
class Budget:
    """Disruption budget: ``nodes`` at most, optionally in a cron window (UTC) for some reasons."""

    nodes: str
    """Most nodes disrupted at once: a count (``2``) or a percentage of the pool's nodes (``10%``); ``0`` blocks
    disruption."""
    schedule: str | None = None
    """Cron schedule (UTC) opening the budget's window, e.g. ``0 9 * * mon-fri``; needs ``duration``. Default none:
    always in force."""
    duration: str | None = None
    """Length of each ``schedule`` window, hours and minutes (``8h``, ``1h30m``); rendered only with ``schedule``.
    Default none."""
    reasons: tuple[str, ...] = ()
    """Disruption reasons the budget limits: ``Underutilized``, ``Empty``, ``Drifted``. Default none: all of them."""

    def render(self) -> dict[str, Any]:
        out: dict[str, Any] = {"nodes": self.nodes}
        if self.schedule:
            out["schedule"] = self.schedule
            out["duration"] = self.duration
        if self.reasons:
            out["reasons"] = list(self.reasons)
        return out


@dataclass(frozen=True, kw_only=True)
class NodePoolProps:
    """Props of a Karpenter NodePool. Units: durations as Karpenter strings (``30m``, ``720h``)."""

    name: str
    """Name of the NodePool (cluster-scoped)."""
    node_class: str
    """Name of the EC2NodeClass the pool launches with."""
    requirements: Sequence[Requirement]
    """Requirements of the pool's nodes (instance types or families, capacity type, architecture, zones…)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels of the pool's nodes (``template.metadata.labels``): what workloads' nodeSelectors match. Default none."""
    taints: Sequence[NodeTaint] = ()
    """Taints of the pool's nodes (only pods tolerating them land there). Default none."""
    limits: Mapping[str, int | str] = field(default_factory=dict)
    """Resource limits over all nodes of the pool, e.g. ``{"nvidia.com/gpu": 64, "cpu": 1000, "memory": "4096Gi"}``
    (counts, or Kubernetes quantities). Default none."""
    consolidation_policy: str = "WhenEmpty"
    """``disruption.consolidationPolicy``: ``WhenEmpty`` (remove empty nodes only), ``WhenEmptyOrUnderutilized``
    (also repack pods) or ``Balanced``. Default ``WhenEmpty``."""
    consolidate_after: str = "30m"
    """``disruption.consolidateAfter``: how long after a pod last arrived on or left a node it may be consolidated, a
    duration or ``Never``. Default ``30m``."""
    expire_after: str = "720h"
    """``template.spec.expireAfter``: age at which a node is replaced, a duration or ``Never``. Default ``720h`` (30
    days)."""
    budgets: Sequence[Budget] = (Budget(nodes="10%"),)
    """Disruption budgets (``disruption.budgets``). Default one: at most 10% of the nodes at a time."""
    weight: int | None = None
    """Priority among the NodePools a pod fits (higher first), 1–100. Default none (not set)."""
    termination_grace_period: str | None = None
    """``template.spec.terminationGracePeriod``: the longest Karpenter drains a node before deleting its pods (it
    then overrides PDBs and ``do-not-disrupt``), a duration such as ``2h``. Default none (waits for the pods)."""
    overrides: Mapping[str, Any] = field(default_factory=dict)
    """Escape hatch deep-merged into the manifest before validation."""


class NodePool(CustomResource):
    """``karpenter.sh/v1`` NodePool."""

    def __init__(self, scope: Construct, construct_id: str, props: NodePoolProps) -> None:
        template_spec: dict[str, Any] = {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": props.node_class},
            "requirements": [r.render() for r in props.requirements],
            "expireAfter": props.expire_after,
        }
        if props.taints:
            template_spec["taints"] = [t.render() for t in props.taints]
        if props.termination_grace_period is not None:
            template_spec["terminationGracePeriod"] = props.termination_grace_period
        spec: dict[str, Any] = {
            "template": {"metadata": {"labels": dict(props.labels)}, "spec": template_spec},
            "disruption": {
                "consolidationPolicy": props.consolidation_policy,
                "consolidateAfter": props.consolidate_after,
                "budgets": [b.render() for b in props.budgets],
            },
        }
        if props.limits:
            spec["limits"] = dict(props.limits)
        if props.weight is not None:
            spec["weight"] = props.weight
        manifest = {"apiVersion": NODEPOOL_API, "kind": "NodePool", "metadata": {"name": props.name}, "spec": spec}
        super().__init__(scope, construct_id, manifest=manifest, overrides=dict(props.overrides))


@dataclass(frozen=True, kw_only=True)
class Ec2NodeClassProps:
    """Props of a Karpenter EC2NodeClass. Secure defaults: IMDSv2 only with hop limit 1, encrypted gp3 root."""

    name: str
    """Name of the EC2NodeClass (cluster-scoped), what a NodePool's ``node_class`` names."""
    role: str
    """Name of the node IAM role (Karpenter creates the instance profile)."""
    ami_selector_terms: Sequence[Mapping[str, Any]]
    """``amiSelectorTerms``, e.g. ``[{"alias": "al2023@v20260714"}]`` or ``[{"tags": {...}, "owner": "self"}]``."""
    ami_family: str | None = None
    """``amiFamily`` (``AL2023``, ``Bottlerocket``): required by Karpenter without an alias term, else inferred
    from the alias. Default none (rendered only when given)."""
    subnet_ids: Sequence[str]
    """Subnets the nodes launch into (``subnetSelectorTerms`` by id), unless ``subnet_tags``."""
    subnet_tags: Mapping[str, str] = field(default_factory=dict)
    """Select the subnets by these tags instead (``subnetSelectorTerms: [{tags: …}]``). Default none: by id."""
    security_group_ids: Sequence[str]
    """Security groups of the nodes (``securityGroupSelectorTerms`` by id)."""
    security_group_tags: Mapping[str, str] = field(default_factory=dict)
    """Also every security group with these tags (one more term: terms are ORed). Default none."""
    root_volume_gib: int = 100
    """Size of the encrypted gp3 root volume (images, containers' writable layers, emptyDirs), GiB. Default 100."""
    root_device: str = "/dev/xvda"
    """Device name of the volume ``root_volume_*`` size: the one holding images, containers and emptyDirs. Default
    ``/dev/xvda`` (AL2023's root); Bottlerocket's is its data volume, ``/dev/xvdb``."""
    os_volume_gib: int | None = None
    """Bottlerocket's OS volume, ``/dev/xvda`` (encrypted gp3) beside the data volume at ``root_device``, GiB.
    Default none: no second mapping (AL2023)."""
    root_volume_iops: int | None = None
    """Provisioned IOPS of the gp3 root volume (3,000–16,000). Default none: gp3's baseline, 3,000."""
    root_volume_throughput: int | None = None
    """Provisioned throughput of the gp3 root volume, MiB/s (125–1,000). Default none: gp3's baseline, 125."""
    instance_store_policy: str | None = None
    """``instanceStorePolicy``: ``RAID0`` puts the instance-store NVMe disks in one RAID-0 array for the kubelet's
    and containerd's data (images, emptyDirs). Default none (the disks are left alone)."""
    user_data: str | None = None
    """``userData`` Karpenter merges its own node settings into (AL2023: a nodeadm ``NodeConfig`` or a MIME
    multi-part document). Default none."""
    network_interfaces: Sequence[NetworkInterface] = ()
    """EFA layout (see ``inferstack.catalog.efa_layout``). Default: Karpenter's single ENA interface."""
    placement_group: str | None = None
    """Name of a cluster placement group. Default none."""
    capacity_reservation_ids: Sequence[str] = ()
    """EC2 capacity reservations the nodes may launch into (``capacityReservationSelectorTerms`` by id). Default
    none."""
    tags: Mapping[str, str] = field(default_factory=dict)
    """Tags Karpenter puts on the instances and what it launches with them. Default none."""
    overrides: Mapping[str, Any] = field(default_factory=dict)
    """Escape hatch deep-merged into the manifest before validation. Default none."""


def _encrypted_gp3(gib: int, iops: int | None = None, throughput: int | None = None) -> dict[str, Any]:
    """An encrypted gp3 EBS volume of ``gib`` GiB, deleted with the instance; baseline IOPS/throughput unless given."""
    return {
        "volumeSize": f"{gib}Gi",
        "volumeType": "gp3",
        "encrypted": True,
        "deleteOnTermination": True,
        **({"iops": iops} if iops is not None else {}),
        **({"throughput": throughput} if throughput is not None else {}),
    }


class Ec2NodeClass(CustomResource):
    """``karpenter.k8s.aws/v1`` EC2NodeClass."""

    def __init__(self, scope: Construct, construct_id: str, props: Ec2NodeClassProps) -> None:
        spec: dict[str, Any] = {
            "role": props.role,
            "amiSelectorTerms": [dict(term) for term in props.ami_selector_terms],
            "subnetSelectorTerms": [{"tags": dict(props.subnet_tags)}]
            if props.subnet_tags
            else [{"id": subnet} for subnet in props.subnet_ids],
            "securityGroupSelectorTerms": [
                *({"id": group} for group in props.security_group_ids),
                *([{"tags": dict(props.security_group_tags)}] if props.security_group_tags else []),
            ],
            "metadataOptions": {
                "httpEndpoint": "enabled",
                "httpProtocolIPv6": "disabled",
                "httpPutResponseHopLimit": 1,
                "httpTokens": "required",
            },
            "blockDeviceMappings": [
                *(
                    [{"deviceName": "/dev/xvda", "ebs": _encrypted_gp3(props.os_volume_gib)}]
                    if props.os_volume_gib is not None
                    else []
                ),
                {
                    "deviceName": props.root_device,
                    "ebs": _encrypted_gp3(props.root_volume_gib, props.root_volume_iops, props.root_volume_throughput),
                },
            ],
        }
        if props.ami_family is not None:
            spec["amiFamily"] = props.ami_family
        if props.instance_store_policy is not None:
            spec["instanceStorePolicy"] = props.instance_store_policy
        if props.user_data is not None:
            spec["userData"] = props.user_data
        if props.network_interfaces:
            spec["networkInterfaces"] = [
                {
                    "networkCardIndex": i.network_card_index,
                    "deviceIndex": i.device_index,
                    "interfaceType": i.interface_type,
                }
                for i in props.network_interfaces
            ]
        if props.placement_group:
            spec["placementGroupSelector"] = {"name": props.placement_group}
        if props.capacity_reservation_ids:
            spec["capacityReservationSelectorTerms"] = [{"id": i} for i in props.capacity_reservation_ids]
        if props.tags:
            spec["tags"] = dict(props.tags)
        manifest = {
            "apiVersion": NODECLASS_API,
            "kind": "EC2NodeClass",
            "metadata": {"name": props.name},
            "spec": spec,
        }
        super().__init__(scope, construct_id, manifest=manifest, overrides=dict(props.overrides))
