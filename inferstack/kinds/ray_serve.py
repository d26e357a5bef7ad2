"""Kind ``ray_serve``: Ray Serve LLM on a KubeRay RayService — several models, or prefill/decode over NIXL."""

from __future__ import annotations

from inferstack.catalog.metrics import RAY_VLLM
from inferstack.charts.ray_serve import RayServeChart
from inferstack.config.kinds import KindEndpoint, WorkloadKind
from inferstack.config.ray_serve import RayServeWorkloadConfig
from inferstack.plan.endpoints import ray_serve_models
from inferstack.plan.ray_serve import plan_ray_serve, ray_image
from inferstack.plan.runtime_paths import RAY_SERVE, ray_serve_paths
from inferstack.rules import ray_serve

KIND = WorkloadKind(
    name="ray_serve",
    summary="Ray Serve LLM on a KubeRay RayService: several models, or prefill/decode over NIXL",
    config=RayServeWorkloadConfig,
    plan=plan_ray_serve,
    chart=RayServeChart,
    paths=ray_serve_paths,
    rules=(ray_serve.RULES,),
    operators=("kuberay",),
    # KubeRay v1.7.0 makes <name>-serve-svc, selecting ray.io/cluster + ray.io/serve: the Serve proxy's port
    endpoint=KindEndpoint(port=RAY_SERVE, path="/v1", provider="openai", suffix="-serve-svc"),
    operator_service_ports=(RAY_SERVE,),
    served_models=ray_serve_models,
    metrics=RAY_VLLM,
    engine_image=ray_image,
    images=("ray-llm", "ray-llm-efa"),
    examples=("ray-llm-multi-model.yaml", "ray-pd-efa-p5.yaml"),
)
