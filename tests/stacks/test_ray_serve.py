"""GIVEN ray_serve workloads (two models in one app; prefill/decode over NIXL on EFA), WHEN synthesized, THEN the
RayService carries a Serve LLM config the pinned Ray accepts, a CPU head on the system nodes and GPU worker groups
that request what their replicas need."""

from __future__ import annotations

import copy

import pytest
import yaml

from inferstack.catalog.kubernetes import KUBERAY_NAMESPACE
from inferstack.catalog.ray import config_problems
from inferstack.config import ConfigError, parse_config
from inferstack.rules import evaluate
from tests.synth import ROOT, SYNC_IMAGE

HELM = "Custom::AWSCDK-EKS-HelmChart"


def ray_service(app) -> dict:
    (obj,) = [o for o in app.kubernetes_objects() if o["kind"] == "RayService"]
    return obj


def serve_config(app) -> dict:
    return yaml.safe_load(ray_service(app)["spec"]["serveConfigV2"])


def groups(app) -> dict[str, dict]:
    return {g["groupName"]: g for g in ray_service(app)["spec"]["rayClusterConfig"]["workerGroupSpecs"]}


def ray_container(template: dict) -> dict:
    return template["spec"]["containers"][0]  # KubeRay: the Ray container is containers[0]


class TestMultiModel:
    def test_one_app_with_both_models(self, ray_multi_app):
        (app,) = serve_config(ray_multi_app)["applications"]
        assert app["import_path"] == "ray.serve.llm:build_openai_app" and app["route_prefix"] == "/"
        qwen, llama = app["args"]["llm_configs"]
        assert qwen["model_loading_config"] == {"model_id": "Qwen/Qwen3-8B", "model_source": "/models"}
        assert llama["model_loading_config"]["model_source"] == "/models-2"
        assert qwen["engine_kwargs"]["tensor_parallel_size"] == 1 and qwen["engine_kwargs"]["max_model_len"] == 16384
        assert llama["engine_kwargs"]["tensor_parallel_size"] == 4 and llama["engine_kwargs"]["kv_cache_dtype"] == "fp8"
        assert qwen["deployment_config"]["autoscaling_config"] == {
            "min_replicas": 1,
            "max_replicas": 4,
            "target_ongoing_requests": 32,
        }
        # No accelerator_type unless asked for: the pool's nodes decide, and the autoscaler can scale from zero.
        assert "accelerator_type" not in qwen and "accelerator_type" not in llama
        # Each replica inside one worker pod; the ingress takes no CPU, so it runs on the head, not on a GPU pod.
        assert llama["placement_group_config"] == {"bundles": [{"GPU": 1}] * 4, "strategy": "STRICT_PACK"}
        assert app["args"]["ingress_deployment_config"] == {"ray_actor_options": {"num_cpus": 0}}
        assert config_problems("2.52.0", "LLMServingArgs", app["args"]) == []

    def test_worker_group_is_sized_for_the_replicas(self, ray_multi_app):
        (worker,) = groups(ray_multi_app).values()
        resources = ray_container(worker["template"])["resources"]
        assert resources["requests"]["nvidia.com/gpu"] == resources["limits"]["nvidia.com/gpu"] == "4"
        assert worker["minReplicas"] == 0 and worker["maxReplicas"] == 3  # (1 × 4 + 4 × 1 + 2 × 4) GPUs / 4
        assert worker["template"]["spec"]["nodeSelector"] == {"inferstack.io/pool": "l40s"}

    def test_both_models_are_mounted_on_head_and_workers(self, ray_multi_app):
        spec = ray_service(ray_multi_app)["spec"]["rayClusterConfig"]
        for template in (spec["headGroupSpec"]["template"], *(g["template"] for g in spec["workerGroupSpecs"])):
            mounts = {m["mountPath"] for m in ray_container(template)["volumeMounts"]}
            assert {"/models", "/models-2"} <= mounts
            claims = {
                v["persistentVolumeClaim"]["claimName"]
                for v in template["spec"]["volumes"]
                if "persistentVolumeClaim" in v
            }
            # one claim per model, named after what it mounts (charts.workload.model_claim)
            assert sorted(c.rsplit("-", 1)[0] for c in claims) == ["chat-model-2-s3", "chat-model-s3"]

    def test_the_head_has_no_gpu_and_runs_on_the_system_nodes(self, ray_multi_app):
        head = ray_service(ray_multi_app)["spec"]["rayClusterConfig"]["headGroupSpec"]
        container = ray_container(head["template"])
        assert not any("gpu" in k for k in {**container["resources"]["requests"], **container["resources"]["limits"]})
        assert head["template"]["spec"]["nodeSelector"] == {"inferstack.io/pool": "system"}
        assert head["rayStartParams"] == {"num-cpus": "0"}  # no replica is ever placed on the head
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert ports["serve"] == 8000 and ports["dashboard"] == 8265 and ports["gcs-server"] == 6379

    def test_kuberay_is_installed_first(self, ray_multi_app):
        template = ray_multi_app.template("workloads")
        ((release_id, release),) = [
            (k, r)
            for k, r in template["Resources"].items()
            if r["Type"] == HELM and r["Properties"]["Chart"] == "kuberay-operator"
        ]
        assert release["Properties"]["Namespace"] == KUBERAY_NAMESPACE and release["Properties"]["Version"] == "1.7.0"
        manifests = [r for r in template["Resources"].values() if "RayService" in str(r.get("Properties", {}))]
        assert manifests and all(release_id in r["DependsOn"] for r in manifests)

    def test_head_and_workers_are_scraped(self, ray_multi_app):
        monitors = [o for o in ray_multi_app.kubernetes_objects() if o["kind"] == "PodMonitor"]
        assert sorted(m["metadata"]["name"] for m in monitors) == ["chat-head", "chat-workers"]
        assert all(m["spec"]["podMetricsEndpoints"][0]["port"] == "metrics" for m in monitors)


