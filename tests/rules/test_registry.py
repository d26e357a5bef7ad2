"""The rule registry as a whole, through ``evaluate`` (what ``inferstack check`` runs): every registered rule has a
non-compliant and a compliant config that differ in (ideally) one field, the non-compliant one trips the rule with a
finding that names a real config path and a fix, the compliant one does not, acknowledging the rule moves its
findings aside, and taking the rule out of the registry makes its findings disappear.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from pydantic import BaseModel

from inferstack import cli
from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.config import InferstackConfig, parse_config
from inferstack.rules import RULES, Finding, RuleReport, Severity, evaluate

#: A second workload whose model is written under the prefix of BASE's Qwen3-8B (PREFIX-OVERLAP).
MODEL_ON_QWENS_PREFIX = {
    "name": "llama",
    "pool": "gpu",
    "model": {
        "id": "meta-llama/Llama-3.2-1B-Instruct",
        "hf_token_secret": {"name": "hf-token"},
        "source": {"prefix": "models/Qwen/Qwen3-8B/main/"},
    },
}
#: Bottlerocket user data that hands devices to the pods' user.
TOML_DEVICE_OWNERSHIP = "[settings.kubernetes]\ndevice-ownership-from-security-context = true\n"
#: A small realistic platform (cf. inferstack.yaml, examples/gpu-mixed.yaml): a CPU pool, an L40S pool of a 1-GPU
#: and a 4-GPU type, an Inferentia2 pool, and Qwen3-8B (ungated, 32 heads, ~15 GiB) streamed from S3 on the L40S pool.
#: Every rule passes on it.
BASE: dict[str, Any] = {
    "compute": {
        "karpenter_pools": [
            {"name": "general", "instance_families": ["m7i"]},
            {"name": "gpu", "instance_types": ["g6e.2xlarge", "g6e.12xlarge"]},
            {"name": "inf2", "instance_types": ["inf2.24xlarge"]},
        ]
    },
    "workloads": [{"name": "qwen", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}}],
}
GPU_POOL = 1  # index of the "gpu" pool in BASE's karpenter_pools
#: A persistent cache on inferstack's EBS class, and one on a ReadWriteMany class of the user's (EFS).
CACHE = {"size_gib": 64}
SHARED_CACHE = {"size_gib": 64, "storage_class": "efs-sc", "access_mode": "ReadWriteMany"}
HF_QWEN = {"id": "Qwen/Qwen3-8B", "source": {"type": "hf"}}
#: A file system the user runs (storage.fsx.existing).
EXISTING = {
    "file_system_id": "fs-0123456789abcdef0",
    "dns_name": "fs-0123456789abcdef0.fsx.us-west-2.amazonaws.com",
    "mount_name": "abcdefgh",
    "security_group_id": "sg-0123456789abcdef0",
}

P5_EFA_GROUP = {"name": "p5", "instance_type": "p5.48xlarge", "efa": True, "availability_zone": 0}
CAPACITY_BLOCK_GROUP = {
    **P5_EFA_GROUP,
    "capacity_type": "capacity_block",
    "capacity_reservation_id": "cr-0123456789abcdef0",
}
LLAMA_1B = {"id": "meta-llama/Llama-3.2-1B-Instruct", "hf_token_secret": {"name": "hf-token"}}
LLAMA_70B = {"id": "meta-llama/Llama-3.1-70B-Instruct", "hf_token_secret": {"name": "hf-token"}}
#: 2 NeuronCores = 1 Inferentia2 device; 8 sequences: Neuron compiles the KV cache in for max_num_seqs × max_model_len
#: (vLLM's default 256 × 8192 would be 128 GiB per core for Llama-3.1-8B — MODEL-FIT).
ON_INF2 = {"pool": "inf2", "engine": {"tensor_parallel_size": 2, "max_num_seqs": 8}}
FROM_FSX = {"model": {"source": {"type": "fsx"}}}
#: Llama-3.1-70B as one replica over two g6e.12xlarge (4 L40S each): TP 4 per node × PP 2 across the nodes.
MULTINODE = {
    "kind": "vllm_multinode",
    "nodes": 2,
    "model": LLAMA_70B,
    "engine": {"tensor_parallel_size": 4, "pipeline_parallel_size": 2},
}
#: The same on two p5.48xlarge (the EFA node group P5_EFA_GROUP, max_size 2) with EFA.
MULTINODE_P5 = {
    **MULTINODE,
    "pool": "p5",
    "efa": True,
    "engine": {"tensor_parallel_size": 8, "pipeline_parallel_size": 2},
}
#: Qwen3-8B as a Ray Serve LLM app on the L40S pool (mounted from the bucket).
RAY = {
    "kind": "ray_serve",
    "models": [{"model": {"id": "Qwen/Qwen3-8B", "source": {"type": "s3_mount"}}}],
}
#: Llama-3.1-70B disaggregated on the p5 EFA node group.
RAY_PD = {
    "kind": "ray_serve",
    "pool": "p5",
    "efa": True,
    "models": [{"model": {**LLAMA_70B, "source": {"type": "s3_mount"}}}],
    "prefill_decode": {
        "prefill": {"engine": {"tensor_parallel_size": 8}},
        "decode": {"engine": {"tensor_parallel_size": 8}},
    },
    "upgrade_strategy": "None",  # two p5 nodes cannot hold a second cluster (RAY-UPGRADE-CAPACITY)
}
#: Qwen3-8B as a NIM on the L40S pool (its Secrets named).
NIM = {
    "kind": "nim",
    "model": {"id": "Qwen/Qwen3-8B"},
    "image": {"repository": "nvcr.io/nim/qwen/qwen3-8b", "tag": "1.0.0"},
    "ngc": {"api_key_secret": "ngc-api-secret", "pull_secret": "ngc-secret"},
}
#: Llama-3.1-70B on Dynamo, prefill and decode disaggregated on the p5 EFA node group.
DYNAMO_PD = {
    "kind": "dynamo",
    "pool": "p5",
    "efa": True,
    "mode": "disaggregated",
    "model": {**LLAMA_70B, "source": {"type": "s3_mount"}},
    "prefill": {"engine": {"tensor_parallel_size": 8}},
    "decode": {"engine": {"tensor_parallel_size": 8}},
}
#: Qwen3-8B on KServe in Knative mode, scaled to zero, on the L40S pool (Knative declared).
KSERVE = {
    "kind": "kserve",
    "deployment_mode": "Knative",
    "sync_model": False,
    "model": {"id": "Qwen/Qwen3-8B", "source": {"type": "s3_mount"}},
    "scaling": {"min_replicas": 0, "max_replicas": 2},
}
KNATIVE = {"cluster": {"knative_serving": {"podspec_features_enabled": True}}}
#: A vLLM image with the EFA stack (libfabric + aws-ofi-nccl), built by the user.
EFA_IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm-efa:v0.19.0"
UPSTREAM_IMAGE = "vllm/vllm-openai:v0.31.0"
#: Rules whose findings are warnings (printed, synth goes on); every other rule's findings here are errors.
WARNING_RULES = frozenset(
    {
        "CACHE-ZONE",
        "RAY-SPANNING-ZONE",
        "RAY-SPANNING-EFA",
        "ENGINE-FLAGS-UNVERIFIED",
        "FSX-EXISTING-SYNC",
        "KARPENTER-CUSTOM-AMI",
        "BOTTLEROCKET-GPU-METRICS",
        "BOTTLEROCKET-NEURON-DEVICES",
        "MULTINODE-ZONE",
        "MULTINODE-EFA",
        "MULTINODE-EFA-IMAGE",
        "RAY-UPGRADE-CAPACITY",
        "KSERVE-REQUEST-TIMEOUT",
        "KSERVE-SYNC-WAIT",
        "OLLAMA-CPU-ON-GPU",
        "CHECKLIST-MONITORING",
        "CHECKLIST-LOGS",
        "CHECKLIST-NETWORK-POLICY",
        "NETWORK-GATEWAY-CLIENTS",
        "SGLANG-ADMIN",
        "ROUTING-PREFIX-CACHE",
        "ROUTING-ONE-REPLICA",
        "ROUTING-SYSTEM-SHARE",
    }
)
#: Rules a case trips besides its own because the two check the same quantity: TP × PP beyond a node's accelerators
#: is also a pod asking for more devices than any node of its pool has; a P/D pool spanning zones is an EFA pool
#: spanning zones.
ALSO_TRIPS: dict[str, tuple[str, ...]] = {
    "PARALLEL-NODE": ("SCHEDULING",),
    "RAY-PD-ZONE": ("EFA-AZ",),
    "DYNAMO-PD-ZONE": ("EFA-AZ",),
    "AUTOSCALING-METRICS": ("CHECKLIST-MONITORING",),  # scaling on metrics nobody scrapes
    # without EFA the Dynamo runtime is the build without libfabric, which NIXL's LIBFABRIC backend needs
    "DYNAMO-PD-EFA": ("IMAGE-NIXL-LIBFABRIC",),
    # a multi-node vLLM on a CPU pool: no GPUs for NCCL, and the CUDA image cannot run there either
    "MULTINODE-ACCELERATOR": ("IMAGE-ACCELERATOR",),
}


def merge(base: Any, override: Any) -> Any:
    """``override`` deep-merged into a copy of ``base``. Dicts merge by key; a dict with int keys patches the
    elements of a list (``{"workloads": {0: {"pool": "inf2"}}}``); anything else replaces."""
    if isinstance(override, dict) and isinstance(base, list):
        assert all(isinstance(k, int) for k in override), override
        patched = copy.deepcopy(base)
        for index, value in override.items():
            patched[index] = merge(patched[index], value)
        return patched
    if isinstance(override, dict) and isinstance(base, dict):
        merged = copy.deepcopy(base)
        for key, value in override.items():
            merged[key] = merge(merged[key], value) if key in merged else copy.deepcopy(value)
        return merged
    return copy.deepcopy(override)


def workload(**fields: Any) -> dict:
    """An override of the first workload."""
    return {"workloads": {0: fields}}


def only_workload(**fields: Any) -> dict:
    """BASE's workloads replaced by one workload ``chat`` on the L40S pool with ``fields``."""
    return {"workloads": [{"name": "chat", "pool": "gpu", **fields}]}


