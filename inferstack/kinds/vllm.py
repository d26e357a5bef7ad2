"""Kind ``vllm``: vLLM, one server pod per replica (a Deployment), on GPUs or Neuron; optionally AIBrix LoRA
adapters."""

from __future__ import annotations

from inferstack.catalog.metrics import VLLM
from inferstack.charts.vllm import VllmChart
from inferstack.config.kinds import KindEndpoint, WorkloadKind
from inferstack.config.workloads import VllmWorkloadConfig
from inferstack.constructs.vllm import CACHE
from inferstack.plan.endpoints import vllm_models
from inferstack.plan.runtime_paths import VLLM_PORT, vllm_paths
from inferstack.plan.vllm import plan_vllm
from inferstack.rules import aibrix, engine_flags, serving

KIND = WorkloadKind(
    name="vllm",
    summary="vLLM, one server pod per replica (Deployment); optionally AIBrix LoRA adapters",
    config=VllmWorkloadConfig,
    plan=plan_vllm,
    chart=VllmChart,
    paths=vllm_paths,
    rules=(serving.RULES, engine_flags.RULES, aibrix.RULES),
    routing_engine="vllm",
    endpoint=KindEndpoint(port=VLLM_PORT, path="/v1", provider="hosted_vllm"),
    served_models=vllm_models,
    metrics=VLLM,
    engine_image=VllmWorkloadConfig.image,
    images=("vllm-gpu", "vllm-neuron"),
    examples=("vllm-gpu-tp4.yaml", "vllm-neuron-inf2.yaml", "aibrix-lora.yaml"),
    compile_cache=CACHE,
    hub_cache=True,
)