class TestPrefillDecode:
    def test_pd_builder_with_nixl_over_libfabric(self, ray_pd_app):
        (app,) = serve_config(ray_pd_app)["applications"]
        assert app["import_path"] == "ray.serve.llm:build_pd_openai_app"
        prefill, decode = app["args"]["prefill_config"], app["args"]["decode_config"]
        assert prefill["model_loading_config"]["model_id"] == decode["model_loading_config"]["model_id"]
        for side, config in (("prefill", prefill), ("decode", decode)):
            transfer = config["engine_kwargs"]["kv_transfer_config"]
            assert transfer["kv_connector"] == "NixlConnector"
            assert transfer["kv_connector_extra_config"]["backends"] == ["LIBFABRIC"]
            assert config["engine_kwargs"]["tensor_parallel_size"] == 8
            bundles = config["placement_group_config"]["bundles"]
            assert len(bundles) == 8 and all(b == {"GPU": 1, side: 1} for b in bundles)
            assert config["placement_group_config"]["strategy"] == "STRICT_PACK"
        assert app["args"]["proxy_deployment_config"] == {"ray_actor_options": {"num_cpus": 0}}
        assert config_problems("2.52.0", "PDServingArgs", app["args"]) == []

    def test_prefill_and_decode_groups_request_efa_on_one_zone_pool(self, ray_pd_app):
        by_name = groups(ray_pd_app)
        assert sorted(by_name) == ["decode", "prefill"]
        for side, group in by_name.items():
            assert group["resources"] == {side: "8"}  # their replicas land on their own group
            container = ray_container(group["template"])
            for kind in ("requests", "limits"):
                assert container["resources"][kind]["nvidia.com/gpu"] == "8"
                assert container["resources"][kind]["vpc.amazonaws.com/efa"] == "32"
            assert "add" not in container["securityContext"]["capabilities"]  # uid 1000 would drop it at exec
            assert {e["name"]: e.get("value") for e in container["env"]}["FI_PROVIDER"] == "efa"
            assert group["template"]["spec"]["nodeSelector"] == {"inferstack.io/pool": "p5-efa"}
        pool = ray_pd_app.config.pool("p5-efa")
        assert pool.availability_zone == 0  # one pool, pinned to one zone: prefill and decode share it

    def test_the_autoscaler_gets_the_ray_containers_home(self, ray_pd_app):
        """KubeRay builds the autoscaler sidecar from autoscalerOptions alone (common/pod.go:935-1034 at v1.7.0): the
        DLC's HOME (/root) is not uid 1000's, so the emptyDir HOME of the Ray container is given to it too."""
        cluster = ray_service(ray_pd_app)["spec"]["rayClusterConfig"]
        home = next(
            e["value"] for e in ray_container(cluster["headGroupSpec"]["template"])["env"] if e["name"] == "HOME"
        )
        options = cluster["autoscalerOptions"]
        assert {"name": "HOME", "value": home} in options["env"]
        assert {"name": "home", "mountPath": home} in options["volumeMounts"]

    def test_only_the_autoscaler_sees_the_api_token(self, ray_pd_app):
        """The Ray autoscaler needs the service-account token (KubeRay mounts none and the pods do not automount);
        the Ray container does not get it."""
        cluster = ray_service(ray_pd_app)["spec"]["rayClusterConfig"]
        head = cluster["headGroupSpec"]["template"]
        (volume,) = [v for v in head["spec"]["volumes"] if v["name"] == "autoscaler-token"]
        kinds = {next(iter(source)) for source in volume["projected"]["sources"]}
        assert kinds == {"serviceAccountToken", "configMap", "downwardAPI"}
        (mount,) = [m for m in cluster["autoscalerOptions"]["volumeMounts"] if m["name"] == "autoscaler-token"]
        assert mount == {
            "name": "autoscaler-token",
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
            "readOnly": True,
        }
        assert head["spec"]["automountServiceAccountToken"] is False
        assert all(m["name"] != "autoscaler-token" for m in ray_container(head)["volumeMounts"])


