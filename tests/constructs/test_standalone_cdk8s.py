"""Application teams use the constructs in their own cdk8s charts (and GitOps users export plain YAML):
no aws-cdk-lib stack is needed, AWS values come in as props."""

from __future__ import annotations

import cdk8s
import kubernetes_validate
import yaml

from inferstack.catalog.crds import is_custom_resource, validate_custom_resource
from inferstack.constructs.model_source import ModelSourceProps, SourceKind, model_loading
from inferstack.constructs.pod import PodPlacement
from inferstack.constructs.vllm import EngineArgs, VllmServer, VllmServerProps
from inferstack.constructs.volumes import S3ModelVolume, S3ModelVolumeProps
from inferstack.gates.references import External, check_references


def test_vllm_server_in_a_plain_cdk8s_app_exports_valid_yaml():
    app = cdk8s.App()
    chart = cdk8s.Chart(app, "team-llm")
    volume = S3ModelVolume(
        chart,
        "model",
        S3ModelVolumeProps(
            name="qwen-model", namespace="team", bucket="team-models", prefix="models/qwen3-8b/", region="eu-west-1"
        ),
    )
    VllmServer(
        chart,
        "qwen",
        VllmServerProps(
            name="qwen",
            namespace="team",
            image="vllm/vllm-openai:v0.19.0",
            model=model_loading(
                ModelSourceProps(kind=SourceKind.S3_MOUNT, model_id="Qwen/Qwen3-8B", claim_name=volume.claim_name)
            ),
            served_model_name="qwen3-8b",
            engine=EngineArgs(max_model_len=16384),
            service_account="qwen",
            requests={"cpu": "6", "memory": "48Gi", "nvidia.com/gpu": "1"},
            limits={"memory": "48Gi", "nvidia.com/gpu": "1"},
            placement=PodPlacement(node_selector={"karpenter.sh/nodepool": "gpu"}, tolerations=["nvidia.com/gpu"]),
            startup_seconds=600,
        ),
    )
    documents = list(yaml.safe_load_all(app.synth_yaml()))
    kinds = sorted(d["kind"] for d in documents)
    assert kinds == [
        "Deployment",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "PodDisruptionBudget",
        "PodMonitor",
        "Service",
    ]
    for document in documents:
        if is_custom_resource(document["apiVersion"], document["kind"]):
            assert validate_custom_resource(document) == []
        else:
            kubernetes_validate.validate(document, "1.36.0", strict=True)
    deployment = next(d for d in documents if d["kind"] == "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["args"][0] == "/models"
    assert container["startupProbe"]["failureThreshold"] == 60
    # Nothing the team's cluster lacks: no inferstack PriorityClass unless asked for, every reference resolves
    # once the team's own namespace and service account are declared.
    assert "priorityClassName" not in deployment["spec"]["template"]["spec"]
    external = External(namespaces=External().namespaces | {"team"}, service_accounts=frozenset({("team", "qwen")}))
    assert [str(f) for f in check_references(documents, external)] == []


def test_priority_class_and_scheduler_are_props():
    app = cdk8s.App()
    chart = cdk8s.Chart(app, "c")
    VllmServer(
        chart,
        "s",
        VllmServerProps(
            name="s",
            namespace="team",
            image="vllm/vllm-openai:v0.19.0",
            model=model_loading(ModelSourceProps(kind=SourceKind.HF, model_id="Qwen/Qwen3-8B")),
            served_model_name="s",
            engine=EngineArgs(),
            service_account="s",
            requests={"nvidia.com/gpu": "1"},
            limits={"nvidia.com/gpu": "1"},
            placement=PodPlacement(priority_class="team-serving", scheduler_name="team-scheduler"),
            startup_seconds=600,
        ),
    )
    deployment = next(o for o in chart.to_json() if o["kind"] == "Deployment")
    spec = deployment["spec"]["template"]["spec"]
    assert spec["priorityClassName"] == "team-serving" and spec["schedulerName"] == "team-scheduler"