def behind_a_gateway(**fields: Any) -> dict:
    """:func:`only_workload` with a LiteLLM gateway in front (a route to ``chat``): clients reach it only there."""
    gateway = {
        "kind": "litellm",
        "name": "gateway",
        "pool": "general",
        "master_key_secret": {"name": "litellm"},
        "routes": [{"name": "chat", "backends": [{"workload": "chat"}]}],
    }
    return {"workloads": [{"name": "chat", "pool": "gpu", **fields}, gateway]}


def gpu_pool(**fields: Any) -> dict:
    """An override of the L40S Karpenter pool."""
    return {"compute": {"karpenter_pools": {GPU_POOL: fields}}}


def node_group(**fields: Any) -> dict:
    """An override of the first managed node group (present only where the case's shared part adds one)."""
    return {"compute": {"node_groups": {0: fields}}}


def case(shared: dict, bad: dict, good: dict) -> tuple[dict, dict]:
    """(non-compliant, compliant): BASE with ``shared``, then ``bad`` or ``good`` (the difference the rule is about)."""
    common = merge(BASE, shared)
    return merge(common, bad), merge(common, good)


CASES: dict[str, tuple[dict, dict]] = {
    # cluster
    "EKS-ENDPOINT": case(
        {"cluster": {"endpoint_access": "public_and_private"}},
        {"cluster": {"public_access_cidrs": ["0.0.0.0/0"]}},
        {"cluster": {"public_access_cidrs": ["203.0.113.0/24"]}},
    ),
    "EKS-LOGS": case(
        {},
        {"cluster": {"control_plane_logs": ["api", "audit", "authenticator", "controllerManager"]}},
        {"cluster": {"control_plane_logs": ["api", "audit", "authenticator", "controllerManager", "scheduler"]}},
    ),
    # compute
    "EFA-UNSUPPORTED": case(
        {"compute": {"node_groups": [P5_EFA_GROUP]}},
        node_group(instance_type="g6e.2xlarge"),
        node_group(instance_type="g6e.12xlarge"),
    ),
    "EFA-AZ": case(
        {"compute": {"node_groups": [{k: v for k, v in P5_EFA_GROUP.items() if k != "availability_zone"}]}},
        {},
        node_group(availability_zone=0),
    ),
    "EFA-ONE-TYPE": case(
        gpu_pool(efa=True, availability_zone=0),
        gpu_pool(instance_types=["g6e.12xlarge", "g6e.24xlarge"]),
        gpu_pool(instance_types=["g6e.12xlarge"]),
    ),
    "PLACEMENT-CAPACITY-BLOCK": case(
        {"compute": {"node_groups": [CAPACITY_BLOCK_GROUP]}},
        node_group(placement_group=True),
        node_group(placement_group=False),
    ),
    "AMI-ACCELERATOR": case(
        {"compute": {"node_groups": [P5_EFA_GROUP]}},
        node_group(ami="al2023_neuron"),
        node_group(ami="al2023_nvidia"),
    ),
    "NODE-DAEMON-TAINTS": case(
        gpu_pool(taints=[{"key": "dedicated", "value": "llm"}]),
        {},
        {"compute": {"gpu_operator": {"extra_tolerations": [{"key": "dedicated"}]}}},
    ),
    "PLACEMENT-ZONE": case(
        gpu_pool(placement_group=True),
        {},
        gpu_pool(availability_zone=0),
    ),
    "RESOURCE-LIMITS": case(
        {},
        workload(resources={"memory_limit_gib": 2}),  # below the memory request derived from the L40S node
        workload(resources={"memory_limit_gib": 256}),
    ),
    "KARPENTER-INSTANCE-STORE": case(
        {},
        {"compute": {"karpenter_pools": {0: {"instance_store_policy": "RAID0"}}}},  # m7i: no instance store
        gpu_pool(instance_store_policy="RAID0"),  # g6e: NVMe on every size
    ),
    "KV-EVENTS-PORT": case(
        {"workloads": {0: {"engine": {"extra_args": ["--kv-events-config", '{"enable_kv_cache_events": true}']}}}},
        {},
        workload(pod={"ports": [{"name": "kv-events", "port": 5557}]}),
    ),
    "POD-PORTS": case(
        {},
        workload(pod={"ports": [{"name": "metrics2", "port": 8000}]}),  # vLLM's serving port
        workload(pod={"ports": [{"name": "kv-events", "port": 5557}]}),
    ),
    "RAY-SPANNING-ZONE": case(
        only_workload(
            kind="ray_serve",
            models=[
                {
                    "model": {"id": "Qwen/Qwen3-8B", "source": {"type": "s3_mount"}},
                    "engine": {"tensor_parallel_size": 2, "pipeline_parallel_size": 2},
                }
            ],
            workers={"gpus_per_pod": 2},  # a replica of 4 ranks over 2 worker pods
        ),
        {},  # the L40S pool spans the VPC's zones
        gpu_pool(availability_zone=0),
    ),
    "RAY-SPANNING-EFA": case(
        merge(
            gpu_pool(instance_types=["p5.48xlarge"], efa=True, availability_zone=0),
            only_workload(
                kind="ray_serve",
                models=[
                    {
                        "model": {"id": "Qwen/Qwen3-8B", "source": {"type": "s3_mount"}},
                        "engine": {"tensor_parallel_size": 8, "pipeline_parallel_size": 2},
                    }
                ],
                workers={"gpus_per_pod": 8},  # a replica of 16 ranks over 2 worker pods of a p5 node each
            ),
        ),
        {},  # no EFA devices: the stages talk TCP
        workload(efa=True, image=ENGINE_IMAGES["ray-llm-efa"], ray_version="2.58.0"),
    ),
    "CACHE-KIND": case(
        {},
        only_workload(kind="tgi", model=HF_QWEN, caches={"compile": SHARED_CACHE}),  # TGI compiles nothing
        only_workload(kind="tgi", model=HF_QWEN, caches={"huggingface": SHARED_CACHE}),
    ),
    "CACHE-HUB-SOURCE": case(
        workload(caches={"huggingface": SHARED_CACHE}),
        {},  # BASE streams Qwen3-8B from S3: nothing downloads from the Hub
        workload(model={"source": {"type": "hf"}}),
    ),
    "CACHE-HUB-SIZE": case(
        workload(model={"source": {"type": "hf"}}),
        workload(caches={"huggingface": {**SHARED_CACHE, "size_gib": 8}}),  # the checkpoint is ~15 GiB
        workload(caches={"huggingface": SHARED_CACHE}),
    ),
    "CACHE-SHARED": case(
        merge(workload(caches={"compile": CACHE}), gpu_pool(availability_zone=0)),
        workload(replicas=2),
        {},
    ),
    "CACHE-EFS": case(
        workload(caches={"compile": {**SHARED_CACHE, "storage_class": "inferstack-efs"}}),
        {},
        {"storage": {"efs": {}}},
    ),
    "CACHE-ZONE": case(
        workload(caches={"compile": CACHE}),
        {},  # the L40S pool spans the VPC's zones
        gpu_pool(availability_zone=0),
    ),
    # routing
    "ROUTING-KIND": case(
        {},
        only_workload(kind="tgi", model=HF_QWEN, routing={}, replicas=2),  # TGI's metrics are not the picker's
        only_workload(model=HF_QWEN, routing={}, replicas=2),
    ),
    "ROUTING-AIBRIX": case(
        merge({"cluster": {"aibrix": {}}}, workload(aibrix={}, replicas=2)),
        workload(routing={}),
        {},
    ),
    "ROUTING-METRICS": case(
        workload(routing={}, replicas=2),
        workload(engine={"extra_args": ["--disable-log-stats"]}),
        {},
    ),
    "ROUTING-FITS": case(
        workload(routing={"cpu": 4, "pool": "general"}, replicas=2),
        {"compute": {"karpenter_pools": {0: {"instance_families": [], "instance_types": ["m7i.xlarge"]}}}},
        {},  # 4.1 vCPU with Envoy: an m7i.xlarge gives 3, the m7i family's larger types more
    ),
    "ROUTING-POOL": case(
        workload(routing={}, replicas=2),
        workload(routing={"pool": "gpu"}),  # the router would hold an L40S node
        workload(routing={"pool": "general"}),
    ),
    "ROUTING-SYSTEM-SHARE": case(
        workload(routing={"replicas": 2}, replicas=2),
        {},  # 2 × 2.1 vCPU of the 2 × 3 vCPU m6i.xlarge system group: above half
        {"cluster": {"system_nodes": {"desired_size": 3}}},
    ),
    "ROUTING-PREFIX-CACHE": case(
        workload(routing={}, replicas=2, engine={"enable_prefix_caching": False}),
        {},
        workload(routing={"scorers": {"prefix_cache": 0}}),
    ),
    "ROUTING-ONE-REPLICA": case(
        workload(routing={}),
        {},
        workload(replicas=2),
    ),
    "BOTTLEROCKET-NEURON-DEVICES": case(
        {"compute": {"karpenter_pools": {2: {"ami": {"alias": "bottlerocket@v1.51.0"}}}}},  # the inf2 pool
        {},
        {"compute": {"karpenter_pools": {2: {"user_data": TOML_DEVICE_OWNERSHIP}}}},
    ),
    "BOTTLEROCKET-GPU-METRICS": case(
        {},
        gpu_pool(ami={"alias": "bottlerocket@v1.51.0"}),  # BASE's Qwen3-8B runs there, monitoring on
        gpu_pool(ami={"alias": "al2023@v20260714"}),
    ),
    "KARPENTER-CUSTOM-AMI": case(
        {},
        gpu_pool(ami={"terms": [{"tags": {"team": "ml"}, "owner": "self"}], "family": "AL2023"}),
        gpu_pool(ami={"alias": "al2023@v20260714"}),
    ),
    "KARPENTER-TERMINATION-GRACE": case(
        {},
        gpu_pool(termination_grace_period="60s"),
        gpu_pool(termination_grace_period="10m"),
    ),
    "KARPENTER-LIMITS": case(
        {},
        {"compute": {"karpenter_pools": {0: {"max_cpu": 1}}}},  # below m7i.large's 2 vCPU
        {"compute": {"karpenter_pools": {0: {"max_cpu": 2}}}},
    ),
    # storage
    "MODEL-SOURCE-BACKEND": case(
        {},
        {"storage": {"model_bucket": None}},
        {"storage": {"model_bucket": {}}},
    ),
    "FSX-AZ": case(
        merge(workload(**FROM_FSX), gpu_pool(availability_zone=0)),
        {"storage": {"fsx": {"availability_zone": 1}}},
        {"storage": {"fsx": {"availability_zone": 0}}},
    ),
    "FSX-EXISTING-SYNC": case(
        merge(
            workload(**FROM_FSX),
            merge(gpu_pool(availability_zone=0), {"storage": {"fsx": {"availability_zone": 0, "existing": EXISTING}}}),
        ),
        {},  # the default sync_model: true
        workload(sync_model=False),
    ),
    "FSX-SCRATCH-SYNC": case(
        merge(
            workload(**FROM_FSX), merge(gpu_pool(availability_zone=0), {"storage": {"fsx": {"availability_zone": 0}}})
        ),
        {"storage": {"fsx": {"deployment_type": "SCRATCH_2"}}},  # the default sync_model: true
        {"storage": {"fsx": {"deployment_type": "PERSISTENT_2"}}},
    ),
    "MODEL-PREFIX": case(
        merge(workload(**FROM_FSX), merge(gpu_pool(availability_zone=0), {"storage": {"fsx": {}}})),
        workload(model={"source": {"prefix": "other/Qwen/Qwen3-8B/"}}),
        workload(model={"source": {"prefix": "models/Qwen/Qwen3-8B/"}}),
    ),
    "HF-TOKEN": case(
        workload(model={"id": "meta-llama/Llama-3.1-8B-Instruct"}),
        {},
        workload(model={"hf_token_secret": {"name": "hf-token"}}),
    ),
    "MODEL-DISK": case(
        workload(model={"source": {"type": "hf"}}),
        workload(model={"source": {"cache_size_gib": 10}}),  # the checkpoint is ~15 GiB
        workload(model={"source": {"cache_size_gib": 20}}),
    ),
    # serving
    "TP-HEADS": case(
        {},
        workload(engine={"tensor_parallel_size": 3}),  # 32 heads
        workload(engine={"tensor_parallel_size": 4}),
    ),
    "NEURON-CORES": case(
        workload(**ON_INF2, model=LLAMA_1B),  # small enough for one NeuronCore: only the core count is wrong
        workload(engine={"tensor_parallel_size": 1}),
        workload(engine={"tensor_parallel_size": 2}),
    ),
    "NEURON-ARTIFACTS": case(
        workload(**ON_INF2),
        workload(model={"source": {"type": "hf"}}),
        workload(model={"source": {"type": "s3"}}),
    ),
    "PARALLEL-NODE": case(
        {},
        workload(engine={"tensor_parallel_size": 8}),  # the pool's largest type has 4 GPUs
        workload(engine={"tensor_parallel_size": 4}),
    ),
    "MODEL-FIT": case(
        workload(model=LLAMA_70B),  # ~131 GiB of weights, 48 GiB per L40S
        workload(engine={"tensor_parallel_size": 1}),
        workload(engine={"tensor_parallel_size": 4}),
    ),
    "PREFIX-OVERLAP": case(
        {},
        {"workloads": [*BASE["workloads"], MODEL_ON_QWENS_PREFIX]},
        {"workloads": [*BASE["workloads"], {**MODEL_ON_QWENS_PREFIX, "model": {"id": "Qwen/Qwen3-8B"}}]},
    ),
    "MODEL-CONTEXT": case(
        {},
        workload(engine={"max_model_len": 40961}),  # Qwen3-8B: max_position_embeddings 40,960
        workload(engine={"max_model_len": 40960}),
    ),
    "SCHEDULING": case(
        {},
        workload(resources={"memory_gib": 2000}),
        workload(resources={"memory_gib": 32}),
    ),
    "STARTUP-PROBE": case(
        {},
        workload(startup_timeout_seconds=60),
        workload(startup_timeout_seconds=600),
    ),
    "BENCH-TARGET": case(
        workload(bench={}),
        workload(model={"source": {"type": "image", "image": "registry.example/qwen:1", "path": "/models/qwen"}}),
        workload(model={"source": {"type": "s3"}}),
    ),
    "BENCH-BUCKET": case(
        workload(bench={}, model={"source": {"type": "hf"}}),
        {"storage": {"model_bucket": None}},
        {},
    ),
    "BENCH-CONTEXT": case(
        workload(bench={}),
        workload(bench={"input_tokens": 40000, "output_tokens": 1024}),  # Qwen3-8B's 40,960 on the L40S pool
        workload(bench={"input_tokens": 32768, "output_tokens": 1024}),
    ),
    "CHECKLIST-MONITORING": case({}, workload(monitoring=False), workload(monitoring=True)),
    "CHECKLIST-LOGS": case({}, {"observability": {"log_shipping": False}}, {"observability": {"log_shipping": True}}),
    "CHECKLIST-NETWORK-POLICY": case(
        {}, {"network_policies": {"enabled": False}}, {"network_policies": {"enabled": True}}
    ),
    "NEURON-STACK": case(
        workload(**ON_INF2),
        workload(engine={"kv_cache_dtype": "fp8"}),
        workload(engine={"kv_cache_dtype": "auto"}),
    ),
    # autoscaling
    "AUTOSCALING-ZERO": case(
        workload(autoscaling={"kind": "keda"}),
        workload(autoscaling={"min_replicas": 0}),
        workload(autoscaling={"min_replicas": 1}),
    ),
    "AUTOSCALING-HPA-ADAPTER": case(
        workload(autoscaling={"kind": "hpa"}),
        {"observability": {"custom_metrics_adapter": False}},
        {"observability": {"custom_metrics_adapter": True}},
    ),
    "AUTOSCALING-METRICS": case(
        workload(autoscaling={"kind": "keda"}),
        workload(monitoring=False),
        workload(monitoring=True),
    ),
    # multi-node
    "MULTINODE-ACCELERATOR": case(
        merge(workload(**MULTINODE), gpu_pool(availability_zone=0)),
        workload(pool="general"),
        workload(pool="gpu"),
    ),
    "MULTINODE-CAPACITY": case(
        merge(workload(**MULTINODE), gpu_pool(availability_zone=0)),
        workload(replicas=9),  # 9 × 2 nodes × 4 GPUs = 72 > the pool's 64
        workload(replicas=8),
    ),
    "MULTINODE-ZONE": case(
        workload(**MULTINODE),
        {},
        gpu_pool(availability_zone=0),
    ),
    "MULTINODE-EFA": case(
        merge(
            {"compute": {"node_groups": [P5_EFA_GROUP]}},
            merge(workload(**MULTINODE_P5), workload(engine={"image": EFA_IMAGE})),
        ),
        workload(efa=False),
        workload(efa=True),
    ),
    "MULTINODE-EFA-IMAGE": case(
        merge({"compute": {"node_groups": [P5_EFA_GROUP]}}, workload(**MULTINODE_P5)),
        workload(engine={"image": UPSTREAM_IMAGE}),  # upstream vLLM: no aws-ofi-nccl
        workload(engine={"image": EFA_IMAGE}),
    ),
    # Ray Serve LLM
    "RAY-HEAD-GPU": case(
        only_workload(**RAY),
        workload(head={"pool": "gpu"}),
        workload(head={"pool": "general"}),
    ),
    "RAY-HEAD-FIT": case(
        only_workload(**RAY),
        workload(head={"memory_gib": 64}),  # m6i.xlarge system nodes: 16 GiB
        workload(head={"memory_gib": 8}),
    ),
    "RAY-PD-EFA": case(
        merge({"compute": {"node_groups": [P5_EFA_GROUP]}}, only_workload(**RAY_PD)),
        workload(efa=False),
        workload(efa=True),
    ),
    "RAY-PD-ZONE": case(
        merge(
            {"compute": {"node_groups": [{k: v for k, v in P5_EFA_GROUP.items() if k != "availability_zone"}]}},
            only_workload(**RAY_PD),
        ),
        {},
        node_group(availability_zone=0),
    ),
    "RAY-NIXL-LIBFABRIC": case(
        merge({"compute": {"node_groups": [P5_EFA_GROUP]}}, only_workload(**RAY_PD)),
        workload(prefill_decode={"kv_backends": ["UCX"]}),
        workload(prefill_decode={"kv_backends": ["LIBFABRIC"]}),
    ),
    "RAY-ACCELERATOR-TYPE": case(
        only_workload(**RAY),
        workload(models={0: {"accelerator_type": "H100"}}),
        workload(models={0: {"accelerator_type": "L40S"}}),
    ),
    "RAY-UPGRADE-CAPACITY": case(
        merge(
            {"compute": {"node_groups": [P5_EFA_GROUP]}}, only_workload(**{**RAY_PD, "upgrade_strategy": "NewCluster"})
        ),
        {},  # two nodes, 16 GPUs; the upgrade runs 2 × 16
        {"compute": {"node_groups": {0: {"max_size": 4}}}},
    ),
    "RAY-WORKER-CAPACITY": case(
        merge({"compute": {"node_groups": [P5_EFA_GROUP]}}, only_workload(**RAY_PD)),
        {"compute": {"node_groups": {0: {"max_size": 1}}}},  # prefill and decode each take a whole EFA node
        {"compute": {"node_groups": {0: {"max_size": 2}}}},
    ),
    # secrets
    "SECRET-INLINE": case(
        {},
        workload(
            overrides={
                "Deployment": {
                    "spec": {
                        "template": {
                            "spec": {
                                "containers": [
                                    {"name": "vllm", "env": [{"name": "HF_TOKEN", "value": "hf_" + "x" * 34}]}
                                ]
                            }
                        }
                    }
                }
            }
        ),
        workload(
            overrides={
                "Deployment": {
                    "spec": {
                        "template": {
                            "spec": {
                                "containers": [
                                    {
                                        "name": "vllm",
                                        "env": [
                                            {
                                                "name": "HF_TOKEN",
                                                "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}},
                                            }
                                        ],
                                    }
                                ]
                            }
                        }
                    }
                }
            }
        ),
    ),
    # sglang / tgi / ollama
    "ENGINE-FIT": case(
        behind_a_gateway(kind="sglang", model={**LLAMA_70B, "source": {"type": "s3_mount"}}),
        workload(engine={"tensor_parallel_size": 1}),  # 131 GiB on one 48 GiB L40S
        workload(engine={"tensor_parallel_size": 4}),
    ),
    "SGLANG-ADMIN": case(
        only_workload(kind="sglang", model={"id": "Qwen/Qwen3-8B", "source": {"type": "s3_mount"}}),
        {},  # its namespace's clients reach port 30000, and with it the admin endpoints
        behind_a_gateway(kind="sglang", model={"id": "Qwen/Qwen3-8B", "source": {"type": "s3_mount"}}),
    ),
    "OLLAMA-CPU-ON-GPU": case(
        only_workload(kind="ollama", models=["qwen3:4b"]),
        workload(pool="gpu"),
        workload(pool="general"),
    ),
    # litellm
    "LITELLM-BACKEND": case(
        {
            "workloads": [
                *BASE["workloads"],
                {
                    "kind": "litellm",
                    "name": "gateway",
                    "pool": "general",
                    "master_key_secret": {"name": "litellm"},
                    "routes": [{"name": "chat", "backends": [{"workload": "qwen"}]}],
                },
            ]
        },
        workload(name="qwen-2"),  # the gateway's backend is gone
        workload(name="qwen"),
    ),
    "NETWORK-GATEWAY-CLIENTS": case(
        {
            "workloads": [
                *BASE["workloads"],
                {
                    "kind": "litellm",
                    "name": "gateway",
                    "namespace": "gateway",
                    "pool": "general",
                    "master_key_secret": {"name": "litellm"},
                    "routes": [{"name": "chat", "backends": [{"workload": "qwen"}]}],
                },
            ]
        },
        {"network_policies": {"namespace_clients": False}},  # its backend admits only it, and it admits nobody
        {"network_policies": {"namespace_clients": False, "client_namespaces": ["apps"]}},
    ),
    # aibrix
    "AIBRIX-CONTROL-PLANE": case(
        workload(aibrix={"adapters": []}),
        {},
        {"cluster": {"aibrix": {"version": "0.7.0"}}},
    ),
    "AIBRIX-BASE-MODEL": case(
        merge({"cluster": {"aibrix": {}}}, workload(aibrix={})),
        workload(
            aibrix={"adapters": [{"name": "sql", "artifact": "huggingface://org/lora", "base_model": "Qwen/Qwen3-4B"}]}
        ),
        workload(
            aibrix={"adapters": [{"name": "sql", "artifact": "huggingface://org/lora", "base_model": "Qwen/Qwen3-8B"}]}
        ),
    ),
    # kserve
    "KSERVE-SCALE-ZERO": case(
        only_workload(**{**KSERVE, "deployment_mode": "Standard"}),
        workload(scaling={"min_replicas": 0}),
        workload(scaling={"min_replicas": 1}),
    ),
    "KSERVE-KNATIVE": case(
        only_workload(**KSERVE),
        {"cluster": {"knative_serving": {"podspec_features_enabled": False}}},
        KNATIVE,
    ),
    "KSERVE-COLD-START": case(
        merge(KNATIVE, only_workload(**KSERVE)),
        workload(cold_start_tolerance_seconds=60),  # a node, the image and the model take minutes
        workload(cold_start_tolerance_seconds=900),
    ),
    "KSERVE-REQUEST-TIMEOUT": case(
        merge(KNATIVE, only_workload(**{**KSERVE, "model": {"id": "Qwen/Qwen3-8B", "source": {"type": "hf"}}})),
        {},  # a download from Hugging Face: longer than Knative's 600 s
        workload(scaling={"min_replicas": 1}),
    ),
    "KSERVE-SYNC-WAIT": case(
        merge(KNATIVE, only_workload(**KSERVE)),
        workload(sync_model=True),
        workload(sync_model=False),
    ),
    # nim
    "NIM-NGC-SECRETS": case(only_workload(**NIM), workload(ngc={"pull_secret": None}), {}),
    "NIM-PROFILE-TP": case(
        only_workload(**NIM),
        workload(cache={"profile": {"tensor_parallelism": 2}}),
        workload(cache={"profile": {"tensor_parallelism": 1}}),
    ),
    "NIM-FIT": case(
        only_workload(**{**NIM, "model": {"id": "meta-llama/Llama-3.1-70B-Instruct"}}),
        workload(gpus=1),  # 131 GiB of weights on one 48 GiB L40S
        workload(gpus=4),
    ),
    "NIM-CACHE-ACCESS": case(
        only_workload(**{**NIM, "replicas": 2}),
        {},
        workload(cache={"access_mode": "ReadWriteMany", "storage_class": "efs"}),
    ),
    # images
    "IMAGE-NIXL-LIBFABRIC": case(
        merge({"compute": {"node_groups": [P5_EFA_GROUP]}}, only_workload(**RAY_PD)),
        workload(image="rayproject/ray-llm:2.58.0-py312-cu130", ray_version="2.58.0"),  # no libfabric
        workload(image="public.ecr.aws/deep-learning-containers/ray:serve-llm-cuda-v1.0", ray_version="2.58.0"),
    ),
    "IMAGE-ACCELERATOR": case(
        {},
        workload(engine={"image": ENGINE_IMAGES["vllm-neuron"]}),
        workload(engine={"image": "vllm/vllm-openai:v0.19.0"}),
    ),
    "IMAGE-MULTINODE-FLAGS": case(
        merge(workload(**MULTINODE), gpu_pool(availability_zone=0)),
        workload(engine={"image": "vllm/vllm-openai:v0.11.0"}),
        workload(engine={"image": "vllm/vllm-openai:v0.19.0"}),
    ),
    # dynamo
    "DYNAMO-PD-EFA": case(
        merge({"compute": {"node_groups": [P5_EFA_GROUP]}}, only_workload(**DYNAMO_PD)),
        workload(efa=False),
        workload(efa=True),
    ),
    "DYNAMO-PD-ZONE": case(
        merge(
            {"compute": {"node_groups": [{k: v for k, v in P5_EFA_GROUP.items() if k != "availability_zone"}]}},
            only_workload(**DYNAMO_PD),
        ),
        {},
        node_group(availability_zone=0),
    ),
    "DYNAMO-NIXL-LIBFABRIC": case(
        merge({"compute": {"node_groups": [P5_EFA_GROUP]}}, only_workload(**DYNAMO_PD)),
        workload(kv_backends=["UCX"]),
        workload(kv_backends=["LIBFABRIC"]),
    ),
    "DYNAMO-WORKER-CAPACITY": case(
        merge({"compute": {"node_groups": [P5_EFA_GROUP]}}, only_workload(**DYNAMO_PD)),
        node_group(max_size=1),  # prefill and decode each take a whole EFA node
        node_group(max_size=2),
    ),
    # engine flags
    "ENGINE-FLAGS-UNVERIFIED": case(
        workload(engine={"extra_args": ["--disable-log-stats"]}),
        workload(engine={"image": "vllm/vllm-openai:v0.10.0"}),  # a release without a vendored flag list
        workload(engine={"image": "vllm/vllm-openai:v0.19.0"}),
    ),
}
RULE_IDS = sorted(CASES)