POOLS = {
    "karpenter_pools": [
        {"name": "l40s", "instance_types": ["g6e.12xlarge"]},
        {"name": "inf2", "instance_types": ["inf2.24xlarge"]},
    ]
}
QWEN = {"model": {"id": "Qwen/Qwen3-8B", "source": {"type": "s3_mount"}}}


def problems(**workload: object) -> list[str]:
    data = {"name": "chat", "kind": "ray_serve", "pool": "l40s", "models": [QWEN], **workload}
    with pytest.raises(ConfigError) as raised:
        parse_config({"compute": POOLS, "workloads": [data]})
    return [str(p) for p in raised.value.problems]


@pytest.mark.parametrize(
    ("workload", "path", "words"),
    [
        ({"pool": "inf2"}, "workloads[0].pool", "kind vllm"),
        ({"models": [QWEN, QWEN]}, "workloads[0].models", "unique"),
        (
            {"prefill_decode": {}, "models": [QWEN, {**QWEN, "model": {**QWEN["model"], "served_name": "b"}}]},
            "workloads[0].models",
            "exactly one",
        ),
        (
            {"models": [{**QWEN, "engine": {"extra_args": ["--enforce-eager"]}}]},
            "workloads[0].models[0].engine.extra_args",
            "typed",
        ),
        ({"name": "n" * 48}, "workloads[0].name", "47"),
        ({"replicas": 2}, "workloads[0].replicas", "autoscaling"),
        ({"models": [{"model": {"id": "Qwen/Qwen3-8B"}}]}, "workloads[0].models[0].model.source.type", "s3_mount"),
        (
            {"models": [{**QWEN, "engine": {"tensor_parallel_size": 4}}], "workers": {"gpus_per_pod": 2}},
            "workloads[0].workers.gpus_per_pod",
            "split a tensor-parallel group of 4 across pods",
        ),
        (
            {
                "models": [{**QWEN, "engine": {"tensor_parallel_size": 2, "pipeline_parallel_size": 3}}],
                "workers": {"gpus_per_pod": 4},
            },
            "workloads[0].workers.gpus_per_pod",
            "do not divide a replica of 6 ranks (models[0].engine)",
        ),
        (
            {
                "models": [
                    {**QWEN, "engine": {"tensor_parallel_size": 2, "pipeline_parallel_size": 2}},
                    {**QWEN, "model": {**QWEN["model"], "served_name": "b"}},
                ],
                "workers": {"gpus_per_pod": 2},
            },
            "workloads[0].workers.gpus_per_pod",
            "replicas of 1 and 4 ranks",
        ),
        ({"image": "rayproject/ray-llm:2.58.0-py312-cu128"}, "workloads[0].ray_version", "required"),
        (
            {"image": "rayproject/ray-llm:2.56.0-py312-cu130", "ray_version": "2.56.0"},
            "workloads[0].ray_version",
            "2.52.0",
        ),
        ({"startup_timeout_seconds": 600}, "workloads[0].startup_timeout_seconds", "KubeRay"),
        (
            {"models": [{**QWEN, "engine": {"image": "vllm/vllm-openai:v0.19.0"}}]},
            "workloads[0].models[0].engine.image",
            "ray_version",
        ),
    ],
)
def test_config_errors_name_the_field(workload, path, words):
    (problem,) = problems(**workload)
    assert problem.startswith(f"{path}:") and words in problem


