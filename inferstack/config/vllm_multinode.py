"""Kind ``vllm_multinode``: one vLLM replica spanning several nodes on a LeaderWorkerSet (a leader that serves HTTP
and runs the Ray head, ``nodes - 1`` workers that join it), for models no single node holds — e.g. Llama-3.1-405B
as TP 8 × PP 2 on two p5.48xlarge."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from inferstack.config.workloads import VllmWorkloadConfig


class VllmMultinodeWorkloadConfig(VllmWorkloadConfig):
    """One model served by vLLM across ``nodes`` nodes per replica: tensor parallelism inside a node × pipeline
    parallelism across nodes (``tensor_parallel_size`` = GPUs per node, ``pipeline_parallel_size`` = ``nodes``), or
    tensor parallelism across nodes. Each pod holds ``TP × PP / nodes`` ranks; vLLM's Ray executor spans the group."""

    kind: Literal["vllm_multinode"] = "vllm_multinode"  # type: ignore[assignment]
    """``vllm_multinode``: a LeaderWorkerSet group of ``nodes`` pods (one per node) per replica."""
    nodes_per_replica: int = Field(default=2, ge=2, le=64, alias="nodes")
    """Nodes (pods) one replica spans: the LeaderWorkerSet ``size``. Default 2."""

    @property
    def nodes(self) -> int:
        return self.nodes_per_replica

    @model_validator(mode="after")
    def _split(self) -> VllmMultinodeWorkloadConfig:
        ranks = self.engine.tensor_parallel_size * self.engine.pipeline_parallel_size
        if ranks % self.nodes_per_replica:
            raise PydanticCustomError(
                "multinode_split",
                "{nodes} nodes cannot share tensor_parallel_size × pipeline_parallel_size = {ranks} ranks evenly — "
                "use a node count that divides {ranks} (e.g. pipeline_parallel_size = nodes)",
                {"nodes": self.nodes_per_replica, "ranks": ranks, "field": "nodes"},
            )
        if self.autoscaling is not None:
            raise PydanticCustomError(
                "multinode_autoscaling",
                "vllm_multinode does not autoscale (a replica is a whole LeaderWorkerSet group of nodes) — remove "
                "autoscaling and set replicas",
                {"field": "autoscaling"},
            )
        return self
