"""VllmServer: a vLLM OpenAI-compatible server as Kubernetes objects — Deployment, Service, PodDisruptionBudget,
PodMonitor and (optionally) a KEDA ScaledObject or HPA on queue depth.

Resources are rendered with the L1 API (cdk8s-plus can express neither ``nvidia.com/gpu`` nor
``aws.amazon.com/neuron`` nor ``vpc.amazonaws.com/efa``, and adds CPU/memory limits and a short TCP startup probe
that kill model loads). Every value comes in through typed props; nothing here knows about CloudFormation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.constructs.custom_resource import CustomResource
from inferstack.constructs.model_source import ModelLoading

PORT = 8000
SERVING_PRIORITY_CLASS = "inferstack-serving"
PROBE_PERIOD_SECONDS = 10


@dataclass(frozen=True, kw_only=True)
class EngineArgs:
    """vLLM flags as typed values; ``render()`` gives the argument list. Defaults are vLLM's."""

    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    gpu_memory_utilization: float = 0.90
    max_model_len: int = 8192
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 8192
    dtype: str = "auto"
    quantization: str | None = None
    kv_cache_dtype: str = "auto"
    enable_prefix_caching: bool = True
    enable_chunked_prefill: bool | None = None
    enforce_eager: bool = False
    tool_call_parser: str | None = None
    """Enables ``--enable-auto-tool-choice`` with this parser."""
    mistral_format: bool = False
    """``--tokenizer-mode mistral --config-format mistral`` (Mistral-format checkpoints; required for Mistral tool
    calling since vLLM 0.9)."""
    lmcache: bool = False
    """``--kv-transfer-config`` for LMCacheConnectorV1 (kv_both)."""
    device: str | None = None
    """``neuron`` for Inferentia/Trainium."""
    extra: Sequence[str] = ()

    def render(self) -> list[str]:
        args = [
            "--port",
            str(PORT),
            "--tensor-parallel-size",
            str(self.tensor_parallel_size),
            "--pipeline-parallel-size",
            str(self.pipeline_parallel_size),
            "--gpu-memory-utilization",
            f"{self.gpu_memory_utilization:g}",
            "--max-model-len",
            str(self.max_model_len),
            "--max-num-seqs",
            str(self.max_num_seqs),
            "--max-num-batched-tokens",
            str(self.max_num_batched_tokens),
            "--dtype",
            self.dtype,
            "--kv-cache-dtype",
            self.kv_cache_dtype,
            "--enable-prefix-caching" if self.enable_prefix_caching else "--no-enable-prefix-caching",
        ]
        if self.quantization:
            args += ["--quantization", self.quantization]
        if self.enable_chunked_prefill is not None:
            args.append("--enable-chunked-prefill" if self.enable_chunked_prefill else "--no-enable-chunked-prefill")
        if self.enforce_eager:
            args.append("--enforce-eager")
        if self.mistral_format:
            args += ["--tokenizer-mode", "mistral", "--config-format", "mistral"]
        if self.tool_call_parser:
            args += ["--enable-auto-tool-choice", "--tool-call-parser", self.tool_call_parser]
        if self.lmcache:
            config = {"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"}
            args += ["--kv-transfer-config", json.dumps(config, separators=(",", ":"))]
        if self.device:
            args += ["--device", self.device]
        return [*args, *self.extra]


@dataclass(frozen=True, kw_only=True)
class Autoscaling:
    """Scale on ``vllm:num_requests_waiting``."""

    kind: str = "keda"
    """``keda`` (ScaledObject, Prometheus trigger) or ``hpa`` (autoscaling/v2, pods metric via an adapter)."""
    min_replicas: int = 1
    max_replicas: int = 4
    target_waiting_requests: int = 5
    prometheus_url: str = "http://kube-prometheus-stack-prometheus.monitoring.svc:9090"


@dataclass(frozen=True, kw_only=True)
class VllmServerProps:
    """One vLLM deployment. Resources: ``requests``/``limits`` as Kubernetes quantities (accelerators included)."""

    name: str
    namespace: str
    image: str
    model: ModelLoading
    served_model_name: str
    engine: EngineArgs
    service_account: str
    requests: Mapping[str, str]
    limits: Mapping[str, str]
    node_selector: Mapping[str, str]
    tolerations: Sequence[str]
    """Taint keys to tolerate (``NoSchedule``)."""
    startup_seconds: int
    """Time the startup probe allows for loading the model."""
    replicas: int = 1
    shm_gib: float = 8
    env: Mapping[str, str] = field(default_factory=dict)
    init_containers: Sequence[k8s.Container] = ()
    extra_volumes: Sequence[k8s.Volume] = ()
    extra_mounts: Sequence[k8s.VolumeMount] = ()
    autoscaling: Autoscaling | None = None
    monitoring: bool = True
    termination_grace_seconds: int = 120
    """Time to finish in-flight requests after SIGTERM. Default 120."""


