"""Kind ``ollama``: Ollama (GGUF, dev/test, CPU or GPU) with its models on a persistent volume."""

from __future__ import annotations

from inferstack.charts.ollama import OllamaChart
from inferstack.config.kinds import KindEndpoint, WorkloadKind
from inferstack.config.ollama import OllamaWorkloadConfig
from inferstack.plan.endpoints import ollama_models
from inferstack.plan.engines import plan_ollama
from inferstack.plan.runtime_paths import OLLAMA_PORT, ollama_paths
from inferstack.rules import engines

KIND = WorkloadKind(
    name="ollama",
    summary="Ollama (GGUF, dev/test, CPU or GPU) with its models on a persistent volume",
    config=OllamaWorkloadConfig,
    plan=plan_ollama,
    chart=OllamaChart,
    paths=ollama_paths,
    rules=(engines.RULES,),
    operators=("model-cache",),
    # Ollama's own API at the root (LiteLLM's ollama_chat provider), not /v1
    endpoint=KindEndpoint(port=OLLAMA_PORT, path="", provider="ollama_chat"),
    served_models=ollama_models,
    scrapeable=False,  # Ollama 0.32: no /metrics route
    engine_image=lambda workload, accelerator: workload.image_for(),
    images=("ollama",),
    examples=("ollama-cpu.yaml",),
)
