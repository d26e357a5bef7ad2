"""GIVEN serving configs, WHEN synthesized, THEN the vLLM Deployment, Service, PDB, monitoring, autoscaling and
Neuron compile path are what production needs."""

from __future__ import annotations

import json

import pytest

HELM = "Custom::AWSCDK-EKS-HelmChart"


def objects(app, kind: str) -> list[dict]:
    return [o for o in app.kubernetes_objects() if o["kind"] == kind]


def pod_spec(app) -> dict:
    (deployment,) = objects(app, "Deployment")
    return deployment["spec"]["template"]["spec"]


def container(app) -> dict:
    return next(c for c in pod_spec(app)["containers"] if c["name"] == "vllm")


def arg(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


class TestDefaultPlatform:
    """inferstack.yaml: Ministral-3-8B on g6e.2xlarge, Run:ai streamer from S3, Mistral tool calling."""

    def test_streams_the_model_from_the_bucket(self, default_app):
        args = container(default_app)["args"]
        assert args[0].startswith("s3://") and args[0].endswith("/models/mistralai/Ministral-3-8B-Instruct-2512/main/")
        assert arg(args, "--load-format") == "runai_streamer"
        assert json.loads(arg(args, "--model-loader-extra-config")) == {"concurrency": 16}
        assert not any(v.get("persistentVolumeClaim") for v in pod_spec(default_app)["volumes"])

    def test_mistral_tool_calling(self, default_app):
        args = container(default_app)["args"]
        assert "--enable-auto-tool-choice" in args and arg(args, "--tool-call-parser") == "mistral"
        assert arg(args, "--config-format") == "mistral" and arg(args, "--tokenizer-mode") == "mistral"

    def test_one_gpu_on_the_l40s_pool(self, default_app):
        resources = container(default_app)["resources"]
        assert resources["limits"]["nvidia.com/gpu"] == resources["requests"]["nvidia.com/gpu"] == "1"
        assert "cpu" not in resources["limits"]  # no CPU throttling of the engine
        spec = pod_spec(default_app)
        assert spec["nodeSelector"] == {"inferstack.io/pool": "l40s"}
        assert spec["tolerations"] == [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}]
        assert spec["priorityClassName"] == "inferstack-serving"

    def test_reader_identity_for_the_streamer(self, default_app):
        associations = [
            a["Properties"] for a in default_app.resources("workloads", "AWS::EKS::PodIdentityAssociation").values()
        ]
        assert {(a["Namespace"], a["ServiceAccount"]) for a in associations} == {
            ("inference", "ministral"),
            ("inference", "ministral-model-sync"),
        }
        assert pod_spec(default_app)["serviceAccountName"] == "ministral"
        assert pod_spec(default_app)["automountServiceAccountToken"] is False

    def test_prefix_caching_on_and_offline_hub(self, default_app):
        assert "--enable-prefix-caching" in container(default_app)["args"]
        env = {e["name"]: e.get("value") for e in container(default_app)["env"]}
        assert env["HF_HUB_OFFLINE"] == "1"

    def test_service_pdb_and_pod_monitor(self, default_app):
        (service,) = objects(default_app, "Service")
        assert service["spec"]["ports"] == [{"name": "http", "port": 8000, "targetPort": "http"}]
        (pdb,) = objects(default_app, "PodDisruptionBudget")
        assert pdb["spec"]["maxUnavailable"] == 1
        (monitor,) = objects(default_app, "PodMonitor")
        assert monitor["spec"]["podMetricsEndpoints"] == [{"port": "http", "path": "/metrics", "interval": "15s"}]
        charts = {r["Properties"]["Chart"] for r in default_app.resources("workloads", HELM).values()}
        assert "kube-prometheus-stack" in charts

    def test_workload_manifest_waits_for_operators_and_csi(self, default_app):
        manifests = default_app.resources("workloads", "Custom::AWSCDK-EKS-KubernetesResource")
        workload = next(r for r in manifests.values() if "Deployment" in json.dumps(r["Properties"]["Manifest"]))
        prometheus = next(
            k
            for k, r in default_app.resources("workloads", HELM).items()
            if r["Properties"]["Chart"] == "kube-prometheus-stack"
        )
        assert prometheus in workload["DependsOn"]


