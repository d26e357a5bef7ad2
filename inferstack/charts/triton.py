"""TritonChart: the ``triton`` kind — the workload's storage plumbing plus a Triton server (:class:`~inferstack.
constructs.triton.TritonServer`) whose generated vLLM-backend repository carries the typed engine settings and the
model source (mounted path, image path or Hugging Face id) as ``model.json``."""

from __future__ import annotations

from typing import Any

from cdk8s_plus_36 import k8s

from inferstack.charts.engine import engine_placement
from inferstack.charts.vllm import engine_args_for, engine_env_for
from inferstack.charts.workload import StorageRefs, WorkloadChart
from inferstack.config.triton import TritonWorkloadConfig
from inferstack.config.workloads import ModelSourceType
from inferstack.constructs.triton import TritonServer, TritonServerProps
from inferstack.plan import ResolvedWorkload


def model_json(workload: TritonWorkloadConfig, model: str) -> dict[str, Any]:
    """vLLM engine arguments of the typed settings, by name (what the vLLM backend passes to ``AsyncEngineArgs``),
    with the weights to load and engine statistics kept on (Triton's ``vllm:`` metrics need them)."""
    args: dict[str, Any] = {"model": model, **engine_args_for(workload.engine, workload.model).kwargs()}
    if workload.model.source.type is ModelSourceType.HF:
        args["revision"] = workload.model.revision
    args["served_model_name"] = workload.model.name
    args["disable_log_stats"] = False
    return args


class TritonChart(WorkloadChart):
    """The ``triton`` kind: storage plumbing, then the model repository and the Triton Deployment."""

    server: TritonServer

    def serve(self, resolved: ResolvedWorkload, refs: StorageRefs) -> None:
        workload = resolved.config
        assert isinstance(workload, TritonWorkloadConfig)
        loading = self.loading
        assert loading is not None
        engine_env = engine_env_for(workload.engine, workload.model)
        self.server = TritonServer(
            self,
            "triton",
            TritonServerProps(
                image=resolved.image,
                model_name=workload.name,
                engine_args=model_json(workload, loading.model),
                placement=engine_placement(self, resolved, refs),
                env=[*loading.env, *(k8s.EnvVar(name=k, value=v) for k, v in engine_env.items())],
            ),
        )
