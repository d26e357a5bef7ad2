"""Plan of the ``kserve`` kind: one ``server`` role (the predictor pod, ``tensor_parallel_size`` GPUs) and the cold
start of a predictor scaled to zero: a node, the runtime image and the model load."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.config.kserve import KServeWorkloadConfig
from inferstack.config.model import InferstackConfig
from inferstack.config.workloads import WorkloadBase
from inferstack.plan import ResolvedPool, ResolvedWorkload, server_role, workload_plan
from inferstack.plan.placement import STARTUP_SAFETY

#: A GPU node from nothing: Karpenter's launch, EC2 boot, kubelet join, the GPU device plugin ready, seconds.
NODE_START_SECONDS = 180
#: Pulling the runtime image (kserve/huggingfaceserver -gpu, ~10 GB) onto a new node, seconds (?).
IMAGE_PULL_SECONDS = 120


@dataclass(frozen=True)
class ColdStart:
    """What a request waits for when no replica runs, seconds (the model load without the probe's safety)."""

    node: int
    image: int
    model: int

    @property
    def total(self) -> int:
        return self.node + self.image + self.model


def cold_start(resolved: ResolvedWorkload) -> ColdStart:
    model = int(resolved.server.pod.estimated_startup_seconds / STARTUP_SAFETY)
    return ColdStart(node=NODE_START_SECONDS, image=IMAGE_PULL_SECONDS, model=model)


def plan_kserve(
    config: InferstackConfig, pools: Mapping[str, ResolvedPool], index: int, workload: WorkloadBase
) -> ResolvedWorkload:
    assert isinstance(workload, KServeWorkloadConfig)
    server = server_role(config, pools, workload, ranks=workload.ranks)
    return workload_plan(
        config, pools, index, workload, roles={"server": server}, image=ENGINE_IMAGES["kserve-huggingface"]
    )
