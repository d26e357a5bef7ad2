"""The resolved plan: computed once per config, and the one source the rules, the charts and the stacks read."""

from __future__ import annotations

from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.config import parse_config
from inferstack.plan import resolve
from tests.stacks.test_workloads import container, pod_spec

CONFIG = {
    "compute": {
        "karpenter_pools": [
            {
                "name": "gpu",
                "instance_types": ["g6e.2xlarge", "g6e.12xlarge"],
                "taints": [{"key": "team", "effect": "NoExecute"}],
            },
            {"name": "inf2", "instance_types": ["inf2.24xlarge"]},
        ],
        "gpu_operator": {"extra_tolerations": [{"key": "team", "effect": "NoExecute"}]},
    },
    "workloads": [
        {"name": "qwen", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}, "engine": {"tensor_parallel_size": 4}},
        {
            "name": "llama",
            "pool": "inf2",
            "model": {"id": "meta-llama/Llama-3.1-8B-Instruct", "hf_token_secret": {"name": "hf"}},
            "engine": {"tensor_parallel_size": 8},
        },
    ],
}


def test_resolved_once_per_config():
    config = parse_config(CONFIG)
    assert resolve(config) is resolve(config)
    assert resolve(parse_config(CONFIG)) is not resolve(config)


def test_pools_carry_instances_labels_and_taints():
    gpu = resolve(parse_config(CONFIG)).pools["gpu"]
    assert [t.name for t in gpu.instances] == ["g6e.2xlarge", "g6e.12xlarge"]
    assert gpu.labels["inferstack.io/pool"] == "gpu"
    assert gpu.taints == {("team", "NoExecute"), ("nvidia.com/gpu", "NoSchedule")}
    assert gpu.path == "compute.karpenter_pools[0]"


def test_workload_roles_identities_and_storage_access():
    qwen, llama = resolve(parse_config(CONFIG)).workloads
    assert qwen.path == "workloads[0]" and qwen.server.pod.requests["nvidia.com/gpu"] == "4"
    assert qwen.server.service_account == "qwen" and qwen.server.reads_bucket and qwen.writes_bucket
    assert qwen.image == ENGINE_IMAGES["vllm-gpu"] and "consolidated*.safetensors" in qwen.models[0].sync_excludes
    assert (
        llama.image.startswith("public.ecr.aws/neuron/") and llama.server.pod.requests["aws.amazon.com/neuron"] == "4"
    )
    assert llama.writer_service_account == "llama-model-sync"


def test_the_manifest_is_the_plan(tp4_app):
    """What the rules judged (the plan's pod) is what the Deployment asks for."""
    plan = resolve(tp4_app.config).workloads[0].server.pod
    resources = container(tp4_app)["resources"]
    assert resources["requests"] == plan.requests and resources["limits"] == plan.limits
    spec = pod_spec(tp4_app)
    assert spec["nodeSelector"] == plan.node_selector
    assert {(t["key"], t["effect"]) for t in spec["tolerations"]} == set(plan.tolerations)


def test_a_model_listed_twice_is_synced_once():
    qwen = {"model": {"id": "Qwen/Qwen3-8B", "source": {"type": "s3_mount"}}}
    again = {"model": {"id": "Qwen/Qwen3-8B", "served_name": "qwen-b", "source": {"type": "s3_mount"}}}
    config = parse_config(
        {
            "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.12xlarge"]}]},
            "workloads": [{"name": "chat", "kind": "ray_serve", "pool": "gpu", "models": [qwen, again]}],
        }
    )
    (chat,) = resolve(config).workloads
    assert [m.sync for m in chat.models] == [True, False] and chat.prefixes == ["models/Qwen/Qwen3-8B/main/"]


def test_the_roles_prefixes_are_the_bucket_backed_models_only():
    """A model on EFS (or hf, image) has a default prefix nothing reads: the sync role must not write it."""
    on_efs = {"model": {"id": "Qwen/Qwen3-8B", "source": {"type": "efs", "path": "/models/qwen"}}}
    synced = {"model": {"id": "meta-llama/Llama-3.1-8B-Instruct", "source": {"type": "s3_mount"}}}
    config = parse_config(
        {
            "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.12xlarge"]}]},
            "storage": {"efs": {}},
            "workloads": [{"name": "chat", "kind": "ray_serve", "pool": "gpu", "models": [on_efs, synced]}],
        }
    )
    (chat,) = resolve(config).workloads
    assert chat.writes_bucket and chat.prefixes == ["models/meta-llama/Llama-3.1-8B-Instruct/main/"]


def test_an_efa_pod_takes_its_share_of_the_nodes_efa_devices():
    """Defect: every EFA pod requested all 32 EFA devices of a p5.48xlarge, so prefill and decode at TP 4 (4 GPUs each)
    could not share a node and the P/D layout needed twice the nodes."""
    p5 = {"name": "p5", "instance_type": "p5.48xlarge", "efa": True, "availability_zone": 0, "max_size": 2}
    model = {
        "id": "meta-llama/Llama-3.1-70B-Instruct",
        "hf_token_secret": {"name": "hf"},
        "source": {"type": "s3_mount"},
    }
    shared = {"kind": "ray_serve", "pool": "p5", "efa": True, "upgrade_strategy": "None", "models": [{"model": model}]}
    config = parse_config(
        {
            "compute": {"node_groups": [p5]},
            "workloads": [
                {
                    "name": "pd",
                    **shared,
                    "prefill_decode": {
                        "prefill": {"engine": {"tensor_parallel_size": 4}},
                        "decode": {"engine": {"tensor_parallel_size": 4}},
                    },
                },
                {"name": "whole", **shared},
            ],
        }
    )
    pd, whole = resolve(config).workloads
    assert {name: role.pod.efa for name, role in pd.roles.items() if name != "head"} == {"prefill": 16, "decode": 16}
    assert {role.pod.accelerators for name, role in pd.roles.items() if name != "head"} == {4}
    (engine,) = [role for name, role in whole.roles.items() if name != "head"]
    assert engine.pod.efa == 32 * engine.pod.accelerators // 8
