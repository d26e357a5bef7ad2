"""Rules of AIBrix on ``vllm`` workloads: its control plane is declared (inferstack does not install it), and every
adapter was trained on the model its pods serve."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.model import InferstackConfig
from inferstack.config.workloads import VllmWorkloadConfig
from inferstack.rules.base import Finding, Rule

CONTROL_PLANE = "AIBRIX-CONTROL-PLANE"
BASE_MODEL = "AIBRIX-BASE-MODEL"


def _aibrix(config: InferstackConfig) -> Iterator[tuple[str, VllmWorkloadConfig]]:
    for index, workload in enumerate(config.workloads):
        if isinstance(workload, VllmWorkloadConfig) and workload.aibrix is not None:
            yield f"workloads[{index}]", workload


def check_control_plane(config: InferstackConfig) -> Iterator[Finding]:
    """ModelAdapters and PodAutoscalers are AIBrix's CRDs: without its control plane they are refused (no CRD) or
    never acted on."""
    if config.cluster.aibrix is not None:
        return
    for path, _ in _aibrix(config):
        yield Finding(
            rule=CONTROL_PLANE,
            path=f"{path}.aibrix",
            message="AIBrix's control plane is not declared: inferstack does not install it (no published Helm "
            "chart; its release manifests bring Envoy Gateway v1.2.8, which inferstack does not vendor)",
            fix="apply aibrix-dependency-v0.7.0.yaml, aibrix-core-crds-v0.7.0.yaml and aibrix-core-v0.7.0.yaml (with "
            "enableEnvoyPatchPolicy in envoy-gateway-config), then declare cluster.aibrix",
        )


def check_base_model(config: InferstackConfig) -> Iterator[Finding]:
    """A LoRA adapter loads only onto the base model it was trained on: another model's pods reject it (or serve
    garbage if the shapes happen to match)."""
    for path, workload in _aibrix(config):
        assert workload.aibrix is not None
        for index, adapter in enumerate(workload.aibrix.adapters):
            if adapter.base_model != workload.model.id:
                yield Finding(
                    rule=BASE_MODEL,
                    path=f"{path}.aibrix.adapters[{index}].base_model",
                    message=f"adapter {adapter.name!r} was trained on {adapter.base_model}; the pods serve "
                    f"{workload.model.id}",
                    fix="serve it from a workload of its base model, or use an adapter of this model",
                )


RULES = (
    Rule(
        id=CONTROL_PLANE, title="AIBrix's control plane is declared", check=check_control_plane, acknowledgeable=False
    ),
    Rule(id=BASE_MODEL, title="Each LoRA adapter matches the pods' base model", check=check_base_model),
)
