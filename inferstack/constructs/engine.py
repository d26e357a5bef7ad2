"""EngineServer: a single-node serving engine other than vLLM (Triton, SGLang, TGI, Ollama…) on the shared serving
pod — what differs between engines is its :class:`EngineSpec` (command, ports, health paths, home, environment);
where the pods run and what they ask for comes from :class:`EnginePlacement`, filled from the plan."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.constructs.pod import QueueMetric, ServingPodProps, ServingWorkload
from inferstack.constructs.scheduling import TolerationSpec


@dataclass(frozen=True, kw_only=True)
class EngineSpec:
    """How one engine runs and answers: its container, ports and endpoints.

    :param port: the HTTP port (named ``http``): probes and the Service use it.
    :param health_path: startup and readiness probe path. :param live_path: liveness path (default: health_path).
    :param metrics_port: the port name the PodMonitor scrapes (``http`` or one of ``ports``).
    """

    component: str
    image: str
    command: Sequence[str]
    args: Sequence[str] = ()
    container_name: str
    port: int
    ports: Mapping[str, int] = field(default_factory=dict)
    service_ports: Sequence[str] = ()
    health_path: str
    live_path: str | None = None
    metrics_path: str = "/metrics"
    metrics_port: str = "http"
    home: str
    user: str
    env: Sequence[k8s.EnvVar] = ()
    queue_metric: QueueMetric | None = None
    termination_grace_seconds: int = 120
    post_start: Sequence[str] = ()
    run_as_image_user: bool = False
    recreate: bool = False


@dataclass(frozen=True, kw_only=True)
class EnginePlacement:
    """Where an engine's pods run and what they ask for (the plan's server pod)."""

    name: str
    namespace: str
    service_account: str
    requests: Mapping[str, str]
    limits: Mapping[str, str]
    node_selector: Mapping[str, str]
    tolerations: Sequence[TolerationSpec] = ()
    startup_seconds: int
    replicas: int | None = 1
    """None: an autoscaler owns them (the Deployment leaves them unset). Default 1."""
    shm_gib: float = 8
    monitoring: bool = True
    priority_class: str | None = None
    volumes: Sequence[k8s.Volume] = ()
    mounts: Sequence[k8s.VolumeMount] = ()
    init_containers: Sequence[k8s.Container] = ()
    labels: Mapping[str, str] = field(default_factory=dict)


class EngineServer(Construct):
    """Deployment + Service + PodDisruptionBudget (+ PodMonitor) of one engine (:class:`ServingWorkload`)."""

    def __init__(
        self, scope: Construct, construct_id: str, spec: EngineSpec, placement: EnginePlacement, *, owner: str
    ) -> None:
        super().__init__(scope, construct_id)
        self.spec, self.placement = spec, placement
        pod = ServingPodProps(
            name=placement.name,
            namespace=placement.namespace,
            component=spec.component,
            image=spec.image,
            command=list(spec.command),
            args=list(spec.args),
            container_name=spec.container_name,
            port=spec.port,
            ports=spec.ports,
            service_ports=spec.service_ports,
            home=spec.home,
            user=spec.user,
            env=spec.env,
            health_path=spec.health_path,
            live_path=spec.live_path,
            metrics_path=spec.metrics_path,
            metrics_port=spec.metrics_port,
            queue_metric=spec.queue_metric,
            service_account=placement.service_account,
            requests=placement.requests,
            limits=placement.limits,
            node_selector=placement.node_selector,
            tolerations=placement.tolerations,
            startup_seconds=placement.startup_seconds,
            replicas=placement.replicas,
            shm_gib=placement.shm_gib,
            init_containers=placement.init_containers,
            volumes=placement.volumes,
            mounts=placement.mounts,
            monitoring=placement.monitoring,
            termination_grace_seconds=spec.termination_grace_seconds,
            post_start=spec.post_start,
            run_as_image_user=spec.run_as_image_user,
            recreate=spec.recreate,
            priority_class=placement.priority_class,
            labels=placement.labels,
        )
        self.workload = ServingWorkload(self, "pod", pod, owner=owner)
        self.deployment = self.workload.deployment
        self.service = self.workload.service
