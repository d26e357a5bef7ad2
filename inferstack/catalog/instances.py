"""EC2 instance types inferstack can place nodes on, with the facts sizing and scheduling need.

Accelerated rows come from ../shared/facts/instances.md (sources keyed there: K = Karpenter's generated
instance-type reference from DescribeInstanceTypes, CNI = VPC CNI limits, CSI = EBS CSI NVMe table, NRN = Neuron
docs). Accelerator memory is the API's ``MemoryInfo.SizeInMiB`` per accelerator, an upper bound on what a CUDA or
Neuron process can allocate. CPU rows (system and Ray head nodes) are from the EC2 general purpose / compute /
memory optimized specification tables.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from enum import StrEnum


class AcceleratorKind(StrEnum):
    """What an instance offers pods besides CPU and memory."""

    NONE = "none"
    NVIDIA = "nvidia"
    NEURON = "neuron"


@dataclass(frozen=True, kw_only=True)
class InstanceType:
    """Facts about one EC2 instance type (units in the field names)."""

    name: str
    vcpu: int
    memory_gib: float
    accelerator: AcceleratorKind = AcceleratorKind.NONE
    accelerator_model: str | None = None
    accelerator_count: int = 0
    accelerator_memory_mib: int = 0
    """Per accelerator (GPU or Neuron device)."""
    neuron_cores_per_device: int = 0
    nvme_gb: int = 0
    """Total local instance store, GB (0: EBS only)."""
    max_efa_interfaces: int = 0
    """``EfaInfo.MaximumEfaInterfaces``; 0 means EFA is not supported."""
    network_cards: int = 1
    interfaces_per_card: int = 4
    sources: str = "K"

    @property
    def family(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def size(self) -> str:
        return self.name.split(".", 1)[1]

    @property
    def efa_supported(self) -> bool:
        return self.max_efa_interfaces > 0

    @property
    def neuron_cores(self) -> int:
        return self.accelerator_count * self.neuron_cores_per_device

    @property
    def accelerator_memory_gib(self) -> float:
        return self.accelerator_memory_mib / 1024


def _nvidia(
    name: str,
    model: str,
    count: int,
    mib: int,
    vcpu: int,
    gib: float,
    nvme: int,
    efa: int,
    cards: int,
    per_card: int,
    sources: str = "K, CNI, CSI",
) -> InstanceType:
    return InstanceType(
        name=name,
        vcpu=vcpu,
        memory_gib=gib,
        accelerator=AcceleratorKind.NVIDIA,
        accelerator_model=model,
        accelerator_count=count,
        accelerator_memory_mib=mib,
        nvme_gb=nvme,
        max_efa_interfaces=efa,
        network_cards=cards,
        interfaces_per_card=per_card,
        sources=sources,
    )


def _neuron(
    name: str,
    model: str,
    count: int,
    mib: int,
    cores: int,
    vcpu: int,
    gib: float,
    nvme: int,
    efa: int,
    cards: int,
    per_card: int,
) -> InstanceType:
    return InstanceType(
        name=name,
        vcpu=vcpu,
        memory_gib=gib,
        accelerator=AcceleratorKind.NEURON,
        accelerator_model=model,
        accelerator_count=count,
        accelerator_memory_mib=mib,
        neuron_cores_per_device=cores,
        nvme_gb=nvme,
        max_efa_interfaces=efa,
        network_cards=cards,
        interfaces_per_card=per_card,
        sources="K, CNI, NRN",
    )


def _cpu(name: str, vcpu: int, gib: float) -> InstanceType:
    return InstanceType(name=name, vcpu=vcpu, memory_gib=gib, sources="EC2 instance type specifications")


A10G, L4, L40S = 22_888, 22_888, 45_776

_ROWS: tuple[InstanceType, ...] = (
    # g5 — NVIDIA A10G
    _nvidia("g5.xlarge", "A10G", 1, A10G, 4, 16, 250, 0, 1, 4),
    _nvidia("g5.2xlarge", "A10G", 1, A10G, 8, 32, 450, 0, 1, 4),
    _nvidia("g5.4xlarge", "A10G", 1, A10G, 16, 64, 600, 0, 1, 8),
    _nvidia("g5.8xlarge", "A10G", 1, A10G, 32, 128, 900, 1, 1, 8),
    _nvidia("g5.12xlarge", "A10G", 4, A10G, 48, 192, 3800, 1, 1, 15),
    _nvidia("g5.16xlarge", "A10G", 1, A10G, 64, 256, 1900, 1, 1, 8),
    _nvidia("g5.24xlarge", "A10G", 4, A10G, 96, 384, 3800, 1, 1, 15),
    _nvidia("g5.48xlarge", "A10G", 8, A10G, 192, 768, 7600, 1, 1, 7),
    # g6 — NVIDIA L4
    _nvidia("g6.xlarge", "L4", 1, L4, 4, 16, 250, 0, 1, 4),
    _nvidia("g6.2xlarge", "L4", 1, L4, 8, 32, 450, 0, 1, 4),
    _nvidia("g6.4xlarge", "L4", 1, L4, 16, 64, 600, 0, 1, 8),
    _nvidia("g6.8xlarge", "L4", 1, L4, 32, 128, 900, 1, 1, 8),
    _nvidia("g6.12xlarge", "L4", 4, L4, 48, 192, 3760, 1, 1, 8),
    _nvidia("g6.16xlarge", "L4", 1, L4, 64, 256, 1880, 1, 1, 15),
    _nvidia("g6.24xlarge", "L4", 4, L4, 96, 384, 3760, 1, 1, 15),
    _nvidia("g6.48xlarge", "L4", 8, L4, 192, 768, 7520, 1, 1, 15),
    # g6e — NVIDIA L40S
    _nvidia("g6e.xlarge", "L40S", 1, L40S, 4, 32, 250, 0, 1, 4),
    _nvidia("g6e.2xlarge", "L40S", 1, L40S, 8, 64, 450, 0, 1, 4),
    _nvidia("g6e.4xlarge", "L40S", 1, L40S, 16, 128, 600, 0, 1, 8),
    _nvidia("g6e.8xlarge", "L40S", 1, L40S, 32, 256, 900, 1, 1, 8),
    _nvidia("g6e.12xlarge", "L40S", 4, L40S, 48, 384, 3800, 1, 1, 10),
    _nvidia("g6e.16xlarge", "L40S", 1, L40S, 64, 512, 1900, 1, 1, 15),
    _nvidia("g6e.24xlarge", "L40S", 4, L40S, 96, 768, 3800, 2, 2, 10),
    _nvidia("g6e.48xlarge", "L40S", 8, L40S, 192, 1536, 7600, 4, 4, 10),
    # p4d / p4de — NVIDIA A100 40 GB / 80 GB
    _nvidia("p4d.24xlarge", "A100-40GB", 8, 40_960, 96, 1152, 8000, 4, 4, 15),
    _nvidia("p4de.24xlarge", "A100-80GB", 8, 81_920, 96, 1152, 8000, 4, 4, 15),
    # p5 / p5e / p5en — NVIDIA H100 / H200
    _nvidia("p5.4xlarge", "H100", 1, 81_920, 16, 256, 3800, 1, 1, 4, "K, CNI"),
    _nvidia("p5.48xlarge", "H100", 8, 81_920, 192, 2048, 30_400, 32, 32, 2),
    _nvidia("p5e.48xlarge", "H200", 8, 144_384, 192, 2048, 30_400, 32, 32, 2),
    _nvidia("p5en.48xlarge", "H200", 8, 144_384, 192, 2048, 30_400, 16, 16, 4),
    # p6 — NVIDIA B200
    _nvidia("p6-b200.48xlarge", "B200", 8, 183_359, 192, 2048, 30_400, 8, 8, 4),
    # inf2 — AWS Inferentia2 (2 NeuronCore-v2 per device)
    _neuron("inf2.xlarge", "Inferentia2", 1, 32_768, 2, 4, 16, 0, 0, 1, 4),
    _neuron("inf2.8xlarge", "Inferentia2", 1, 32_768, 2, 32, 128, 0, 0, 1, 8),
    _neuron("inf2.24xlarge", "Inferentia2", 6, 32_768, 2, 96, 384, 0, 0, 1, 15),
    _neuron("inf2.48xlarge", "Inferentia2", 12, 32_768, 2, 192, 768, 0, 0, 1, 15),
    # trn1 / trn1n / trn2 — AWS Trainium
    _neuron("trn1.2xlarge", "Trainium", 1, 32_768, 2, 8, 32, 474, 0, 1, 4),
    _neuron("trn1.32xlarge", "Trainium", 16, 32_768, 2, 128, 512, 7600, 8, 8, 5),
    _neuron("trn1n.32xlarge", "Trainium", 16, 32_768, 2, 128, 512, 7600, 16, 16, 5),
    # trn2: 96 GiB per chip (NRN; no API value), 8 NeuronCore-v3 per chip (LNC=2 exposes 4 logical cores).
    _neuron("trn2.48xlarge", "Trainium2", 16, 98_304, 8, 192, 2048, 7600, 16, 16, 2),
    # CPU — system node groups, Ray heads, controllers
    *(
        _cpu(f"{fam}.{size}", vcpu, vcpu * ratio)
        for fam, ratio in (
            ("m5", 4),
            ("m6i", 4),
            ("m6a", 4),
            ("m7i", 4),
            ("m7a", 4),
            ("c6i", 2),
            ("c7i", 2),
            ("r6i", 8),
            ("r7i", 8),
        )
        for size, vcpu in (("large", 2), ("xlarge", 4), ("2xlarge", 8), ("4xlarge", 16), ("8xlarge", 32))
    ),
)

INSTANCE_TYPES: dict[str, InstanceType] = {row.name: row for row in _ROWS}


def known_instance_types() -> list[str]:
    return sorted(INSTANCE_TYPES)


def near_matches(name: str, limit: int = 4) -> list[str]:
    """Catalog names closest to ``name`` (same family first), for "did you mean" messages."""
    family = name.split(".", 1)[0]
    same_family = sorted(n for n in INSTANCE_TYPES if n.split(".", 1)[0] == family)
    close = difflib.get_close_matches(name, INSTANCE_TYPES.keys(), n=limit, cutoff=0.6)
    ordered = [n for n in close if n in same_family] + [n for n in close if n not in same_family]
    return ordered or same_family[:limit]


def efa_capable() -> list[str]:
    return sorted(n for n, t in INSTANCE_TYPES.items() if t.efa_supported)
