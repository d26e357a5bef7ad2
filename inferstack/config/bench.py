"""A benchmark of a workload's endpoint (``vllm bench serve`` of the pinned vLLM image, random prompts)."""

from __future__ import annotations

import math

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from inferstack.config.base import StrictModel

#: Longest ``timeout_minutes``.
MAX_TIMEOUT_MINUTES = 1440


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
    timeout_minutes: int = Field(default=60, ge=1, le=MAX_TIMEOUT_MINUTES)
    """The Job's deadline. Default 60."""

    @model_validator(mode="after")
    def _runnable(self) -> BenchConfig:
        """A load that can finish: ``--request-rate`` spaces the ``--num-prompts`` arrivals (Poisson: on average
        1/rate apart), so sending them all takes num_prompts / rate seconds before the last answer; past the Job's
        ``activeDeadlineSeconds`` the pod is stopped and no result is uploaded. And ``--max-concurrency`` ("how many
        [requests] are actually allowed to execute at a time", vLLM 0.31.0's help) above ``--num-prompts`` is a bound
        never reached, while the result JSON records it as the run's ``max_concurrency``
        (scripts/upstream/engines/vllm-0.31.0-bench-serve-notes.md). Only a concurrency the config sets is judged:
        the default one with a short run is no claim of the user's."""
        deadline = self.timeout_minutes * 60
        if self.request_rate is not None and self.num_prompts / self.request_rate >= deadline:
            sending = self.num_prompts / self.request_rate
            minutes = math.floor(sending / 60) + 1  # the shortest deadline past the sending
            most = math.ceil(self.request_rate * deadline) - 1  # the most prompts sent before the deadline
            if most / self.request_rate >= deadline:
                most -= 1
            longer = f", or raise timeout_minutes to at least {minutes}" if minutes <= MAX_TIMEOUT_MINUTES else ""
            raise PydanticCustomError(
                "bench_deadline",
                "{prompts} prompts at {rate} requests/s take about {sending} s to send, past the Job's deadline of "
                "{deadline} s (timeout_minutes {minutes}): it is stopped before the last request and uploads no "
                "result — raise request_rate to at least {needed}, send at most {most} prompts{longer}",
                {
                    "prompts": self.num_prompts,
                    "rate": f"{self.request_rate:g}",
                    "sending": f"{sending:,.0f}",
                    "deadline": f"{deadline:,}",
                    "minutes": self.timeout_minutes,
                    "needed": f"{math.ceil(self.num_prompts / deadline * 1000 + 1e-9) / 1000:g}",
                    "most": max(1, most),
                    "longer": longer,
                    "field": "request_rate",
                },
            )
        if "concurrency" in self.model_fields_set and self.concurrency > self.num_prompts:
            raise PydanticCustomError(
                "bench_concurrency",
                "{concurrency} is above num_prompts {prompts}: at most {prompts} requests are ever in flight, while "
                "the result records a concurrency of {concurrency} — set concurrency to at most {prompts}, or "
                "num_prompts to at least {concurrency}",
                {"concurrency": self.concurrency, "prompts": self.num_prompts, "field": "concurrency"},
            )
        return self