def _quantities(values: Mapping[str, str]) -> dict[str, k8s.Quantity]:
    return {key: k8s.Quantity.from_string(value) for key, value in values.items()}


class VllmServer(Construct):
    """Deployment + Service + PodDisruptionBudget (+ PodMonitor, ScaledObject/HPA) for one vLLM server.

    Defaults that matter in production: serving PriorityClass; accelerator requests equal limits; a memory-backed
    ``/dev/shm``; a startup probe sized to the model load, then readiness and liveness on ``/health``; a preStop
    pause so the Service stops routing before the engine drains; non-root, no privilege escalation, no
    capabilities, RuntimeDefault seccomp; the service-account token is not mounted.
    """

    def __init__(self, scope: Construct, construct_id: str, props: VllmServerProps) -> None:
        super().__init__(scope, construct_id)
        self.props = props
        labels = {
            "app.kubernetes.io/name": props.name,
            "app.kubernetes.io/component": "vllm",
            "app.kubernetes.io/part-of": "inferstack",
        }
        self.labels = labels
        env = [
            k8s.EnvVar(name="HOME", value="/home/vllm"),
            k8s.EnvVar(name="XDG_CACHE_HOME", value="/home/vllm/.cache"),
            k8s.EnvVar(name="VLLM_NO_USAGE_STATS", value="1"),
            k8s.EnvVar(name="DO_NOT_TRACK", value="1"),
            *props.model.env,
            *(k8s.EnvVar(name=k, value=v) for k, v in sorted(props.env.items())),
        ]
        health = k8s.HttpGetAction(path="/health", port=k8s.IntOrString.from_number(PORT))
        container = k8s.Container(
            name="vllm",
            image=props.image,
            command=["vllm", "serve"],
            args=[
                props.model.model,
                "--served-model-name",
                props.served_model_name,
                *props.model.args,
                *props.engine.render(),
            ],
            ports=[k8s.ContainerPort(name="http", container_port=PORT)],
            env=env,
            resources=k8s.ResourceRequirements(requests=_quantities(props.requests), limits=_quantities(props.limits)),
            startup_probe=k8s.Probe(
                http_get=health,
                period_seconds=PROBE_PERIOD_SECONDS,
                timeout_seconds=5,
                failure_threshold=max(1, props.startup_seconds // PROBE_PERIOD_SECONDS),
            ),
            readiness_probe=k8s.Probe(http_get=health, period_seconds=10, timeout_seconds=5, failure_threshold=3),
            liveness_probe=k8s.Probe(http_get=health, period_seconds=15, timeout_seconds=5, failure_threshold=4),
            lifecycle=k8s.Lifecycle(pre_stop=k8s.LifecycleHandler(sleep=k8s.SleepAction(seconds=15))),
            security_context=k8s.SecurityContext(
                run_as_non_root=True,
                run_as_user=1000,
                run_as_group=1000,
                allow_privilege_escalation=False,
                capabilities=k8s.Capabilities(drop=["ALL"]),
            ),
            volume_mounts=[
                k8s.VolumeMount(name="shm", mount_path="/dev/shm"),  # noqa: S108 - memory-backed emptyDir
                k8s.VolumeMount(name="home", mount_path="/home/vllm"),
                k8s.VolumeMount(name="tmp", mount_path="/tmp"),  # noqa: S108 - a pod-local emptyDir
                *props.model.mounts,
                *props.extra_mounts,
            ],
        )
        volumes = [
            k8s.Volume(
                name="shm",
                empty_dir=k8s.EmptyDirVolumeSource(
                    medium="Memory", size_limit=k8s.Quantity.from_string(f"{props.shm_gib:g}Gi")
                ),
            ),
            k8s.Volume(name="home", empty_dir=k8s.EmptyDirVolumeSource()),
            k8s.Volume(name="tmp", empty_dir=k8s.EmptyDirVolumeSource()),
            *props.model.volumes,
            *props.extra_volumes,
        ]
        replicas = props.autoscaling.min_replicas if props.autoscaling else props.replicas
        self.deployment = k8s.KubeDeployment(
            self,
            "deployment",
            metadata=k8s.ObjectMeta(name=props.name, namespace=props.namespace, labels=labels),
            spec=k8s.DeploymentSpec(
                replicas=replicas,
                selector=k8s.LabelSelector(match_labels=labels),
                strategy=k8s.DeploymentStrategy(
                    type="RollingUpdate",
                    rolling_update=k8s.RollingUpdateDeployment(
                        max_surge=k8s.IntOrString.from_number(1), max_unavailable=k8s.IntOrString.from_number(0)
                    ),
                ),
                template=k8s.PodTemplateSpec(
                    metadata=k8s.ObjectMeta(labels=labels),
                    spec=k8s.PodSpec(
                        service_account_name=props.service_account,
                        automount_service_account_token=False,
                        priority_class_name=SERVING_PRIORITY_CLASS,
                        node_selector=dict(props.node_selector),
                        tolerations=[
                            k8s.Toleration(key=key, operator="Exists", effect="NoSchedule")
                            for key in sorted(props.tolerations)
                        ],
                        termination_grace_period_seconds=props.termination_grace_seconds,
                        security_context=k8s.PodSecurityContext(
                            fs_group=1000, seccomp_profile=k8s.SeccompProfile(type="RuntimeDefault")
                        ),
                        init_containers=list(props.init_containers) or None,
                        containers=[container],
                        volumes=volumes,
                    ),
                ),
            ),
        )
        self.service = k8s.KubeService(
            self,
            "service",
            metadata=k8s.ObjectMeta(name=props.name, namespace=props.namespace, labels=labels),
            spec=k8s.ServiceSpec(
                selector=labels,
                ports=[k8s.ServicePort(name="http", port=PORT, target_port=k8s.IntOrString.from_string("http"))],
            ),
        )
        k8s.KubePodDisruptionBudget(
            self,
            "pdb",
            metadata=k8s.ObjectMeta(name=props.name, namespace=props.namespace, labels=labels),
            spec=k8s.PodDisruptionBudgetSpec(
                selector=k8s.LabelSelector(match_labels=labels), max_unavailable=k8s.IntOrString.from_number(1)
            ),
        )
        if props.monitoring:
            CustomResource(
                self,
                "pod-monitor",
                manifest={
                    "apiVersion": "monitoring.coreos.com/v1",
                    "kind": "PodMonitor",
                    "metadata": {"name": props.name, "namespace": props.namespace, "labels": labels},
                    "spec": {
                        "selector": {"matchLabels": labels},
                        "podMetricsEndpoints": [{"port": "http", "path": "/metrics", "interval": "15s"}],
                    },
                },
            )
        if props.autoscaling is not None:
            self._autoscaling(props, labels)

    def _autoscaling(self, props: VllmServerProps, labels: dict[str, str]) -> None:
        scaling = props.autoscaling
        assert scaling is not None
        if scaling.kind == "keda":
            query = (
                f'sum(vllm:num_requests_waiting{{namespace="{props.namespace}",'
                f'pod=~"{props.name}-[a-z0-9]+-[a-z0-9]+"}})'
            )
            manifest: dict[str, Any] = {
                "apiVersion": "keda.sh/v1alpha1",
                "kind": "ScaledObject",
                "metadata": {"name": props.name, "namespace": props.namespace, "labels": labels},
                "spec": {
                    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": props.name},
                    "minReplicaCount": scaling.min_replicas,
                    "maxReplicaCount": scaling.max_replicas,
                    "cooldownPeriod": 600,
                    "triggers": [
                        {
                            "type": "prometheus",
                            "metadata": {
                                "serverAddress": scaling.prometheus_url,
                                "query": query,
                                "threshold": str(scaling.target_waiting_requests),
                            },
                        }
                    ],
                },
            }
            CustomResource(self, "scaled-object", manifest=manifest)
            return
        k8s.KubeHorizontalPodAutoscalerV2(
            self,
            "hpa",
            metadata=k8s.ObjectMeta(name=props.name, namespace=props.namespace, labels=labels),
            spec=k8s.HorizontalPodAutoscalerSpecV2(
                scale_target_ref=k8s.CrossVersionObjectReferenceV2(
                    api_version="apps/v1", kind="Deployment", name=props.name
                ),
                min_replicas=scaling.min_replicas,
                max_replicas=scaling.max_replicas,
                metrics=[
                    k8s.MetricSpecV2(
                        type="Pods",
                        pods=k8s.PodsMetricSourceV2(
                            metric=k8s.MetricIdentifierV2(name="vllm_num_requests_waiting"),
                            target=k8s.MetricTargetV2(
                                type="AverageValue",
                                average_value=k8s.Quantity.from_number(scaling.target_waiting_requests),
                            ),
                        ),
                    )
                ],
            ),
        )
