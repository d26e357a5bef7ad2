"""Kind ``tgi``: Hugging Face Text Generation Inference (maintenance mode upstream), one pod per replica."""

from __future__ import annotations

from inferstack.catalog.images import IMAGE_FACTS
from inferstack.charts.tgi import TgiChart
from inferstack.config.kinds import KindEndpoint, WorkloadKind
from inferstack.config.tgi import TgiWorkloadConfig
from inferstack.plan.engines import plan_tgi
from inferstack.plan.runtime_paths import TGI_PORT, tgi_paths
from inferstack.rules import engines

KIND = WorkloadKind(
    name="tgi",
    summary=f"Hugging Face TGI {IMAGE_FACTS['tgi'].engine_version} (maintenance mode upstream), one pod per replica",
    config=TgiWorkloadConfig,
    plan=plan_tgi,
    chart=TgiChart,
    paths=tgi_paths,
    rules=(engines.RULES,),
    endpoint=KindEndpoint(port=TGI_PORT, path="/v1", provider="openai"),
    unchecked_flags=f"TGI {IMAGE_FACTS['tgi'].engine_version}",
    engine_image=lambda workload, accelerator: workload.image_for(),
    images=("tgi",),
    examples=("tgi.yaml",),
    hub_cache=True,
)
