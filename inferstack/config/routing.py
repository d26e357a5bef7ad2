"""``routing`` of a workload: a request router in front of its replicas that picks, for every request, the replica
with the shortest queue, the most free KV cache and the longest cached prefix of the prompt — the Gateway API
inference extension's endpoint picker (v1.5.0) with an Envoy proxy in one pod, the extension's ``standalone``
layout (no Gateway API implementation needed), and an ``InferencePool`` selecting the workload's serving pods.

Clients (and a LiteLLM gateway routing to the workload) call the router's Service ``<name>-router`` on port 8081;
the serving pods then admit only the router. For the kinds whose pods export the metrics the picker reads
(``vllm``, ``vllm_multinode``, ``sglang``: rule ROUTING-KIND).
"""

from __future__ import annotations

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from inferstack.config.base import StrictModel


class RoutingScorersConfig(StrictModel):
    """Weights of the picker's scorers (``schedulingProfiles`` of its ``EndpointPickerConfig``): each replica's score
    is the weighted sum; 0 leaves a scorer out. Defaults: the extension's chart (queue 2, KV cache 2, prefix 3)."""

    queue: int = Field(default=2, ge=0, le=100)
    """``queue-scorer``: fewer waiting requests score higher. Default 2."""
    kv_cache_utilization: int = Field(default=2, ge=0, le=100)
    """``kv-cache-utilization-scorer``: more free KV cache scores higher. Default 2."""
    prefix_cache: int = Field(default=3, ge=0, le=100)
    """``prefix-cache-scorer``: a replica that served the prompt's prefix recently (so holds its KV blocks) scores
    higher; the picker tracks prefixes it routed itself, sized from the engine's KV block metrics. Default 3."""

    @model_validator(mode="after")
    def _one_scorer(self) -> RoutingScorersConfig:
        if not (self.queue or self.kv_cache_utilization or self.prefix_cache):
            raise PydanticCustomError(
                "no_scorer",
                "every scorer weight is 0 — the picker would choose at random; give queue, kv_cache_utilization or "
                "prefix_cache a weight above 0",
                {"field": "prefix_cache"},
            )
        return self


class RoutingConfig(StrictModel):
    """The endpoint picker in front of the workload's replicas (on the system nodes, or ``pool``)."""

    pool: str | None = None
    """A CPU pool (``compute``: a Karpenter pool or node group without accelerators) the router pods run on — one
    that scales with them. Default: the system nodes, a fixed group shared with the cluster's controllers
    (ROUTING-SYSTEM-SHARE warns when the routers' total there passes half of it)."""
    scorers: RoutingScorersConfig = RoutingScorersConfig()
    """How replicas are scored. Default: queue 2, KV cache 2, prefix cache 3."""
    replicas: int = Field(default=1, ge=1, le=3)
    """Router pods. Above 1 they elect a leader (``--ha-enable-leader-election``): one picks, the others stand by
    unready and take over when it goes (the extension's recommended pattern keeps one active picker, whose prefix
    table is in memory). Default 1."""
    cpu: float = Field(default=2, ge=0.1, le=64)
    """vCPUs requested by the picker, 0.1–64 (no CPU limit, so scheduling bursts). Default 2 — it fits the default
    m6i.xlarge system nodes; the extension's chart requests 4 for high request rates. Envoy adds 0.1."""
    memory_gib: float = Field(default=4, ge=0.25, le=256)
    """Memory requested by the picker, GiB (0.25–256). Default 4 (the extension's chart: 8)."""
    memory_limit_gib: float | None = Field(default=None, ge=0.25, le=256)
    """The picker's memory limit, GiB, at least ``memory_gib``. Default twice ``memory_gib`` (the chart's 8 → 16)."""

    @model_validator(mode="after")
    def _limit_not_below_request(self) -> RoutingConfig:
        if self.memory_limit_gib is not None and self.memory_limit_gib < self.memory_gib:
            raise PydanticCustomError(
                "limit_below_request",
                "{limit} GiB is below memory_gib ({request} GiB) — the API server refuses a limit under the "
                "request; raise memory_limit_gib or leave it out (default: twice the request)",
                {"field": "memory_limit_gib", "limit": f"{self.memory_limit_gib:g}", "request": f"{self.memory_gib:g}"},
            )
        return self

    @property
    def memory_limit(self) -> float:
        """The memory limit, GiB (``memory_limit_gib``, else twice the request)."""
        return self.memory_limit_gib if self.memory_limit_gib is not None else 2 * self.memory_gib