def findings(report: RuleReport) -> list[Finding]:
    """Every finding of a report, acknowledged or not."""
    return [*report.errors, *report.warnings, *(finding for finding, _ in report.acknowledged)]


def of_rule(report: RuleReport, rule_id: str) -> list[Finding]:
    return [f for f in findings(report) if f.rule == rule_id]


def non_compliant(rule_id: str) -> InferstackConfig:
    return parse_config(CASES[rule_id][0])


def compliant(rule_id: str) -> InferstackConfig:
    return parse_config(CASES[rule_id][1])


_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)$")


def resolves(config: InferstackConfig, path: str) -> bool:
    """Whether ``path`` (``workloads[0].engine.tensor_parallel_size``) names a field of the validated config: each
    dotted part a field of the model it is in (a leaf may hold its default) or a key of a mapping field
    (``overrides``), each index an existing element."""
    node: Any = config
    parts = path.split(".")
    for position, part in enumerate(parts):
        match = _SEGMENT.match(part)
        if match is None:
            return False
        if isinstance(node, dict):  # a mapping field (overrides): its keys
            if match[1] not in node:
                return False
            node = node[match[1]]
        elif isinstance(node, BaseModel) and match[1] in type(node).model_fields:
            node = getattr(node, match[1])
        else:
            return False
        for index in map(int, re.findall(r"\[(\d+)\]", match[2])):
            if not isinstance(node, tuple | list) or index >= len(node):
                return False
            node = node[index]
        if node is None and position < len(parts) - 1:
            return False
    return True


