"""Kind ``nim``: NVIDIA NIM through the NIM operator — a NIMCache of the model's profiles and a NIMService."""

from __future__ import annotations

from inferstack.catalog.metrics import NIM
from inferstack.charts.nim import NimChart
from inferstack.config.kinds import KindEndpoint, WorkloadKind
from inferstack.config.nim import NimWorkloadConfig
from inferstack.plan.endpoints import image_named_model
from inferstack.plan.nim import plan_nim
from inferstack.plan.runtime_paths import NIM_PORT, nim_paths
from inferstack.rules import nim

KIND = WorkloadKind(
    name="nim",
    summary="NVIDIA NIM through the NIM operator: a NIMCache of the model's profiles and a NIMService",
    config=NimWorkloadConfig,
    plan=plan_nim,
    chart=NimChart,
    paths=nim_paths,
    rules=(nim.RULES,),
    operators=("nim", "model-cache"),
    # the NIM operator makes the Service named after the NIMService (app=<name>)
    endpoint=KindEndpoint(port=NIM_PORT, path="/v1", provider="openai"),
    operator_service_ports=(NIM_PORT,),
    served_models=image_named_model,
    metrics=NIM,
    engine_image=lambda workload, accelerator: workload.image.reference,
    examples=("nim-llama-70b.yaml",),
)
