"""Where each workload answers OpenAI-compatible requests: the Service URL (cluster DNS), the LiteLLM provider prefix
and the model name it serves — what a gateway routes to. One place, so a gateway's backends equal the Services the
charts create."""

from __future__ import annotations

from dataclasses import dataclass

from inferstack.config.nim import NimWorkloadConfig
from inferstack.config.ollama import OllamaWorkloadConfig
from inferstack.config.ray_serve import RayServeWorkloadConfig
from inferstack.config.workloads import SingleModelWorkload, VllmWorkloadConfig, WorkloadBase


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


#: kind → (Service name suffix, port, path, LiteLLM provider).
_SERVICES: dict[str, tuple[str, int | None, str, str]] = {
    "vllm": ("", 8000, "/v1", "hosted_vllm"),
    "vllm_multinode": ("", 8000, "/v1", "hosted_vllm"),
    "ray_serve": ("-serve-svc", 8000, "/v1", "openai"),
    "sglang": ("", 30000, "/v1", "openai"),
    "tgi": ("", 8080, "/v1", "openai"),
    "ollama": ("", 11434, "", "ollama_chat"),
    "nim": ("", 8000, "/v1", "openai"),
    "dynamo": ("-frontend", 8000, "/v1", "openai"),
    "kserve": ("-predictor", None, "/openai/v1", "openai"),
}
#: Kinds that answer no OpenAI-compatible request, with what they speak instead.
NOT_OPENAI = {"triton": "Triton's vLLM backend serves the KServe v2 protocol (/v2/models/<name>/generate)"}


def served_models(workload: WorkloadBase) -> tuple[str, ...]:
    """What clients put in ``model`` for this workload: the served names (Ollama's tags; a NIM's model is the image's
    own name, not known here — empty)."""
    if isinstance(workload, OllamaWorkloadConfig):
        return workload.models
    if isinstance(workload, RayServeWorkloadConfig):
        return tuple(m.model.name for m in workload.models)
    if isinstance(workload, NimWorkloadConfig):
        return ()
    if isinstance(workload, VllmWorkloadConfig) and workload.aibrix is not None:
        # AIBrix serves the base model as the workload's name, and each adapter by its own
        return (workload.name, *(a.name for a in workload.aibrix.adapters))
    if workload.kind == "kserve":
        assert isinstance(workload, SingleModelWorkload)
        return (workload.model.served_name or workload.name,)
    if isinstance(workload, SingleModelWorkload):
        return (workload.model.name,)
    return ()


def endpoint_of(workload: WorkloadBase) -> Endpoint:
    """The workload's OpenAI-compatible endpoint. :raises NoEndpointError: for kinds that serve none."""
    if workload.kind in NOT_OPENAI:
        raise NoEndpointError(NOT_OPENAI[workload.kind])
    if workload.kind not in _SERVICES:
        raise NoEndpointError(f"kind {workload.kind} serves no OpenAI-compatible API inferstack knows of")
    suffix, port, path, provider = _SERVICES[workload.kind]
    host = f"{workload.name}{suffix}.{workload.namespace}.svc.cluster.local"
    base = f"http://{host}:{port}{path}" if port else f"http://{host}{path}"
    return Endpoint(api_base=base, provider=provider, models=served_models(workload))
