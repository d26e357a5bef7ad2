"""Kind ``litellm``: the LiteLLM proxy — one OpenAI-compatible gateway over the app's workloads and external
providers."""

from __future__ import annotations

from inferstack.charts.litellm import LiteLLMChart
from inferstack.config.kinds import WorkloadKind, pinned_image
from inferstack.config.litellm import LiteLLMWorkloadConfig
from inferstack.plan.litellm import plan_litellm
from inferstack.plan.runtime_paths import litellm_paths
from inferstack.rules import litellm

KIND = WorkloadKind(
    name="litellm",
    summary="LiteLLM proxy: one OpenAI-compatible gateway over the app's workloads and external providers",
    config=LiteLLMWorkloadConfig,
    plan=plan_litellm,
    chart=LiteLLMChart,
    paths=litellm_paths,
    rules=(litellm.RULES,),
    no_endpoint="a LiteLLM gateway routes to backends, and inferstack does not chain one gateway behind another",
    engine_image=pinned_image("litellm"),
    images=("litellm", "postgres"),
    examples=("litellm-gateway.yaml",),
)
