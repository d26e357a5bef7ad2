"""AMI-ACCELERATOR: the AMI variant matches the accelerator (NVIDIA AMI for GPUs, Neuron AMI for inf/trn)."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.compute import AMI_ACCELERATOR, DEFAULT_AMI, AmiVariant
from inferstack.config.model import InferstackConfig
from inferstack.rules.base import Finding, Rule, node_groups

RULE_ID = "AMI-ACCELERATOR"


def check(config: InferstackConfig) -> Iterator[Finding]:
    for path, group in node_groups(config):
        if group.ami is None or AMI_ACCELERATOR[group.ami] is group.accelerator:
            continue
        fitting = sorted(v.value for v in AmiVariant if AMI_ACCELERATOR[v] is group.accelerator)
        yield Finding(
            rule=RULE_ID,
            path=f"{path}.ami",
            message=f"{group.ami.value} drives {AMI_ACCELERATOR[group.ami].value} devices but {group.instance_type} "
            f"has {group.accelerator.value} accelerators: the device plugin would find no devices",
            fix=f"use {' or '.join(fitting)} (or remove ami: the default is {DEFAULT_AMI[group.accelerator].value})",
        )


RULE = Rule(id=RULE_ID, title="AMI variant matches the accelerator", check=check)