def test_every_registered_rule_has_cases():
    assert set(CASES) == {rule.id for rule in RULES}


def test_rule_ids_are_unique():
    ids = [rule.id for rule in RULES]
    assert len(ids) == len(set(ids))


def test_base_config_passes_every_rule():
    assert findings(evaluate(parse_config(BASE))) == []


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_cases_differ(rule_id):
    bad, good = CASES[rule_id]
    assert bad != good


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_non_compliant_case_trips_the_rule(rule_id):
    report = evaluate(non_compliant(rule_id))
    expected, other = (report.warnings, report.errors) if rule_id in WARNING_RULES else (report.errors, report.warnings)
    tripped = [f for f in expected if f.rule == rule_id]
    assert tripped, f"{rule_id} did not fire: {findings(report)}"
    severity = Severity.WARNING if rule_id in WARNING_RULES else Severity.ERROR
    assert {f.severity for f in tripped} == {severity}
    assert [f for f in other if f.rule == rule_id] == []
    assert report.acknowledged == []


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_compliant_case_does_not_trip_the_rule(rule_id):
    report = evaluate(compliant(rule_id))
    assert of_rule(report, rule_id) == []


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_compliant_case_passes_every_rule(rule_id):
    """The compliant side is a config ``inferstack check`` accepts without a word: the pair isolates one rule."""
    assert findings(evaluate(compliant(rule_id))) == []


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_non_compliant_case_trips_only_its_rule(rule_id):
    """The non-compliant side breaks one thing; where one mistake necessarily trips two rules, the second is named."""
    report = evaluate(non_compliant(rule_id))
    assert {f.rule for f in findings(report)} == {rule_id, *ALSO_TRIPS.get(rule_id, ())}


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_findings_name_a_config_path_and_a_fix(rule_id):
    config = non_compliant(rule_id)
    report = evaluate(config)
    assert findings(report)
    for finding in findings(report):
        assert finding.path.split(".")[0].split("[")[0] in CASES[rule_id][0], f"not a section of the config: {finding}"
        assert resolves(config, finding.path), f"{finding.path} is not a field of the config: {finding}"
        assert finding.fix.strip(), finding
        assert finding.message.strip(), finding


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_every_finding_carries_the_id_of_the_rule_that_produced_it(rule_id):
    config = non_compliant(rule_id)
    for rule in RULES:
        assert {f.rule for f in rule.run(config)} <= {rule.id}, rule.id


