"""Kind ``vllm_multinode``: one vLLM replica spanning several nodes on a LeaderWorkerSet (a leader that serves HTTP
(vLLM node rank 0), ``nodes - 1`` headless workers that join it), for models no single node holds — e.g. Llama-3.1-405B
as TP 8 × PP 2 on two p5.48xlarge."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from inferstack.config.workloads import VllmWorkloadConfig

#: Longest name of a multi-node workload: LWS ``<name>-group`` (+6), worker StatefulSet ``-<group index>`` and the
#: revision hash ``-<10>`` within 63 for up to 100,000 replicas.
MAX_NAME_LENGTH = 40


class VllmMultinodeWorkloadConfig(VllmWorkloadConfig):
    """One model served by vLLM across ``nodes`` nodes per replica: tensor parallelism inside a node × pipeline
    parallelism across nodes (``tensor_parallel_size`` = GPUs per node, ``pipeline_parallel_size`` = ``nodes``), or
    tensor parallelism across nodes. Each pod holds ``TP × PP / nodes`` ranks; vLLM's multiprocessing executor spans the
    group (``--nnodes``; no Ray)."""

    kind: Literal["vllm_multinode"] = "vllm_multinode"  # type: ignore[assignment]
    """``vllm_multinode``: a LeaderWorkerSet group of ``nodes`` pods (one per node) per replica."""
    nodes_per_replica: int = Field(default=2, ge=2, le=64, alias="nodes")
    """Nodes (pods) one replica spans: the LeaderWorkerSet ``size``. Default 2."""

    @property
    def nodes(self) -> int:
        return self.nodes_per_replica

    @field_validator("name")
    @classmethod
    def _name_length(cls, value: str) -> str:
        if len(value) > MAX_NAME_LENGTH:
            raise PydanticCustomError(
                "multinode_name",
                "{length} characters — a vllm_multinode name has at most {max}: LeaderWorkerSet '<name>-group' and "
                "the names LWS derives from it (worker StatefulSets '<lws>-<group>', their pods' revision hash "
                "'<statefulset>-<10 characters>') must stay within 63",
                {"length": len(value), "max": MAX_NAME_LENGTH},
            )
        return value

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
        if self.aibrix is not None:
            raise PydanticCustomError(
                "multinode_aibrix",
                "AIBrix LoRA runs on single-node vLLM Deployments — use kind vllm",
                {"field": "aibrix"},
            )
        if self.autoscaling is not None:
            raise PydanticCustomError(
                "multinode_autoscaling",
                "vllm_multinode does not autoscale (a replica is a whole LeaderWorkerSet group of nodes) — remove "
                "autoscaling and set replicas",
                {"field": "autoscaling"},
            )
        return self
