"""What a Karpenter pool's node settings need of its instance types and pods.

* KARPENTER-INSTANCE-STORE: ``instance_store_policy: RAID0`` only where every instance type of the pool has
  instance-store NVMe (Karpenter builds the array from the disks it finds; a type without them gets none, and the
  kubelet's data stays on the root volume sized for it or not).
* KARPENTER-TERMINATION-GRACE: a pool's ``termination_grace_period`` leaves the serving pods their own
  terminationGracePeriodSeconds — past it Karpenter deletes what is left, and it deletes a pod early enough that
  the pod's grace ends with the node's (karpenter.sh NodePool v1 ``terminationGracePeriod``): shorter than the
  pods' grace, a drain starts by cutting running requests.
* KARPENTER-CUSTOM-AMI (warning): an accelerator pool on your own AMIs (``ami.terms``) needs their drivers on the
  image: inferstack's GPU operator runs with its driver and container toolkit off (the EKS accelerated AMIs carry
  both), and nothing installs the Neuron driver; Karpenter launches the nodes either way and the device plugin
  finds no devices.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.kubernetes import SERVING_TERMINATION_GRACE_SECONDS
from inferstack.config.model import InferstackConfig
from inferstack.plan import resolve
from inferstack.rules.base import Finding, Rule, Severity, karpenter_pools

INSTANCE_STORE = "KARPENTER-INSTANCE-STORE"
TERMINATION_GRACE = "KARPENTER-TERMINATION-GRACE"
CUSTOM_AMI = "KARPENTER-CUSTOM-AMI"
#: What an accelerator needs on a node image besides what inferstack installs.
_DRIVERS = {
    AcceleratorKind.NVIDIA: "the NVIDIA driver and container toolkit (the GPU operator runs with both off)",
    AcceleratorKind.NEURON: "the Neuron driver (aws-neuronx-dkms; the Neuron chart installs only the device plugin)",
}
_UNITS = {"s": 1, "m": 60, "h": 3600}


def duration_seconds(value: str) -> int:
    """A Karpenter duration (``1h30m``, ``90s``) in seconds."""
    return sum(int(number) * _UNITS[unit] for number, unit in re.findall(r"([0-9]+)(s|m|h)", value))


def check_instance_store(config: InferstackConfig) -> Iterator[Finding]:
    for path, pool in karpenter_pools(config):
        if pool.instance_store_policy is None:
            continue
        without = sorted(t.name for t in pool.instances if t.nvme_gb == 0)
        if without:
            with_disks = sorted(t.name for t in pool.instances if t.nvme_gb > 0)
            yield Finding(
                rule=INSTANCE_STORE,
                path=f"{path}.instance_store_policy",
                message=f"RAID0 needs instance-store NVMe, and {', '.join(without)} has none: its nodes keep images "
                "and emptyDirs on the root volume",
                fix=f"keep only types with instance store ({', '.join(with_disks)})"
                if with_disks
                else "pick instance types with instance store (g6e, p5, trn1: inf2 has none), or drop "
                "instance_store_policy",
            )


def _longest_startup(config: InferstackConfig, pool: str) -> int:
    """The longest startup budget of the pods planned on ``pool``, seconds (0 without any)."""
    return max(
        (
            role.pod.startup_seconds
            for workload in resolve(config).workloads
            for role in workload.roles.values()
            if (role.pool or workload.pool.name) == pool
        ),
        default=0,
    )


def check_termination_grace(config: InferstackConfig) -> Iterator[Finding]:
    for path, pool in karpenter_pools(config):
        grace = pool.termination_grace_period
        if grace is None or duration_seconds(grace) >= SERVING_TERMINATION_GRACE_SECONDS:
            continue
        # PDBs hold a drain only until node timeout − pod grace: enough for a replacement to start
        advised = SERVING_TERMINATION_GRACE_SECONDS + _longest_startup(config, pool.name)
        yield Finding(
            rule=TERMINATION_GRACE,
            path=f"{path}.termination_grace_period",
            message=f"{grace} is shorter than the serving pods' {SERVING_TERMINATION_GRACE_SECONDS} s termination "
            "grace: Karpenter deletes them at once when it drains a node, cutting the requests they run",
            fix=f"set termination_grace_period to at least {SERVING_TERMINATION_GRACE_SECONDS}s — {advised}s lets a "
            "replacement start before the PodDisruptionBudget stops holding — or leave it out",
        )


def check_custom_ami(config: InferstackConfig) -> Iterator[Finding]:
    for path, pool in karpenter_pools(config):
        if pool.ami is None or not pool.ami.custom or pool.accelerator not in _DRIVERS:
            continue
        yield Finding(
            rule=CUSTOM_AMI,
            path=f"{path}.ami.terms",
            message=f"the pool's {pool.accelerator.value} nodes boot your own AMIs, which need "
            f"{_DRIVERS[pool.accelerator]}: without them the device plugin finds no devices and no serving pod "
            "schedules",
            fix="build the AMIs from an EKS-optimized accelerated AMI (or use ami.alias, e.g. al2023@v20260714 or "
            "bottlerocket@<release>), then acknowledge KARPENTER-CUSTOM-AMI for this pool",
            severity=Severity.WARNING,
        )


RULES = (
    Rule(
        id=INSTANCE_STORE,
        title="RAID0 instance store only on instance types with instance-store NVMe",
        check=check_instance_store,
    ),
    Rule(
        id=CUSTOM_AMI,
        title="An accelerator pool on its own AMIs needs the accelerator's driver on them",
        check=check_custom_ami,
    ),
    Rule(
        id=TERMINATION_GRACE,
        title="A pool's termination grace period leaves the serving pods their own",
        check=check_termination_grace,
    ),
)
