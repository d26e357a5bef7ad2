"""GIVEN ``kserve`` workloads (examples/kserve-scale-to-zero.yaml in Knative mode; Standard mode built here), WHEN
synthesized, THEN ``minReplicas: 0`` appears only with the mode that honours it, the model is a ``pvc://`` claim
backed by the Mountpoint CSI driver's own identity, and every custom resource waits for the chart of its CRD."""

from __future__ import annotations

import pytest

from inferstack.catalog.kubernetes import KSERVE_NAMESPACE
from inferstack.charts.workload import StorageRefs
from inferstack.config import ConfigError, parse_config
from inferstack.plan.workloads import workloads_plan
from inferstack.stacks.workloads import render_workloads
from tests.synth import SYNC_IMAGE

HELM = "Custom::AWSCDK-EKS-HelmChart"
GATE = "Custom::AWSCDK-EKS-KubernetesObjectValue"
POOLS = {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]}
STANDARD = {
    "kind": "kserve",
    "name": "qwen",
    "pool": "gpu",
    "model": {"id": "Qwen/Qwen3-8B", "source": {"type": "s3_mount"}},
    "scaling": {"min_replicas": 1, "max_replicas": 3, "metric": "cpu", "target": 80},
}


def isvc(app) -> dict:
    (obj,) = [o for o in app.kubernetes_objects() if o["kind"] == "InferenceService"]
    return obj


def rendered(workload: dict, **config) -> list[dict]:
    data = {"compute": POOLS, "storage": {"model_bucket": {}}, "workloads": [workload], **config}
    (item,) = render_workloads(
        workloads_plan(parse_config(data)),
        None,
        StorageRefs(region="us-east-1", bucket="models-bucket", sync_image=SYNC_IMAGE),
    )
    return item.manifest


class TestKnative:
    def test_min_replicas_zero_with_knative_mode(self, kserve_app):
        obj = isvc(kserve_app)
        assert obj["metadata"]["annotations"]["serving.kserve.io/deploymentMode"] == "Knative"
        predictor = obj["spec"]["predictor"]
        assert predictor["minReplicas"] == 0 and predictor["maxReplicas"] == 2
        assert predictor["scaleMetric"] == "concurrency" and predictor["scaleTarget"] == 8

    def test_cold_start_fits_knatives_deadlines(self, kserve_app):
        obj = isvc(kserve_app)
        deadline = int(obj["metadata"]["annotations"]["serving.knative.dev/progress-deadline"].rstrip("s"))
        timeout = obj["spec"]["predictor"]["timeout"]
        assert 300 < timeout <= 600  # the first request waits for the cold start, within Knative's maximum
        assert deadline > timeout  # the revision may take longer to become ready than one request waits
        # Knative gates traffic on readiness: no startup probe, and no port on the probe (Knative's own).
        model = obj["spec"]["predictor"]["model"]
        assert "startupProbe" not in model
        assert model["readinessProbe"]["httpGet"] == {"path": "/v2/health/ready"}

    def test_no_pod_fields_knative_refuses_by_default(self, kserve_app):
        predictor = isvc(kserve_app)["spec"]["predictor"]
        assert not {"initContainers", "volumes", "priorityClassName"} & set(predictor)


