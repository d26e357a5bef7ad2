"""Serving targets the alerts and dashboards hold each workload to (seed 001's production targets)."""

from __future__ import annotations

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from inferstack.config.base import StrictModel


class AlertTargets(StrictModel):
    """Thresholds of the PrometheusRule alerts and the dashboards' target lines. Defaults are seed 001's: TTFT
    < 500 ms, inter-token latency < 50 ms, GPU utilisation 80–95 %, KV cache < 90 %, queue < 100."""

    ttft_seconds: float = Field(default=0.5, gt=0, le=600)
    """p95 time to first token, seconds. Default 0.5."""
    inter_token_seconds: float = Field(default=0.05, gt=0, le=60)
    """p95 inter-token latency, seconds. Default 0.05."""
    kv_cache_max: float = Field(default=0.9, gt=0, le=1)
    """KV cache used, fraction. Default 0.9."""
    queue_max: int = Field(default=100, ge=1, le=1_000_000)
    """Requests waiting, per workload. Default 100."""
    gpu_utilization_min: float = Field(default=0.80, ge=0, le=1)
    """Below this the GPUs are under-used (30 min), fraction. Default 0.80."""
    gpu_utilization_max: float = Field(default=0.95, ge=0, le=1)
    """Above this the GPUs are saturated (15 min), fraction. Default 0.95."""

    @model_validator(mode="after")
    def _band(self) -> AlertTargets:
        if self.gpu_utilization_min >= self.gpu_utilization_max:
            raise PydanticCustomError(
                "gpu_band",
                "gpu_utilization_min {low} must be below gpu_utilization_max {high}",
                {"low": self.gpu_utilization_min, "high": self.gpu_utilization_max, "field": "gpu_utilization_min"},
            )
        return self
