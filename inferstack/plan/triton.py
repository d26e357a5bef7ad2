"""Plan of the ``triton`` kind: one ``server`` role, a pod of TP × PP GPUs per replica (like ``vllm``)."""

from __future__ import annotations

from collections.abc import Mapping

from inferstack.config.model import InferstackConfig
from inferstack.config.triton import TritonWorkloadConfig
from inferstack.config.workloads import WorkloadBase
from inferstack.plan import ResolvedPool, ResolvedWorkload, server_role, workload_plan


def plan_triton(
    config: InferstackConfig, pools: Mapping[str, ResolvedPool], index: int, workload: WorkloadBase
) -> ResolvedWorkload:
    assert isinstance(workload, TritonWorkloadConfig)
    server = server_role(config, pools, workload, ranks=workload.ranks)
    return workload_plan(config, pools, index, workload, roles={"server": server}, image=workload.image_for())
