"""A benchmark of a workload's endpoint (``vllm bench serve`` of the pinned vLLM image, random prompts)."""

from __future__ import annotations

from pydantic import Field

from inferstack.config.base import StrictModel


class BenchConfig(StrictModel):
    """The load ``python -m inferstack.cli bench NAME`` starts against the workload's Service: ``num_prompts``
    random prompts of ``input_tokens`` tokens asking for ``output_tokens`` each, at most ``concurrency`` in flight.
    Results (vLLM's result JSON: TTFT, TPOT, ITL, e2e latency percentiles, throughput) go to the model bucket under
    ``bench/<namespace>/<name>/<UTC time>/``."""

    model: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/@-]*$")
    """The model name each request asks for. Default: the workload's served name (required for NIM, whose name
    the image decides)."""
    concurrency: int = Field(default=16, ge=1, le=10_000)
    """``--max-concurrency``: requests in flight. Default 16."""
    input_tokens: int = Field(default=1024, ge=1, le=1_000_000)
    """``--random-input-len``, tokens. Default 1024."""
    output_tokens: int = Field(default=256, ge=1, le=1_000_000)
    """``--random-output-len``, tokens (``--ignore-eos``: every request generates them all). Default 256."""
    num_prompts: int = Field(default=200, ge=1, le=1_000_000)
    """``--num-prompts``. Default 200."""
    request_rate: float | None = Field(default=None, gt=0, le=100_000)
    """``--request-rate``, requests/s (Poisson arrivals). Default: all at once (``inf``), bounded by concurrency."""
    timeout_minutes: int = Field(default=60, ge=1, le=1440)
    """The Job's deadline. Default 60."""
