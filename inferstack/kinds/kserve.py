"""Kind ``kserve``: a KServe InferenceService (Hugging Face runtime, vLLM backend) — Standard, or Knative scale to
zero."""

from __future__ import annotations

from inferstack.charts.kserve import KServeChart
from inferstack.config.kinds import KindEndpoint, WorkloadKind, pinned_image
from inferstack.config.kserve import KServeWorkloadConfig
from inferstack.plan.endpoints import kserve_models
from inferstack.plan.kserve import plan_kserve
from inferstack.plan.runtime_paths import KSERVE_PORT, kserve_paths
from inferstack.rules import kserve, serving

KIND = WorkloadKind(
    name="kserve",
    summary="KServe InferenceService (Hugging Face runtime, vLLM backend): Standard, or Knative scale to zero",
    config=KServeWorkloadConfig,
    plan=plan_kserve,
    chart=KServeChart,
    paths=kserve_paths,
    rules=(serving.RULES, kserve.RULES),
    operators=("kserve",),
    # KServe makes <name>-predictor (app=isvc.<name>-predictor) on port 80 → the container's 8080
    endpoint=KindEndpoint(port=None, path="/openai/v1", provider="openai", suffix="-predictor"),
    operator_service_ports=(80, KSERVE_PORT),
    served_models=kserve_models,
    # KServe's Hugging Face server runs vLLM too, but which series reach its scrape endpoint is not confirmed (?):
    # no dashboards or alerts yet
    engine_image=pinned_image("kserve-huggingface"),
    images=("kserve-huggingface",),
    examples=("kserve-scale-to-zero.yaml",),
)
