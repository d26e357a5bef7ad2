"""NEURON-ARTIFACTS: Neuron servers never compile at start; they load the weights and the compile Job's
pre-compiled artifacts from the model bucket, so a Neuron workload needs source type ``s3`` and
``storage.model_bucket``. The rule cannot be acknowledged."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.model import InferstackConfig
from inferstack.config.workloads import ModelSourceType
from inferstack.plan.served import engines
from inferstack.rules.base import Finding, Rule

NEURON_ARTIFACTS = "NEURON-ARTIFACTS"


def check_neuron_artifacts(config: InferstackConfig) -> Iterator[Finding]:
    """Neuron servers load weights and pre-compiled artifacts from the model bucket (never compile at start)."""
    for path, workload in engines(config):
        if config.pool(workload.pool).accelerator is not AcceleratorKind.NEURON:
            continue
        if workload.model.source.type is not ModelSourceType.S3 or config.storage.model_bucket is None:
            yield Finding(
                rule=NEURON_ARTIFACTS,
                path=f"{path}.model.source.type",
                message=f"Neuron workloads read weights and the compile Job's artifacts from the model bucket; "
                f"source {workload.model.source.type.value} has no place for pre-compiled artifacts",
                fix="use source type s3 (the default) with storage.model_bucket",
            )


RULE = Rule(
    id=NEURON_ARTIFACTS,
    title="Neuron servers load pre-compiled artifacts",
    check=check_neuron_artifacts,
    acknowledgeable=False,
)