def test_model_fit_judges_each_model_of_the_app():
    from inferstack.config.edit import with_changes
    from inferstack.rules import evaluate

    llama = {
        "model": {
            "id": "meta-llama/Llama-3.1-70B-Instruct",
            "hf_token_secret": {"name": "hf"},
            "source": {"type": "s3_mount"},
        }
    }
    data = {
        "compute": POOLS,
        "workloads": [{"name": "chat", "kind": "ray_serve", "pool": "l40s", "models": [QWEN, llama]}],
    }
    (fit,) = [f for f in evaluate(parse_config(data)).errors if f.rule == "MODEL-FIT"]
    assert fit.path == "workloads[0].models[1].engine.tensor_parallel_size"
    (changes, *_) = fit.suggestions
    assert changes == {"workloads[0].models[1].engine.tensor_parallel_size": 4}
    assert evaluate(with_changes(parse_config(data), changes)).errors == []


def test_model_fit_judges_prefill_and_decode_each():
    import copy

    from inferstack.rules import evaluate
    from tests.synth import ROOT

    data = yaml.safe_load((ROOT / "examples" / "ray-pd-efa-p5.yaml").read_text())
    bad = copy.deepcopy(data)
    bad["workloads"][0]["prefill_decode"]["decode"]["engine"]["tensor_parallel_size"] = 1
    paths = {f.path for f in evaluate(parse_config(bad)).errors if f.rule == "MODEL-FIT"}
    assert paths == {"workloads[0].prefill_decode.decode.engine.tensor_parallel_size"}
    assert [f for f in evaluate(parse_config(data)).errors] == []


def test_unknown_serve_config_keys_are_refused():
    from inferstack.charts.ray_serve import RayServeChart, RayServeConfigError

    good = {"llm_configs": [{"model_loading_config": {"model_id": "m"}, "engine_kwargs": {"max_model_len": 8192}}]}
    RayServeChart._check({"args": good}, "2.52.0")
    misspelt = {"llm_configs": [{"model_loading_config": {"model_id": "m"}, "engine_kwarg": {}}]}
    with pytest.raises(RayServeConfigError, match=r"args.llm_configs\[0\].engine_kwarg: not a field of Ray 2.52.0"):
        RayServeChart._check(
            {"args": {**misspelt, "llm_configs": [{**misspelt["llm_configs"][0], "engine_kwargs": {}}]}}, "2.52.0"
        )
    dropped = {"llm_configs": [{"engine_kwargs": {}, "deployment_config": {"autoscaling_config": {"min_replica": 1}}}]}
    with pytest.raises(RayServeConfigError, match=r"min_replica: not a field of Ray 2\.52\.0 AutoscalingConfig"):
        RayServeChart._check({"args": dropped}, "2.52.0")
    with pytest.raises(RayServeConfigError, match=r"engine_kwargs\.max_model_length: not an engine argument"):
        RayServeChart._check({"args": {"llm_configs": [{"engine_kwargs": {"max_model_length": 1}}]}}, "2.52.0")