ACKNOWLEDGEABLE = [r.id for r in RULES if r.acknowledgeable]
STRUCTURAL = [r.id for r in RULES if not r.acknowledgeable]


def test_only_rules_the_platform_cannot_be_built_without_refuse_acknowledgement():
    assert STRUCTURAL == [
        "EFA-UNSUPPORTED",
        "RESOURCE-LIMITS",  # the API server refuses a pod whose limit is below its request
        "MODEL-SOURCE-BACKEND",
        "SECRET-INLINE",
        "BENCH-TARGET",
        "BENCH-BUCKET",
        "NEURON-ARTIFACTS",
        "AIBRIX-CONTROL-PLANE",
        "MULTINODE-ACCELERATOR",
        "KSERVE-KNATIVE",
        "NIM-NGC-SECRETS",
    ]


@pytest.mark.parametrize("rule_id", STRUCTURAL)
def test_a_structural_rule_cannot_be_acknowledged(rule_id):
    data = CASES[rule_id][0]
    report = evaluate(parse_config({**data, "acknowledge": [{"rule": rule_id, "reason": "we know, build it anyway"}]}))
    assert of_rule(report, rule_id), "its findings stay errors"
    (config_error,) = [f for f in report.errors if f.rule == "CONFIG"]
    assert config_error.path == "acknowledge[0].rule" and "cannot be acknowledged" in config_error.message
    assert report.acknowledged == []


