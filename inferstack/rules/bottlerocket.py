"""Bottlerocket nodes and what inferstack runs on them.

* BOTTLEROCKET-GPU-METRICS (warning): a Bottlerocket NVIDIA pool serving a monitored workload has no GPU metrics.

Bottlerocket's NVIDIA variants run their own device plugin, so inferstack keeps every GPU operator operand off their
nodes (``nvidia.com/gpu.deploy.operands=false``: :data:`~inferstack.catalog.kubernetes.GPU_OPERATOR_OPERANDS_LABEL`
says why) — the DCGM exporter included. The GPU dashboard and the GPU alerts then have no series for those nodes.
* BOTTLEROCKET-NEURON-DEVICES (warning): a Bottlerocket Neuron pool whose user data does not turn on
  ``settings.kubernetes.device-ownership-from-security-context``: the serving pods run as a non-root user, and the
  Neuron device nodes stay root's (a Karpenter pool only: managed node groups take no user data here).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator

from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.model import InferstackConfig
from inferstack.rules.base import Finding, Rule, Severity, all_pools, karpenter_pools

RULE_ID = "BOTTLEROCKET-GPU-METRICS"


def check(config: InferstackConfig) -> Iterator[Finding]:
    for path, pool in all_pools(config):
        if pool.accelerator is not AcceleratorKind.NVIDIA or not pool.boots_bottlerocket:
            continue
        monitored = sorted(w.name for w in config.workloads if w.pool == pool.name and w.monitoring)
        if not monitored:
            continue
        yield Finding(
            rule=RULE_ID,
            path=f"{path}.ami",
            message=f"Bottlerocket runs its own NVIDIA device plugin, so no GPU operator operand runs on the pool's "
            f"nodes — no DCGM exporter: the GPU dashboard and GPU alerts have no data for {', '.join(monitored)}",
            fix="boot the pool from an AL2023 NVIDIA AMI (the default) to get GPU metrics, or acknowledge "
            "BOTTLEROCKET-GPU-METRICS",
            severity=Severity.WARNING,
        )


RULE = Rule(id=RULE_ID, title="GPU metrics need the DCGM exporter, which Bottlerocket nodes do not run", check=check)


NEURON_DEVICES = "BOTTLEROCKET-NEURON-DEVICES"
#: The Bottlerocket setting that hands a container's devices to its runAsUser/runAsGroup (containerd's
#: ``device_ownership_from_security_context``); Karpenter v1.14.1 decodes it (``bottlerocketsettings.go``).
DEVICE_OWNERSHIP = "device-ownership-from-security-context"


def _device_ownership(user_data: str | None) -> bool:
    """Whether ``user_data`` (Bottlerocket TOML, validated at the field) turns device ownership on."""
    if not user_data:
        return False
    settings = tomllib.loads(user_data).get("settings", {})
    return settings.get("kubernetes", {}).get(DEVICE_OWNERSHIP) is True


def check_neuron_devices(config: InferstackConfig) -> Iterator[Finding]:
    for path, pool in karpenter_pools(config):
        if pool.accelerator is not AcceleratorKind.NEURON or not pool.boots_bottlerocket:
            continue
        if _device_ownership(pool.user_data):
            continue
        yield Finding(
            rule=NEURON_DEVICES,
            path=f"{path}.user_data",
            message="inferstack's Neuron serving pods (vLLM) run as a non-root user, and Bottlerocket leaves the "
            "Neuron devices the device "
            f"plugin hands them owned by root unless settings.kubernetes.{DEVICE_OWNERSHIP} is on (the containerd "
            "setting; aws/aws-k8s-tester PR 607 runs Neuron pods non-root on Bottlerocket with it — the first "
            "Bottlerocket release that has it is not confirmed offline): the engine would find no device",
            fix=f"add to user_data: [settings.kubernetes] {DEVICE_OWNERSHIP} = true (or boot AL2023, the default)",
            severity=Severity.WARNING,
        )


NEURON_RULE = Rule(
    id=NEURON_DEVICES,
    title="Non-root pods on Bottlerocket Neuron nodes get their devices",
    check=check_neuron_devices,
)
RULES = (RULE, NEURON_RULE)
