"""``probes`` of a workload: the shape and timing of the probes inferstack renders on its serving containers.

What is tuned is what the kind renders: readiness, liveness and startup on the engine container of the shared
serving pod (vLLM, vLLM multi-node leaders, SGLang, TGI, Triton, Ollama, the LiteLLM proxy), a KServe predictor's
model container (readiness and startup), a NIMService's startup probe. Ray Serve's and Dynamo's pods are probed by
their operators, so those kinds refuse ``probes``. The startup probe's budget stays ``startup_timeout_seconds`` (or
the estimate): its period sets how often, and the failure threshold follows.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from inferstack.config.base import StrictModel
from inferstack.config.types import check_plain


class ProbeHandler(StrEnum):
    HTTP = "http"
    """``httpGet`` on the engine's health path (each kind's own). Default."""
    TCP = "tcp"
    """``tcpSocket`` on the same port: the port accepts connections (an engine whose health path is slow under load)."""
    EXEC = "exec"
    """``exec`` of ``command`` in the serving container: the probe passes when it exits 0. The program must be in
    the image (inferstack cannot look inside it offline). Its timeout is at least 5 s unless ``timeout_seconds`` says
    otherwise (a program has to start). On a Knative predictor the kubelet runs it and Knative's queue-proxy checks
    the port over TCP (knative/serving ``applyReadinessProbeDefaults``). A NIMService's readiness and liveness stay
    the operator's HTTP probes."""


class ProbeScheme(StrEnum):
    HTTP = "HTTP"
    """Default."""
    HTTPS = "HTTPS"
    """The engine serves TLS itself (e.g. vLLM's ``--ssl-keyfile`` in ``extra_args``)."""


class ProbeTiming(StrictModel):
    """Timing of one probe; unset fields keep inferstack's values (readiness every 10 s, 5 s timeout, 3 failures;
    liveness every 15 s, 5 s timeout, 4 failures)."""

    period_seconds: int | None = Field(default=None, ge=1, le=300)
    """How often, seconds."""
    timeout_seconds: int | None = Field(default=None, ge=1, le=120)
    """How long one attempt may take, seconds."""
    failure_threshold: int | None = Field(default=None, ge=1, le=100)
    """Failures in a row before the pod leaves the Service (readiness) or the container restarts (liveness)."""
    initial_delay_seconds: int | None = Field(default=None, ge=0, le=600)
    """Seconds after the container starts (after the startup probe, if any) before the first attempt."""

    @property
    def empty(self) -> bool:
        """Nothing set (inferstack's values stay)."""
        return all(getattr(self, name) is None for name in type(self).model_fields)


class StartupTiming(StrictModel):
    """The startup probe's period and timeout; its failure threshold follows from the startup budget
    (``startup_timeout_seconds``, or the estimate from model size and source) divided by the period."""

    period_seconds: int | None = Field(default=None, ge=1, le=300)
    """How often, seconds. Default 10."""
    timeout_seconds: int | None = Field(default=None, ge=1, le=120)
    """How long one attempt may take, seconds. Default 5."""

    @property
    def empty(self) -> bool:
        """Nothing set."""
        return self.period_seconds is None and self.timeout_seconds is None


class ProbesConfig(StrictModel):
    """Shape and timing of the serving containers' probes (module docstring: which kinds, which probes)."""

    handler: ProbeHandler = ProbeHandler.HTTP
    """``http`` (the engine's health path), ``tcp`` (its port accepts connections) or ``exec`` (``command``).
    Default ``http``."""
    command: tuple[str, ...] = Field(default=(), max_length=32)
    """With ``handler: exec``: the command, e.g. ``[python3, -c, "import urllib.request as u;
    u.urlopen('http://127.0.0.1:8000/health', timeout=4)"]`` (no shell unless you run one). Default none."""
    scheme: ProbeScheme = ProbeScheme.HTTP
    """``HTTPS`` when the engine serves TLS itself. Default ``HTTP``."""
    readiness: ProbeTiming = ProbeTiming()
    """The readiness probe's timing. Default inferstack's."""
    liveness: ProbeTiming = ProbeTiming()
    """The liveness probe's timing. Default inferstack's."""
    startup: StartupTiming = StartupTiming()
    """The startup probe's period and timeout. Default inferstack's."""

    @field_validator("command")
    @classmethod
    def _command(cls, command: tuple[str, ...]) -> tuple[str, ...]:
        for index, item in enumerate(command):
            check_plain(item, "a command item", subject=f"command[{index}] {item[:40]!r}: ")
            if not 1 <= len(item) <= 4096:
                raise PydanticCustomError(
                    "probe_command",
                    "command[{index}] has {length} characters — each item has 1-4,096",
                    {"index": index, "length": len(item)},
                )
        return command

    @model_validator(mode="after")
    def _shape(self) -> ProbesConfig:
        if self.handler is not ProbeHandler.HTTP and self.scheme is ProbeScheme.HTTPS:
            raise PydanticCustomError(
                "probe_scheme",
                "the {handler} handler sends no HTTP request: scheme HTTPS needs handler http",
                {"handler": self.handler.value, "field": "scheme"},
            )
        if self.handler is ProbeHandler.EXEC and not self.command:
            raise PydanticCustomError(
                "probe_command",
                'handler exec runs a command: give it, e.g. [python3, -c, "..."]',
                {"field": "command"},
            )
        if self.handler is not ProbeHandler.EXEC and self.command:
            raise PydanticCustomError(
                "probe_command",
                "command is what handler exec runs, and the handler is {handler} — set handler: exec or remove it",
                {"handler": self.handler.value, "field": "command"},
            )
        return self

    @property
    def empty(self) -> bool:
        """The default: inferstack's probes as they are."""
        return (
            self.handler is ProbeHandler.HTTP
            and self.scheme is ProbeScheme.HTTP
            and self.readiness.empty
            and self.liveness.empty
            and self.startup.empty
        )