@pytest.mark.parametrize("rule_id", ACKNOWLEDGEABLE)
def test_acknowledging_the_rule_moves_its_findings_aside(rule_id):
    reason = "accepted on purpose for the test"
    data = CASES[rule_id][0]
    before = of_rule(evaluate(parse_config(data)), rule_id)
    report = evaluate(parse_config({**data, "acknowledge": [{"rule": rule_id, "reason": reason}]}))
    assert [f for f in [*report.errors, *report.warnings] if f.rule == rule_id] == []
    assert report.acknowledged == [(finding, reason) for finding in before]


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_removing_the_rule_from_the_registry_is_noticed(rule_id):
    config = non_compliant(rule_id)
    assert of_rule(evaluate(config), rule_id)
    without = tuple(rule for rule in RULES if rule.id != rule_id)
    assert len(without) == len(RULES) - 1
    assert of_rule(evaluate(config, rules=without), rule_id) == []


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_the_check_command_reports_the_rule(rule_id, tmp_path, capsys):
    """``inferstack check`` on the two configs (JSON is YAML): the rule's id appears for one and not the other."""
    bad, good = tmp_path / "bad.yaml", tmp_path / "good.yaml"
    bad.write_text(json.dumps(CASES[rule_id][0]))
    good.write_text(json.dumps(CASES[rule_id][1]))
    code = cli.main(["check", str(bad)])
    out = capsys.readouterr()
    assert f"[{rule_id}]" in out.out + out.err
    assert code == (0 if rule_id in WARNING_RULES else 1)  # warnings are printed, only errors fail the check
    assert cli.main(["check", str(good)]) == 0
    out = capsys.readouterr()
    assert f"[{rule_id}]" not in out.out + out.err
    assert out.out.strip().endswith(f"{good}: OK")


