"""EFA network-interface layouts per instance type (facts: ../shared/facts/instances.md, "EFA interface layout").

Every EFA-capable network card carries one EFA device; the number of EFA devices is the catalog's
``max_efa_interfaces`` (= EFA-capable network cards for every type in the catalog).

* :func:`launch_template_interfaces` — managed node groups (launch template): card 0 / device 0 is an
  EFA-with-ENA interface (``efa``: pods keep their primary ENA and card 0 keeps a slot for VPC CNI ENIs); every
  further card gets an ``efa-only`` interface at device index 0, as AWS's current guidance places them.
* :func:`karpenter_interfaces` — Karpenter ``EC2NodeClass.spec.networkInterfaces`` (types ``interface`` and
  ``efa-only`` only; card 0 / device 0 must be ``interface``): ENA primary, ``efa-only`` at card 0 / device 1,
  and ``efa-only`` at device 0 of every further card — AWS's current layout (use case 1, fewest IPs).
"""

from __future__ import annotations

from dataclasses import dataclass

from inferstack.catalog.instances import InstanceType


@dataclass(frozen=True)
class NetworkInterface:
    network_card_index: int
    device_index: int
    interface_type: str
    """``efa`` (EFA with ENA), ``efa-only`` or ``interface`` (ENA)."""

    @property
    def has_efa(self) -> bool:
        return self.interface_type in ("efa", "efa-only")


def _require_efa(instance: InstanceType) -> None:
    if not instance.efa_supported:
        raise ValueError(f"{instance.name} has no EFA interfaces")


def launch_template_interfaces(instance: InstanceType) -> list[NetworkInterface]:
    """Interfaces for a node group launch template: one EFA device per EFA-capable card."""
    _require_efa(instance)
    interfaces = [NetworkInterface(0, 0, "efa")]
    interfaces += [NetworkInterface(card, 0, "efa-only") for card in range(1, instance.max_efa_interfaces)]
    return interfaces


def karpenter_interfaces(instance: InstanceType) -> list[NetworkInterface]:
    """Interfaces for a Karpenter EC2NodeClass: ENA primary plus one ``efa-only`` per EFA-capable card."""
    _require_efa(instance)
    interfaces = [NetworkInterface(0, 0, "interface"), NetworkInterface(0, 1, "efa-only")]
    interfaces += [NetworkInterface(card, 0, "efa-only") for card in range(1, instance.max_efa_interfaces)]
    return interfaces
