"""Where each workload answers OpenAI-compatible requests: the Service URL (cluster DNS), the LiteLLM provider prefix
and the model names it serves — what a gateway routes to. Each kind declares its endpoint
(:attr:`~inferstack.config.kinds.WorkloadKind.endpoint`), so a gateway's backends equal the Services the charts
create."""

from __future__ import annotations

from dataclasses import dataclass

from inferstack.catalog.routing import ROUTER_PORT
from inferstack.config.kinds import kind_of
from inferstack.config.kserve import KServeWorkloadConfig
from inferstack.config.ollama import OllamaWorkloadConfig
from inferstack.config.ray_serve import RayServeWorkloadConfig
from inferstack.config.workloads import VllmWorkloadConfig, WorkloadBase
from inferstack.plan.routing import router_name


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible endpoint of a workload."""

    api_base: str
    """e.g. ``http://qwen.inference.svc.cluster.local:8000/v1``."""
    provider: str
    """LiteLLM's provider prefix: ``hosted_vllm``, ``openai`` (any OpenAI-compatible server), ``ollama_chat``."""
    models: tuple[str, ...]
    """The model names it serves (the first is the primary)."""


class NoEndpointError(ValueError):
    """The workload serves no OpenAI-compatible API (e.g. Triton's KServe v2 protocol)."""


def vllm_models(workload: WorkloadBase) -> tuple[str, ...]:
    """AIBrix serves the base model as the workload's name and each adapter by its own; plain vLLM the model's."""
    assert isinstance(workload, VllmWorkloadConfig)
    if workload.aibrix is not None:
        return (workload.name, *(a.name for a in workload.aibrix.adapters))
    return (workload.model.name,)


def ray_serve_models(workload: WorkloadBase) -> tuple[str, ...]:
    """One name per Ray Serve LLM app model."""
    assert isinstance(workload, RayServeWorkloadConfig)
    return tuple(m.model.name for m in workload.models)


def ollama_models(workload: WorkloadBase) -> tuple[str, ...]:
    """Ollama's model tags."""
    assert isinstance(workload, OllamaWorkloadConfig)
    return workload.models


def kserve_models(workload: WorkloadBase) -> tuple[str, ...]:
    """KServe's Hugging Face server serves ``model.served_name``, else the InferenceService's name."""
    assert isinstance(workload, KServeWorkloadConfig)
    return (workload.model.served_name or workload.name,)


def image_named_model(workload: WorkloadBase) -> tuple[str, ...]:
    """A NIM's model is the image's own name, not known at synth: none."""
    return ()


def served_models(workload: WorkloadBase) -> tuple[str, ...]:
    """What clients put in ``model`` for this workload (its kind's
    :attr:`~inferstack.config.kinds.WorkloadKind.served_models`)."""
    return kind_of(workload).models_served(workload)


def endpoint_of(workload: WorkloadBase) -> Endpoint:
    """The workload's OpenAI-compatible endpoint — its router's Service when it has one (``routing``).
    :raises NoEndpointError: for kinds that serve none."""
    kind = kind_of(workload)
    if kind.endpoint is None:
        raise NoEndpointError(kind.no_endpoint)
    service = kind.endpoint
    router = router_name(workload)
    if router is not None:  # clients call the router, which picks a replica
        host = f"{router}.{workload.namespace}.svc.cluster.local"
        return Endpoint(
            api_base=f"http://{host}:{ROUTER_PORT}{service.path}",
            provider=service.provider,
            models=kind.models_served(workload),
        )
    host = f"{workload.name}{service.suffix}.{workload.namespace}.svc.cluster.local"
    base = f"http://{host}:{service.port}{service.path}" if service.port else f"http://{host}{service.path}"
    return Endpoint(api_base=base, provider=service.provider, models=kind.models_served(workload))