#: Rules whose registry case comes with machine-applicable fixes (config path → value).
SUGGESTING = ("MODEL-FIT", "PARALLEL-NODE", "TP-HEADS", "NEURON-CORES", "STARTUP-PROBE")


@pytest.mark.parametrize("rule_id", SUGGESTING)
def test_rules_that_suggest_a_fix_offer_one(rule_id):
    findings = of_rule(evaluate(non_compliant(rule_id)), rule_id)
    assert any(f.suggestions for f in findings), rule_id


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_every_suggested_fix_passes_every_rule(rule_id):
    """A suggestion is never rejected by the next rule: applied, the config passes all of them."""
    from inferstack.config.edit import with_changes

    config = non_compliant(rule_id)
    for finding in of_rule(evaluate(config), rule_id):
        for changes in finding.suggestions:
            fixed = with_changes(config, changes)
            assert fixed is not None, f"{rule_id}: {changes} is not a valid config"
            remaining = [str(f) for f in evaluate(fixed).errors]
            assert remaining == [], f"{rule_id}: applying {changes} leaves {remaining}"


def test_a_tp_suggestion_the_memory_rule_would_reject_is_not_offered():
    """Llama-3.1-70B at TP 8 and 128k context on a 4-GPU L40S pool: TP 4 does not hold one sequence (MODEL-FIT), so
    PARALLEL-NODE must not suggest it; moving to a pool that holds TP 8 is offered instead."""
    data = {
        "compute": {
            "karpenter_pools": [
                {"name": "l40s", "instance_types": ["g6e.12xlarge"]},
                {"name": "h100", "instance_types": ["p5.48xlarge"]},
            ]
        },
        "workloads": [
            {
                "name": "w",
                "pool": "l40s",
                "model": {"id": "meta-llama/Llama-3.1-70B-Instruct", "hf_token_secret": {"name": "hf"}},
                "engine": {"tensor_parallel_size": 8, "max_model_len": 131072},
            }
        ],
    }
    (finding,) = of_rule(evaluate(parse_config(data)), "PARALLEL-NODE")
    assert {"workloads[0].engine.tensor_parallel_size": 4} not in finding.suggestions
    assert {"workloads[0].pool": "h100"} in finding.suggestions
