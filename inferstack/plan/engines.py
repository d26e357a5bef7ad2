"""Plans of the single-node engines besides vLLM and Triton: ``sglang`` (TP GPUs per pod), ``tgi`` (``num_shard``
GPUs per pod) and ``ollama`` (``gpus`` GPUs or none; its models come from the Ollama registry, so the startup
budget does not depend on a bucket model: the pull runs before the probes start)."""

from __future__ import annotations

from collections.abc import Mapping

from inferstack.config.model import InferstackConfig
from inferstack.config.ollama import OllamaWorkloadConfig
from inferstack.config.sglang import SglangWorkloadConfig
from inferstack.config.tgi import TgiWorkloadConfig
from inferstack.config.workloads import WorkloadBase
from inferstack.plan import ResolvedPool, ResolvedWorkload, Role, server_role, workload_plan
from inferstack.plan.autoscaler import autoscaler_operators
from inferstack.plan.names import server_service_account
from inferstack.plan.placement import pod_plan

#: Ollama's start once its init container pulled the models: the server loads a model on the first request, seconds.
OLLAMA_START_SECONDS = 120


def plan_sglang(
    config: InferstackConfig, pools: Mapping[str, ResolvedPool], index: int, workload: WorkloadBase
) -> ResolvedWorkload:
    assert isinstance(workload, SglangWorkloadConfig)
    server = server_role(config, pools, workload, ranks=workload.ranks)
    image = workload.image_for()
    operators = autoscaler_operators(workload)
    return workload_plan(config, pools, index, workload, roles={"server": server}, image=image, operators=operators)


def plan_tgi(
    config: InferstackConfig, pools: Mapping[str, ResolvedPool], index: int, workload: WorkloadBase
) -> ResolvedWorkload:
    assert isinstance(workload, TgiWorkloadConfig)
    server = server_role(config, pools, workload, ranks=workload.ranks)
    operators = autoscaler_operators(workload)
    return workload_plan(
        config, pools, index, workload, roles={"server": server}, image=workload.image_for(), operators=operators
    )


def plan_ollama(
    config: InferstackConfig, pools: Mapping[str, ResolvedPool], index: int, workload: WorkloadBase
) -> ResolvedWorkload:
    assert isinstance(workload, OllamaWorkloadConfig)
    pod = pod_plan(config, workload, ranks=workload.gpus, startup_estimate_seconds=OLLAMA_START_SECONDS)
    server = Role(name="server", pod=pod, service_account=server_service_account(workload), reads_bucket=False)
    return workload_plan(config, pools, index, workload, roles={"server": server}, image=workload.image_for())