class TestStorage:
    def test_the_model_is_the_mountpoint_claim(self, kserve_app):
        objects = kserve_app.kubernetes_objects()
        model = isvc(kserve_app)["spec"]["predictor"]["model"]
        name = model["storageUri"].removeprefix("pvc://")
        assert name.startswith("qwen-model-s3-") and "/" not in name  # the claim is the model's prefix
        (claim,) = [o for o in objects if o["kind"] == "PersistentVolumeClaim" and o["metadata"]["name"] == name]
        (volume,) = [
            o
            for o in objects
            if o["kind"] == "PersistentVolume" and o["metadata"]["name"] == claim["spec"]["volumeName"]
        ]
        assert volume["spec"]["csi"]["driver"] == "s3.csi.aws.com"
        assert "prefix models/Qwen/Qwen3-8B/main/" in volume["spec"]["mountOptions"]
        # No AWS credentials in the predictor: the CSI driver reads the bucket.
        env = {e["name"] for e in model.get("env", [])}
        assert not {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ROLE_ARN"} & env

    def test_the_csi_driver_has_its_identity(self, kserve_app):
        storage = kserve_app.template("storage")
        addons = [r for r in storage["Resources"].values() if r["Type"] == "AWS::EKS::Addon"]
        (mountpoint,) = [a for a in addons if a["Properties"]["AddonName"] == "aws-mountpoint-s3-csi-driver"]
        (association,) = mountpoint["Properties"]["PodIdentityAssociations"]
        assert association["ServiceAccount"] == "s3-csi-driver-sa"

    def test_fsx_is_the_models_directory_in_the_file_system(self):
        objects = rendered(
            {**STANDARD, "model": {"id": "Qwen/Qwen3-8B", "source": {"type": "fsx"}}},
            storage={"model_bucket": {}, "fsx": {"storage_capacity_gib": 1200}},
        )
        (obj,) = [o for o in objects if o["kind"] == "InferenceService"]
        claim, _, path = obj["spec"]["predictor"]["model"]["storageUri"].removeprefix("pvc://").partition("/")
        assert claim.startswith("qwen-model-fsx-") and path == "models/Qwen/Qwen3-8B/main"

    def test_hf_downloads_with_the_token_by_reference(self):
        model = {"id": "meta-llama/Llama-3.2-1B-Instruct", "source": {"type": "hf"}, "hf_token_secret": {"name": "hf"}}
        (obj,) = [o for o in rendered({**STANDARD, "model": model}) if o["kind"] == "InferenceService"]
        spec = obj["spec"]["predictor"]["model"]
        assert "storageUri" not in spec
        assert "--model_id=meta-llama/Llama-3.2-1B-Instruct" in spec["args"]
        assert {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}} in spec["env"]


class TestStandard:
    def test_standard_mode_keeps_a_replica_and_waits_for_the_sync(self):
        objects = rendered(STANDARD)
        (obj,) = [o for o in objects if o["kind"] == "InferenceService"]
        annotations = obj["metadata"]["annotations"]
        assert annotations["serving.kserve.io/deploymentMode"] == "Standard"
        assert annotations["serving.kserve.io/autoscalerClass"] == "hpa"
        predictor = obj["spec"]["predictor"]
        assert predictor["minReplicas"] == 1 and predictor["scaleMetric"] == "cpu"
        assert [c["name"] for c in predictor["initContainers"]] == ["wait-for-model"]
        volumes = {v["name"] for v in predictor["volumes"]}
        mounts = {m["name"] for c in predictor["initContainers"] for m in c["volumeMounts"]}
        assert mounts <= volumes
        model = predictor["model"]
        assert model["startupProbe"]["httpGet"] == {"path": "/v2/health/ready", "port": 8080}
        assert predictor["priorityClassName"] == "inferstack-serving"

    def test_one_fixed_replica_has_no_autoscaler(self):
        (obj,) = [o for o in rendered({**STANDARD, "scaling": {}}) if o["kind"] == "InferenceService"]
        assert obj["metadata"]["annotations"]["serving.kserve.io/autoscalerClass"] == "none"

    def test_gpus_and_placement_of_the_plan(self, kserve_app):
        predictor = isvc(kserve_app)["spec"]["predictor"]
        limits = predictor["model"]["resources"]["limits"]
        assert limits["nvidia.com/gpu"] == "1"  # the controller appends -gpu to the runtime image for it
        assert predictor["nodeSelector"] == {"inferstack.io/pool": "l40s"}
        assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in predictor["tolerations"]

    def test_the_vllm_backend_and_served_name(self, kserve_app):
        args = isvc(kserve_app)["spec"]["predictor"]["model"]["args"]
        assert args[:2] == ["--backend=vllm", "--model_name=qwen"]
        assert "--port" not in args  # the server's own --http_port (8080)


