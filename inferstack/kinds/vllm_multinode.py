"""Kind ``vllm_multinode``: vLLM across nodes — a LeaderWorkerSet group per replica, the leader serves."""

from __future__ import annotations

from inferstack.catalog.metrics import VLLM
from inferstack.charts.vllm_multinode import VllmMultinodeChart
from inferstack.config.kinds import KindEndpoint, WorkloadKind
from inferstack.config.vllm_multinode import VllmMultinodeWorkloadConfig
from inferstack.plan.runtime_paths import VLLM_PORT, vllm_multinode_paths
from inferstack.plan.vllm import plan_vllm_multinode
from inferstack.rules import engine_flags, multinode, serving

KIND = WorkloadKind(
    name="vllm_multinode",
    summary="vLLM across nodes: a LeaderWorkerSet group per replica, the leader serves",
    config=VllmMultinodeWorkloadConfig,
    plan=plan_vllm_multinode,
    chart=VllmMultinodeChart,
    paths=vllm_multinode_paths,
    rules=(serving.RULES, engine_flags.RULES, multinode.RULES),
    operators=("lws",),
    routing_engine="vllm",
    endpoint=KindEndpoint(port=VLLM_PORT, path="/v1", provider="hosted_vllm"),
    metrics=VLLM,
    engine_image=VllmMultinodeWorkloadConfig.image,
    images=("vllm-gpu",),
    examples=("vllm-multinode-lws-p5.yaml",),
)