def test_the_sync_role_writes_every_models_prefix(ray_multi_app):
    """Mountpoint reads with the CSI driver's role; the model-sync Jobs of both models write with the workload's."""
    import json

    policies = [
        r["Properties"]
        for r in ray_multi_app.template("workloads")["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy" and "Sync" in json.dumps(r["Properties"]["Roles"])
    ]
    text = json.dumps(policies)
    assert "models/Qwen/Qwen3-8B/main/*" in text and "models/meta-llama/Llama-3.1-70B-Instruct/main/*" in text


def test_the_chart_checks_what_it_renders(monkeypatch):
    """A key the pinned Ray does not know (here: one inferstack would add by mistake) stops the render."""
    import cdk8s

    from inferstack.charts import ray_serve
    from inferstack.charts.workload import StorageRefs
    from inferstack.plan import resolve

    data = {"compute": POOLS, "workloads": [{"name": "chat", "kind": "ray_serve", "pool": "l40s", "models": [QWEN]}]}
    (resolved,) = resolve(parse_config(data)).workloads
    original = ray_serve.llm_config
    monkeypatch.setattr(ray_serve, "llm_config", lambda *a, **k: {**original(*a, **k), "num_replicas": 2})
    with pytest.raises(ray_serve.RayServeConfigError, match=r"num_replicas: not a field of Ray 2\.58\.0 LLMConfig"):
        ray_serve.RayServeChart(
            cdk8s.App(), "c", resolved, StorageRefs(region="us-east-1", bucket="b", sync_image=SYNC_IMAGE)
        )


def test_engine_kwargs_are_checked_against_the_images_own_vllm(monkeypatch):
    """rayproject/ray-llm:2.58.0 carries vLLM 0.26.0: an engine argument only a later vLLM has (0.31.0's
    ``max_num_active_seqs``) stops the render, naming 0.26.0."""
    import cdk8s

    from inferstack.charts import ray_serve
    from inferstack.charts.workload import StorageRefs
    from inferstack.plan import resolve

    data = {"compute": POOLS, "workloads": [{"name": "chat", "kind": "ray_serve", "pool": "l40s", "models": [QWEN]}]}
    (resolved,) = resolve(parse_config(data)).workloads
    original = ray_serve.engine_kwargs
    monkeypatch.setattr(ray_serve, "engine_kwargs", lambda *a, **k: {**original(*a, **k), "max_num_active_seqs": 4})
    with pytest.raises(
        ray_serve.RayServeConfigError, match=r"max_num_active_seqs: not an engine argument of vLLM 0\.26\.0"
    ):
        ray_serve.RayServeChart(
            cdk8s.App(), "c", resolved, StorageRefs(region="us-east-1", bucket="b", sync_image=SYNC_IMAGE)
        )


def test_an_accelerator_type_is_declared_on_the_worker_groups():
    """Ray adds accelerator_type:<X> to every bundle; the autoscaler knows a group's resources from its spec only."""
    import cdk8s

    from inferstack.charts import ray_serve
    from inferstack.charts.workload import StorageRefs
    from inferstack.plan import resolve

    model = {**QWEN, "accelerator_type": "L40S"}
    data = {"compute": POOLS, "workloads": [{"name": "chat", "kind": "ray_serve", "pool": "l40s", "models": [model]}]}
    (resolved,) = resolve(parse_config(data)).workloads
    objects = ray_serve.RayServeChart(
        cdk8s.App(), "c", resolved, StorageRefs(region="us-east-1", bucket="b", sync_image=SYNC_IMAGE)
    ).to_json()
    (service,) = [o for o in objects if o["kind"] == "RayService"]
    (group,) = service["spec"]["rayClusterConfig"]["workerGroupSpecs"]
    assert group["resources"] == {"accelerator_type:L40S": "1"}
    (config,) = yaml.safe_load(service["spec"]["serveConfigV2"])["applications"][0]["args"]["llm_configs"]
    assert config["accelerator_type"] == "L40S"


def test_the_head_fit_counts_the_autoscaler_sidecar():
    """m6i.xlarge system nodes give 3 vCPU to pods: a 3-vCPU head plus the 500m sidecar stays Pending."""
    from inferstack.rules import evaluate

    data = {
        "compute": POOLS,
        "workloads": [{"name": "chat", "kind": "ray_serve", "pool": "l40s", "models": [QWEN], "head": {"cpu": 3}}],
    }
    (finding,) = [f for f in evaluate(parse_config(data)).errors if f.rule == "RAY-HEAD-FIT"]
    assert "3.5 vCPU" in finding.message and "autoscaler sidecar" in finding.message
    data["workloads"][0]["head"] = {"cpu": 2.5}
    assert [f for f in evaluate(parse_config(data)).errors if f.rule == "RAY-HEAD-FIT"] == []


def test_efa_worker_pods_take_a_node_each():
    """TP 4 P/D on p5: a worker pod asks for 4 GPUs but every EFA device, so two prefill replicas need two nodes."""
    from inferstack.rules import evaluate
    from tests.synth import ROOT

    data = yaml.safe_load((ROOT / "examples" / "ray-pd-efa-p5.yaml").read_text())
    pd = data["workloads"][0]["prefill_decode"]
    pd["prefill"] = {"engine": {"tensor_parallel_size": 4}, "autoscaling": {"min_replicas": 2, "max_replicas": 2}}
    pd["decode"]["engine"]["tensor_parallel_size"] = 4
    (finding,) = [f for f in evaluate(parse_config(data)).errors if f.rule == "RAY-WORKER-CAPACITY"]
    assert "need 3 node(s)" in finding.message and "one EFA pod per node" in finding.message


def test_a_serve_config_error_is_reported_as_one_line():
    """check and synth catch PropError: a bad Serve config is a named problem, not a traceback."""
    from inferstack.charts.ray_serve import RayServeConfigError
    from inferstack.constructs.validation import PropError

    assert issubclass(RayServeConfigError, PropError)


def test_ray_runs_with_token_authentication(ray_multi_app):
    """Ray 2.58 runs with authentication off by default: any pod reaching the Jobs API could run code in a cluster
    holding HF_TOKEN. KubeRay 1.7.0's authOptions generates the token and sets it on every Ray container."""
    (service,) = [o for o in ray_multi_app.kubernetes_objects() if o["kind"] == "RayService"]
    assert service["spec"]["rayClusterConfig"]["authOptions"] == {"mode": "token"}


def test_the_pd_image_runs_as_uid_1000_with_a_home_it_can_write(ray_pd_app):
    """The AWS Ray LLM DLC has no USER (root, HOME /root): inferstack's Ray pods run as uid 1000, so HOME is an
    emptyDir of theirs."""
    (service,) = [o for o in ray_pd_app.kubernetes_objects() if o["kind"] == "RayService"]
    cluster = service["spec"]["rayClusterConfig"]
    templates = [cluster["headGroupSpec"]["template"], *(g["template"] for g in cluster["workerGroupSpecs"])]
    for template in templates:
        ray = template["spec"]["containers"][0]
        assert ray["image"] == "public.ecr.aws/deep-learning-containers/ray:serve-llm-cuda-v1.0"
        assert {"name": "HOME", "value": "/home/ray"} in ray["env"]
        assert {"name": "home", "mountPath": "/home/ray"} in ray["volumeMounts"]
        assert ray["securityContext"]["runAsUser"] == 1000


#: DeepSeek-R1 at TP 8 × PP 2 on two 8-GPU H100 nodes (issue 26 §2.8): a replica spanning two worker pods.
R1 = {
    "name": "r1",
    "compute": {
        "karpenter_pools": [
            {"name": "h100", "instance_types": ["p5.48xlarge"], "availability_zone": 0, "max_accelerators": 32}
        ]
    },
    "workloads": [
        {
            "name": "r1",
            "kind": "ray_serve",
            "namespace": "ray",
            "pool": "h100",
            "models": [
                {
                    "model": {"id": "deepseek-ai/DeepSeek-R1", "source": {"type": "s3_mount"}},
                    "engine": {"tensor_parallel_size": 8, "pipeline_parallel_size": 2, "max_model_len": 16384},
                    "autoscaling": {"min_replicas": 1, "max_replicas": 2},
                }
            ],
            "workers": {"gpus_per_pod": 8},
        }
    ],
}


class TestReplicaAcrossPods:
    @pytest.fixture(scope="class")
    @classmethod
    def rendered(cls) -> list[dict]:
        from tests.charts.conftest import render

        return render(copy.deepcopy(R1))

    def test_the_config_passes_every_rule(self):
        report = evaluate(parse_config(copy.deepcopy(R1)))
        assert report.errors == [] and report.warnings == []

    def test_its_placement_group_spills_over_pods(self, rendered):
        """PACK (Serve LLM's default) fills one worker pod's 8 GPUs, then the next; STRICT_PACK would never place a
        16-GPU group on 8-GPU pods."""
        (service,) = [o for o in rendered if o["kind"] == "RayService"]
        (config,) = yaml.safe_load(service["spec"]["serveConfigV2"])["applications"][0]["args"]["llm_configs"]
        assert config["placement_group_config"] == {"bundles": [{"GPU": 1}] * 16, "strategy": "PACK"}
        assert config["engine_kwargs"]["tensor_parallel_size"] == 8
        assert config["engine_kwargs"]["pipeline_parallel_size"] == 2

    def test_the_worker_group_has_room_for_every_replicas_pods(self, rendered):
        (service,) = [o for o in rendered if o["kind"] == "RayService"]
        (group,) = service["spec"]["rayClusterConfig"]["workerGroupSpecs"]
        assert group["maxReplicas"] == 4  # 2 replicas × 2 pods
        limits = group["template"]["spec"]["containers"][0]["resources"]["limits"]
        assert str(limits["nvidia.com/gpu"]) == "8"

    def test_a_replica_one_pod_holds_keeps_strict_pack(self):
        from inferstack.charts.ray_serve import placement
        from inferstack.config.engine import VllmEngineConfig

        assert placement(VllmEngineConfig(tensor_parallel_size=4), 8)["strategy"] == "STRICT_PACK"
        side = placement(VllmEngineConfig(tensor_parallel_size=4, pipeline_parallel_size=2), 4, resource="prefill")
        assert side == {"bundles": [{"GPU": 1, "prefill": 1}] * 8, "strategy": "PACK"}

    def test_a_pool_across_zones_is_named(self):
        data = copy.deepcopy(R1)
        del data["compute"]["karpenter_pools"][0]["availability_zone"]
        (finding,) = [f for f in evaluate(parse_config(data)).warnings if f.rule == "RAY-SPANNING-ZONE"]
        assert finding.path == "workloads[0].pool" and "2 worker pods" in finding.message

    def test_max_pods_below_one_replicas_pods_is_refused(self):
        data = copy.deepcopy(R1)
        data["workloads"][0]["workers"]["max_pods"] = 1
        with pytest.raises(ConfigError) as raised:
            parse_config(data)
        (problem,) = raised.value.problems
        assert problem.path == "workloads[0].workers.max_pods" and "at least 2" in problem.message

    def test_a_tp_group_larger_than_a_node_is_lowered_first(self):
        data = copy.deepcopy(R1)
        engine = data["workloads"][0]["models"][0]["engine"]
        engine |= {"tensor_parallel_size": 16, "pipeline_parallel_size": 1}
        del data["workloads"][0]["workers"]["gpus_per_pod"]
        report = evaluate(parse_config(data))
        for rule in ("PARALLEL-NODE", "SCHEDULING"):
            (finding,) = [f for f in report.errors if f.rule == rule]
            assert "lower tensor_parallel_size to a node's GPUs and raise pipeline_parallel_size" in finding.fix

    def test_model_fit_spreads_a_ray_replica_over_worker_pods(self):
        """DeepSeek-R1's weights fit no 8-GPU A100-40GB node at any TP: the fix spreads pipeline stages over worker
        pods, not a kind Ray Serve is not."""
        data = copy.deepcopy(R1)
        data["compute"]["karpenter_pools"][0]["instance_types"] = ["p4d.24xlarge"]
        engine = data["workloads"][0]["models"][0]["engine"]
        engine |= {"tensor_parallel_size": 8, "pipeline_parallel_size": 1}
        del data["workloads"][0]["workers"]["gpus_per_pod"]
        (finding,) = [f for f in evaluate(parse_config(data)).errors if f.rule == "MODEL-FIT"]
        assert "span worker pods (workers.gpus_per_pod" in finding.fix and "vllm_multinode" not in finding.fix

    def test_a_prefill_decode_app_is_not_told_to_add_pipeline_stages(self):
        """Its sides take no pipeline stages (NixlConnector's pull mode): the fix is to drop prefill_decode."""
        data = yaml.safe_load((ROOT / "examples" / "ray-pd-efa-p5.yaml").read_text())
        data["workloads"][0]["prefill_decode"]["prefill"]["engine"]["tensor_parallel_size"] = 16
        report = evaluate(parse_config(data))
        fixes = [f.fix for f in report.errors if f.rule in ("PARALLEL-NODE", "SCHEDULING")]
        assert fixes and not any("raise pipeline_parallel_size" in f or "gpus_per_pod" in f for f in fixes), fixes
        (scheduling,) = [f.fix for f in report.errors if f.rule == "SCHEDULING"]
        assert "serve it without prefill_decode" in scheduling

    def test_prefill_decode_sides_take_no_pipeline_stages(self):
        """vLLM 0.26.0's NixlConnector (pull mode) moves one pipeline stage's KV cache."""
        pd = {"prefill": {"engine": {"pipeline_parallel_size": 2}}}
        with pytest.raises(ConfigError) as raised:
            parse_config(
                {
                    "compute": POOLS,
                    "workloads": [
                        {"name": "c", "kind": "ray_serve", "pool": "l40s", "models": [QWEN], "prefill_decode": pd}
                    ],
                }
            )
        assert any(
            p.path == "workloads[0].prefill_decode.prefill.engine.pipeline_parallel_size"
            and "one pipeline stage" in p.message
            for p in raised.value.problems
        )

    def test_without_gpus_per_pod_the_fix_is_to_span_pods(self):
        data = copy.deepcopy(R1)
        del data["workloads"][0]["workers"]["gpus_per_pod"]
        report = evaluate(parse_config(data))
        (parallel,) = [f for f in report.errors if f.rule == "PARALLEL-NODE"]
        assert parallel.fix.startswith("use workers.gpus_per_pod 8 (the replica spans 2 worker pods")
        assert parallel.suggestions == ({"workloads[0].workers.gpus_per_pod": 8},)
        (scheduling,) = [f for f in report.errors if f.rule == "SCHEDULING"]
        assert "span worker pods (workers.gpus_per_pod" in scheduling.fix and "vllm_multinode" not in scheduling.fix

    def test_the_pool_holds_every_pod_of_a_starting_replica(self):
        """RAY-WORKER-CAPACITY counts a spanning replica's pods: one p5 node cannot start a replica of two pods."""
        data = copy.deepcopy(R1)
        data["compute"]["karpenter_pools"][0]["max_accelerators"] = 8
        (finding,) = [f for f in evaluate(parse_config(data)).errors if f.rule == "RAY-WORKER-CAPACITY"]
        assert "need 2 node(s)" in finding.message and "it holds 1" in finding.message


@pytest.mark.parametrize(
    ("tp", "replica", "node", "split"),
    [(8, 16, 8, 8), (4, 12, 8, 4), (4, 16, 8, 8), (2, 6, 8, 6), (16, 16, 8, None)],
)
def test_the_pod_split_keeps_tp_groups_whole_and_pods_full(tp, replica, node, split):
    from inferstack.rules.serving.common import ray_pod_split

    assert ray_pod_split(tp, replica, node) == split


class TestSpanningOverEfa:
    """RAY-SPANNING-EFA: on an EFA pool a spanning replica's stages talk EFA only with efa: true and an image that has
    NCCL's EFA plugin; otherwise a warning says they go over TCP."""

    @staticmethod
    def _config(**fields: object) -> dict:
        data = copy.deepcopy(R1)
        data["compute"]["karpenter_pools"][0]["efa"] = True
        data["workloads"][0].update(fields)
        return data

    def test_efa_off_on_an_efa_pool_warns_at_efa(self):
        (finding,) = [f for f in evaluate(parse_config(self._config())).warnings if f.rule == "RAY-SPANNING-EFA"]
        assert finding.path == "workloads[0].efa" and "no EFA devices" in finding.message

    def test_efa_on_the_default_image_warns_at_image(self):
        report = evaluate(parse_config(self._config(efa=True)))
        (finding,) = [f for f in report.warnings if f.rule == "RAY-SPANNING-EFA"]
        assert finding.path == "workloads[0].image" and "aws-ofi-nccl" in finding.message

    def test_efa_on_the_dlc_is_compliant(self):
        from inferstack.catalog.versions import ENGINE_IMAGES, ENGINE_RAY_VERSIONS

        data = self._config(efa=True, image=ENGINE_IMAGES["ray-llm-efa"], ray_version=ENGINE_RAY_VERSIONS["ray-llm"])
        assert not [f for f in evaluate(parse_config(data)).warnings if f.rule == "RAY-SPANNING-EFA"]

    def test_an_image_inferstack_has_no_facts_of_is_not_judged(self):
        data = self._config(
            efa=True, image="123456789012.dkr.ecr.us-west-2.amazonaws.com/team/ray:1", ray_version="2.58.0"
        )
        assert not [f for f in evaluate(parse_config(data)).warnings if f.rule == "RAY-SPANNING-EFA"]


def test_a_ray_image_of_its_own_is_sized_with_the_pinned_rays_vllm():
    """Its vLLM is not known: the pinned Ray's (2.58.0 requires vllm 0.26.0) is the nearest, as its engine_kwargs are
    checked against it — not the GPU image's 0.31.0."""
    from inferstack.plan.served import engine_release, engines

    data = copy.deepcopy(R1)
    data["workloads"][0] |= {
        "image": "123456789012.dkr.ecr.us-west-2.amazonaws.com/team/ray:1",
        "ray_version": "2.58.0",
    }
    assert {engine_release(e) for _, e in engines(parse_config(data))} == {"0.26.0"}