def test_every_custom_resource_waits_for_its_chart(kserve_app):
    template = kserve_app.template("workloads")
    resources = template["Resources"]
    charts = {r["Properties"]["Chart"]: k for k, r in resources.items() if r["Type"] == HELM}
    assert {"kserve-crd", "kserve-resources", "kserve-runtime-configs"} <= set(charts)
    for chart in ("kserve-crd", "kserve-resources", "kserve-runtime-configs"):
        assert resources[charts[chart]]["Properties"]["Namespace"] == KSERVE_NAMESPACE
    assert charts["kserve-crd"] in resources[charts["kserve-resources"]]["DependsOn"]
    addon = next(
        k
        for k, r in resources.items()
        if r["Type"] == "AWS::EKS::Addon" and r["Properties"]["AddonName"] == "cert-manager"
    )
    assert addon in resources[charts["kserve-resources"]]["DependsOn"]
    ((gate_id, gate),) = [
        (k, r)
        for k, r in resources.items()
        if r["Type"] == GATE and r["Properties"]["ObjectType"] == "mutatingwebhookconfiguration"
    ]
    assert gate["Properties"]["ObjectName"] == "inferenceservice.serving.kserve.io"
    assert charts["kserve-resources"] in gate["DependsOn"]
    assert gate_id in resources[charts["kserve-runtime-configs"]]["DependsOn"]
    manifests = [r for r in resources.values() if "InferenceService" in str(r.get("Properties", {}))]
    assert manifests and all(charts["kserve-runtime-configs"] in r["DependsOn"] for r in manifests)


def test_runtime_configs_install_only_the_hugging_face_runtime(kserve_app):
    from inferstack.stacks.workload_operators import kserve_runtime_values

    runtimes = kserve_runtime_values()["kserve"]["servingruntime"]
    assert runtimes["enabled"] is True
    assert [name for name, v in runtimes.items() if isinstance(v, dict) and not v["disabled"]] == ["huggingfaceserver"]


@pytest.mark.parametrize(
    ("fields", "path", "words"),
    [
        ({"model": {"id": "Qwen/Qwen3-8B"}}, "workloads[0].model.source.type", "Pod Identity"),
        ({"engine": {"pipeline_parallel_size": 2}}, "workloads[0].engine.pipeline_parallel_size", "visible GPU"),
        ({"engine": {"extra_args": ["--no-such-flag"]}}, "workloads[0].engine.extra_args[0]", "not a flag"),
        ({"scaling": {"metric": "concurrency"}}, "workloads[0].scaling.metric", "Standard-mode"),
        ({"scaling": {"min_replicas": 3, "max_replicas": 2}}, "workloads[0].scaling.min_replicas", "≤"),
        ({"replicas": 2}, "workloads[0].replicas", "scaling"),
        ({"autoscaling": {}}, "workloads[0].autoscaling", "scaling"),
        ({"name": "q" * 41}, "workloads[0].name", "at most 40"),
    ],
)
def test_bad_fields_are_named(fields, path, words):
    with pytest.raises(ConfigError) as error:
        parse_config({"compute": POOLS, "storage": {"model_bucket": {}}, "workloads": [{**STANDARD, **fields}]})
    problems = {p.path: p.message for p in error.value.problems}
    assert path in problems, problems
    assert words in problems[path]


def test_engine_flags_are_vllm_flags(kserve_app):
    """The server drops unknown arguments silently: every vLLM flag rendered must exist around its vLLM 0.24.0."""
    from inferstack.catalog.engine_flags import vllm_flags
    from inferstack.config.kserve import KSERVE_VLLM_FLAGS

    server_own = {"--backend", "--model_name", "--model_id", "--model_revision"}  # huggingfaceserver's, not vLLM's
    args = isvc(kserve_app)["spec"]["predictor"]["model"]["args"]
    flags = {a.split("=", 1)[0] for a in args if a.startswith("--")} - server_own
    assert flags and all(any(vllm_flags(v).knows(f) for v in KSERVE_VLLM_FLAGS) for f in flags), flags
