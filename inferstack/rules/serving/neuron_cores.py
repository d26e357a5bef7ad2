"""NEURON-CORES: on Neuron, ``tensor_parallel_size`` counts NeuronCores, but the pod requests
``aws.amazon.com/neuron`` in whole devices (inf2/trn1: 2 cores per device, trn2: 8), so the size must be a
multiple of the cores per device. The finding suggests the nearest multiple that passes every rule."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.model import InferstackConfig
from inferstack.plan.placement import pool_instances
from inferstack.plan.served import engines
from inferstack.rules.base import Finding, Rule
from inferstack.rules.suggestions import suggesting, viable

NEURON_CORES = "NEURON-CORES"


def check_neuron_cores(config: InferstackConfig) -> Iterator[Finding]:
    """On Neuron, TP counts NeuronCores, which come in whole devices (inf2/trn1: 2 per device, trn2: 8)."""
    for path, workload in engines(config):
        instances = pool_instances(config.pool(workload.pool))
        if instances[0].accelerator is not AcceleratorKind.NEURON:
            continue
        per_device = instances[0].neuron_cores_per_device
        tp = workload.engine.tensor_parallel_size
        if tp % per_device:
            field = f"{path}.engine.tensor_parallel_size"
            multiples = list(range(per_device, 4 * max(tp, per_device) + 1, per_device))
            ranked = sorted(multiples, key=lambda m: (abs(m - tp), m))
            passing = [m for m in ranked if suggesting() and viable(config, {field: m})]
            yield Finding(
                rule=NEURON_CORES,
                path=field,
                suggestions=({field: passing[0]},) if passing else (),
                message=f"tensor_parallel_size {tp} NeuronCores is not a whole number of "
                f"{instances[0].accelerator_model} devices ({per_device} cores each): the pod requests "
                "aws.amazon.com/neuron in devices",
                fix=f"use a multiple of {per_device} (e.g. {max(per_device, tp - tp % per_device)})",
            )


RULE = Rule(id=NEURON_CORES, title="Neuron TP is a whole number of devices", check=check_neuron_cores)