class TestTensorParallelGpu:
    """examples/vllm-gpu-tp4.yaml."""

    def test_four_gpus_and_tp4(self, tp4_app):
        c = container(tp4_app)
        assert c["resources"]["limits"]["nvidia.com/gpu"] == "4"
        assert arg(c["args"], "--tensor-parallel-size") == "4"
        assert arg(c["args"], "--kv-cache-dtype") == "fp8"
        assert arg(c["args"], "--tool-call-parser") == "llama3_json"

    def test_shm_is_memory_backed(self, tp4_app):
        shm = next(v for v in pod_spec(tp4_app)["volumes"] if v["name"] == "shm")
        assert shm["emptyDir"] == {"medium": "Memory", "sizeLimit": "8Gi"}
        assert {"mountPath": "/dev/shm", "name": "shm"} in container(tp4_app)["volumeMounts"]

    def test_probes_cover_the_model_load(self, tp4_app):
        c = container(tp4_app)
        startup = c["startupProbe"]
        assert startup["httpGet"] == {"path": "/health", "port": 8000}
        # 131 GiB from S3 at ~1 GiB/s plus engine start, doubled: well over ten minutes
        assert startup["periodSeconds"] * startup["failureThreshold"] >= 600
        assert c["readinessProbe"]["httpGet"]["path"] == "/health"
        assert c["livenessProbe"]["httpGet"]["path"] == "/health"

    def test_keda_scales_on_queue_depth(self, tp4_app):
        (scaled,) = objects(tp4_app, "ScaledObject")
        assert scaled["spec"]["minReplicaCount"] == 1 and scaled["spec"]["maxReplicaCount"] == 3
        (trigger,) = scaled["spec"]["triggers"]
        assert "vllm:num_requests_waiting" in trigger["metadata"]["query"]
        assert trigger["metadata"]["threshold"] == "8"
        charts = {r["Properties"]["Chart"] for r in tp4_app.resources("workloads", HELM).values()}
        assert "keda" in charts

    def test_hardened_container(self, tp4_app):
        security = container(tp4_app)["securityContext"]
        assert security["runAsNonRoot"] is True and security["allowPrivilegeEscalation"] is False
        assert security["capabilities"] == {"drop": ["ALL"]}
        assert pod_spec(tp4_app)["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}


#: Flags of ``vllm serve`` that configure the HTTP server or its shutdown, not the engine a compile must match.
SERVER_ONLY_FLAGS = frozenset(
    {"--port", "--served-model-name", "--shutdown-timeout", "--enable-auto-tool-choice", "--tool-call-parser"}
)


def server_engine_settings(args: list[str]) -> dict:
    """The engine settings a ``vllm serve`` command line sets, as ``vllm.LLM`` keyword arguments (parsed with the
    vendored flag list: booleans from --x / --no-x, values as strings → JSON where they parse)."""
    from inferstack.catalog.engine_flags import vllm_flags

    flags = vllm_flags("0.19.0")
    settings: dict = {}
    items = iter(args[1:])  # args[0]: the model
    for item in items:
        name, _, inline = item.partition("=")
        if name in SERVER_ONLY_FLAGS:
            if flags.takes_value(name) and not inline:
                next(items)
            continue
        if name.startswith("--no-"):
            settings[name[5:].replace("-", "_")] = False
        elif flags.takes_value(name):
            value = inline or next(items)
            try:
                settings[name[2:].replace("-", "_")] = json.loads(value)
            except json.JSONDecodeError:
                settings[name[2:].replace("-", "_")] = value
        else:
            settings[name[2:].replace("-", "_")] = True
    return settings


class TestNeuronServing:
    """examples/vllm-neuron-inf2.yaml: Inferentia2 on the SDK 2.31.1 DLC (vLLM 0.16 + vllm-neuron 0.5)."""

    def test_neuron_devices_match_tensor_parallelism(self, neuron_vllm_app):
        c = container(neuron_vllm_app)
        assert c["resources"]["limits"]["aws.amazon.com/neuron"] == "4"  # TP 8 NeuronCores = 4 Inferentia2
        assert arg(c["args"], "--tensor-parallel-size") == "8"
        assert "--device" not in c["args"], "the plugin registers itself; vLLM has no --device"
        assert c["image"].endswith(":0.16.0-neuronx-py312-sdk2.31.1-ubuntu24.04")
        assert pod_spec(neuron_vllm_app)["tolerations"][0]["key"] == "aws.amazon.com/neuron"

    def test_prefix_caching_comes_with_the_block_size_vllm_neuron_asserts(self, neuron_vllm_app):
        args = container(neuron_vllm_app)["args"]
        assert "--enable-prefix-caching" in args and arg(args, "--block-size") == "32"
        assert arg(args, "--num-gpu-blocks-override") == str(4096 // 32 * 8)  # every sequence at full length

    def test_no_shutdown_timeout_on_vllm_0_16(self, neuron_vllm_app):
        assert "--shutdown-timeout" not in container(neuron_vllm_app)["args"]

    def test_neuron_pods_use_the_neuron_scheduler(self, neuron_vllm_app):
        assert pod_spec(neuron_vllm_app)["schedulerName"] == "my-scheduler"
        job = next(j for j in objects(neuron_vllm_app, "Job") if "neuron-compile" in j["metadata"]["name"])
        assert job["spec"]["template"]["spec"]["schedulerName"] == "my-scheduler"

    def test_server_loads_precompiled_artifacts_never_compiles(self, neuron_vllm_app):
        env = {e["name"]: e.get("value") for e in container(neuron_vllm_app)["env"]}
        assert env["NEURON_COMPILED_ARTIFACTS"] == "/compiled"
        (fetch,) = pod_spec(neuron_vllm_app)["initContainers"]
        env = {e["name"]: e.get("value") for e in fetch["env"]}
        assert '--key "$MARKER_KEY"' in fetch["command"][-1]
        assert (
            env["MARKER_KEY"].endswith(".inferstack-compile-complete")
            and "neuron/tp8-len4096-seqs8-" in env["ARTIFACTS"]
        )

    def test_compile_job_compiles_exactly_what_the_server_loads(self, neuron_vllm_app):
        job = next(j for j in objects(neuron_vllm_app, "Job") if "neuron-compile" in j["metadata"]["name"])
        pod = job["spec"]["template"]["spec"]
        assert pod["nodeSelector"] == {"inferstack.io/pool": "inf2"}
        assert pod["containers"][0]["resources"]["limits"]["aws.amazon.com/neuron"] == "4"
        assert pod["serviceAccountName"] == "llama-8b-neuron-model-sync"
        env = {e["name"]: e["value"] for e in pod["containers"][0]["env"]}
        kwargs = json.loads(env["ENGINE_KWARGS"])
        server = container(neuron_vllm_app)
        assert pod["containers"][0]["image"] == server["image"]
        assert server_engine_settings(server["args"]) == kwargs
        fetch = {e["name"]: e.get("value") for e in pod_spec(neuron_vllm_app)["initContainers"][0]["env"]}
        assert env["ARTIFACTS_PREFIX"] == fetch["ARTIFACTS"], "the server fetches what this Job writes"
        mounts = {m["mountPath"] for m in pod["containers"][0]["volumeMounts"]}
        assert {"/models", "/compiled"} <= mounts, "weights at the server's path"


@pytest.mark.parametrize("kind", ["hpa"])
def test_hpa_autoscaling(kind, synth_config):
    from inferstack.config import parse_config

    config = parse_config(
        {
            "observability": {"custom_metrics_adapter": True},
            "compute": {"karpenter_pools": [{"name": "gpu", "instance_families": ["g6e"]}]},
            "workloads": [
                {
                    "name": "qwen",
                    "pool": "gpu",
                    "model": {"id": "Qwen/Qwen3-8B"},
                    "autoscaling": {"kind": kind, "min_replicas": 2, "max_replicas": 5},
                }
            ],
        }
    )
    app = synth_config(config, nag=False)
    (hpa,) = objects(app, "HorizontalPodAutoscaler")
    assert hpa["spec"]["minReplicas"] == 2 and hpa["spec"]["maxReplicas"] == 5
    assert hpa["spec"]["metrics"][0]["pods"]["metric"]["name"] == "vllm_num_requests_waiting"
    assert not objects(app, "ScaledObject")


class TestWaitsForTheModelSync:
    """Servers do not crash-loop on a half-copied model: they wait for the sync Job's marker."""

    def test_streamer_server_waits_for_the_marker_in_s3(self, default_app):
        (wait,) = pod_spec(default_app)["initContainers"]
        assert wait["name"] == "wait-for-model"
        assert 's3api head-object --bucket "$BUCKET" --key "$MARKER_KEY"' in wait["command"][-1]
        env = {e["name"]: e.get("value") for e in wait["env"]}
        assert env["MARKER_KEY"] == "models/mistralai/Ministral-3-8B-Instruct-2512/main/.inferstack-sync-complete"

    def test_mounted_server_waits_for_the_marker_in_the_volume(self, s3_mount_app):
        (wait,) = pod_spec(s3_mount_app)["initContainers"]
        assert '[ -f "$MARKER_PATH" ]' in wait["command"][-1]
        assert {"name": "MARKER_PATH", "value": "/models/.inferstack-sync-complete"} in wait["env"]
        assert {"name": "model", "mountPath": "/models", "readOnly": True} in wait["volumeMounts"]

    def test_neuron_compile_waits_for_the_sync(self, neuron_vllm_app):
        job = next(j for j in objects(neuron_vllm_app, "Job") if "neuron-compile" in j["metadata"]["name"])
        env = {e["name"]: e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
        assert env["SYNC_MARKER"].endswith("/.inferstack-sync-complete")

    def test_no_wait_without_a_sync_job(self, synth_config):
        from inferstack.config import parse_config

        config = parse_config(
            {
                "compute": {"karpenter_pools": [{"name": "gpu", "instance_families": ["g6e"]}]},
                "workloads": [{"name": "qwen", "pool": "gpu", "sync_model": False, "model": {"id": "Qwen/Qwen3-8B"}}],
            }
        )
        assert "initContainers" not in pod_spec(synth_config(config, nag=False))


def test_workload_objects_wait_for_their_pod_identity_associations(default_app, bench_app):
    """Defect: a pod created before its Pod Identity association never gets credentials (the EKS Pod Identity webhook
    injects them at admission); each workload's manifest now depends on its associations, as Fluent Bit's does."""
    for app in (default_app, bench_app):
        template = app.template("workloads")
        resources = template["Resources"]
        associations = {k for k, r in resources.items() if r["Type"] == "AWS::EKS::PodIdentityAssociation"}
        assert associations
        workloads = {
            k: r for k, r in resources.items() if k.startswith("Workload") and r["Type"].startswith("Custom::")
        }
        waited = {d for r in workloads.values() for d in r.get("DependsOn", [])}
        assert associations <= waited, sorted(associations - waited)
    cluster = default_app.template("cluster")["Resources"]
    (logging,) = [k for k, r in cluster.items() if r["Type"] == "AWS::EKS::PodIdentityAssociation" and "fluentbit" in k]
    (shipping,) = [r for k, r in cluster.items() if k.startswith("LogShipping") and r["Type"].startswith("Custom::")]
    assert logging in shipping["DependsOn"]


def test_the_streamer_loads_distributed_when_a_replica_runs_several_ranks(tp4_app, default_app):
    """Defect: at TP 4 every rank streamed the whole checkpoint from S3 (4× the bytes); vLLM's Run:ai loader shares
    the reading with {"distributed": true} (vLLM ≥ 0.11.1, PR #27230). One rank reads alone."""
    tp4 = json.loads(arg(container(tp4_app)["args"], "--model-loader-extra-config"))
    assert tp4["distributed"] is True
    single = json.loads(arg(container(default_app)["args"], "--model-loader-extra-config"))
    assert "distributed" not in single
