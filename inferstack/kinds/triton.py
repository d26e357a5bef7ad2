"""Kind ``triton``: NVIDIA Triton with its vLLM backend (a generated model repository), one pod per replica."""

from __future__ import annotations

from inferstack.charts.triton import TritonChart
from inferstack.config.kinds import WorkloadKind
from inferstack.config.triton import TritonWorkloadConfig
from inferstack.plan.runtime_paths import triton_paths
from inferstack.plan.triton import plan_triton
from inferstack.rules import serving

KIND = WorkloadKind(
    name="triton",
    summary="NVIDIA Triton with its vLLM backend (a generated model repository), one pod per replica",
    config=TritonWorkloadConfig,
    plan=plan_triton,
    chart=TritonChart,
    paths=triton_paths,
    rules=(serving.RULES,),
    no_endpoint="Triton's vLLM backend serves the KServe v2 protocol (/v2/models/<name>/generate)",
    engine_image=lambda workload, accelerator: workload.image_for(),
    images=("triton-vllm",),
    examples=("triton-vllm.yaml",),
)
