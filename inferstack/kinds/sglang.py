"""Kind ``sglang``: SGLang (RadixAttention, structured output), one pod per replica."""

from __future__ import annotations

from inferstack.catalog.images import IMAGE_FACTS
from inferstack.charts.sglang import SGLANG_CACHE_ROOT, SglangChart
from inferstack.config.kinds import KindEndpoint, WorkloadKind
from inferstack.config.sglang import SglangWorkloadConfig
from inferstack.plan.engines import plan_sglang
from inferstack.plan.runtime_paths import SGLANG_PORT, sglang_paths
from inferstack.rules import engines, sglang_admin

KIND = WorkloadKind(
    name="sglang",
    summary="SGLang (RadixAttention, structured output), one pod per replica",
    config=SglangWorkloadConfig,
    plan=plan_sglang,
    chart=SglangChart,
    paths=sglang_paths,
    rules=(engines.RULES, sglang_admin.RULES),
    routing_engine="sglang",
    endpoint=KindEndpoint(port=SGLANG_PORT, path="/v1", provider="openai"),
    unchecked_flags=f"SGLang {IMAGE_FACTS['sglang'].engine_version}",
    engine_image=lambda workload, accelerator: workload.image_for(),
    images=("sglang",),
    examples=("sglang-structured.yaml", "litellm-gateway.yaml"),
    compile_cache=SGLANG_CACHE_ROOT,
    hub_cache=True,
)
