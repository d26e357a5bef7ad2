"""Plan of the ``nim`` kind: one ``server`` role — a NIMService pod of ``gpus`` GPUs on the workload's pool, its
ServiceAccount the operator's (named after the NIMService) — and a startup budget for loading the cached profile."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.model import InferstackConfig
from inferstack.config.nim import NimWorkloadConfig
from inferstack.config.workloads import WorkloadBase
from inferstack.plan import ResolvedPool, ResolvedWorkload, Role, workload_plan
from inferstack.plan.placement import ENGINE_START_SECONDS, STARTUP_SAFETY, pod_plan

#: Read rate of a profile from the cache volume, GiB/s: half the ``inferstack-model-cache`` class's 1,000 MiB/s.
CACHE_READ_GIB_PER_SECOND = 0.5
#: NIM's own start besides reading the profile (TensorRT-LLM engine load, warm-up), seconds: NIM's default startup
#: probe allows 30 s + 120 × 10 s (nimservice_types.go, operator 3.0); a warm start of a small model takes minutes (?).
NIM_START_SECONDS = 300
#: The budget is never below NIM's own default (~20.5 minutes).
NIM_DEFAULT_STARTUP_SECONDS = 30 + 120 * 10


def nim_startup_seconds(workload: NimWorkloadConfig) -> int:
    """Estimated seconds from container start to ready: the profile's weights read from the cache (16-bit, or
    8-bit for an fp8 profile) plus NIM's start, × the safety factor, in whole minutes — at least NIM's default."""
    precision = workload.cache.profile.precision
    bytes_per_param = 1 if precision is not None and precision.value == "fp8" else 2
    weights_gib = workload.model.arch.params * bytes_per_param / 2**30
    load = weights_gib / CACHE_READ_GIB_PER_SECOND
    start = max(NIM_START_SECONDS, ENGINE_START_SECONDS[AcceleratorKind.NVIDIA])
    estimate = int(math.ceil((load + start) * STARTUP_SAFETY / 60) * 60)
    return max(estimate, NIM_DEFAULT_STARTUP_SECONDS)


def plan_nim(
    config: InferstackConfig, pools: Mapping[str, ResolvedPool], index: int, workload: WorkloadBase
) -> ResolvedWorkload:
    assert isinstance(workload, NimWorkloadConfig)
    pod = pod_plan(config, workload, ranks=workload.gpus, model=workload.model)
    estimate = nim_startup_seconds(workload)
    pod = dataclasses.replace(
        pod, estimated_startup_seconds=estimate, startup_seconds=workload.startup_timeout_seconds or estimate
    )
    server = Role(
        name="server",
        pod=pod,
        service_account=workload.name,  # GetServiceAccountName: the NIMService's name (operator 3.0)
        reads_bucket=False,
        creates_service_account=False,
    )
    return workload_plan(config, pools, index, workload, roles={"server": server}, image=workload.image.reference)
