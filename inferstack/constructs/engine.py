"""EngineServer: a single-node serving engine other than vLLM (Triton, SGLang, TGI, Ollama…) on the shared serving
pod — what differs between engines is its :class:`EngineSpec` (command, ports, health paths, home, environment);
where the pods run and what they ask for comes from :class:`EnginePlacement`, filled from the plan."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.constructs.pod import PodPlacement, QueueMetric, ServingPodProps, ServingWorkload
from inferstack.constructs.pod.mounts import Mount


@dataclass(frozen=True, kw_only=True)
class EngineSpec:
    """How one engine runs and answers: its container, ports and endpoints.

    :param port: the HTTP port (named ``http``): probes and the Service use it.
    :param health_path: startup and readiness probe path. :param live_path: liveness path (default: health_path).
    :param metrics_port: the port name the PodMonitor scrapes (``http`` or one of ``ports``).
    """

    component: str
    """``app.kubernetes.io/component`` of the objects (the engine, e.g. ``triton``)."""
    image: str
    """The engine's container image, pinned by tag or digest."""
    command: Sequence[str]
    """The engine container's command (entrypoint)."""
    args: Sequence[str] = ()
    """The engine container's arguments (its command line). Default none."""
    container_name: str
    """Name of the engine container."""
    port: int
    """The engine's HTTP port (named ``http``): probes, the Service and (by default) the PodMonitor use it."""
    ports: Mapping[str, int] = field(default_factory=dict)
    """Extra container ports, name → port (IANA port names, neither ``http`` nor ``port``). Default none."""
    service_ports: Sequence[str] = ()
    """Names of ``ports`` the Service exposes besides ``http`` (e.g. Triton's ``grpc``). Default none."""
    health_path: str
    """Startup and readiness probe path (on ``port``)."""
    live_path: str | None = None
    """Liveness probe path (on ``port``). Default: ``health_path``."""
    metrics_path: str = "/metrics"
    """Path the PodMonitor scrapes. Default ``/metrics``."""
    metrics_port: str = "http"
    """Name of the port the PodMonitor scrapes: ``http`` or one of ``ports``. Default ``http``."""
    home: str
    """The writable HOME of the serving user (an emptyDir), e.g. where the engine keeps its caches."""
    user: str
    """USER / LOGNAME of the serving process."""
    env: Sequence[k8s.EnvVar] = ()
    """The engine's environment (after HOME, USER and LOGNAME). Default none."""
    queue_metric: QueueMetric | None = None
    """The engine's queue-depth metric, passed to the serving pod; EngineServer renders no autoscaler, so nothing
    reads it today. Default none."""
    termination_grace_seconds: int = 120
    """The pods' terminationGracePeriodSeconds (preStop pause + the engine's drain), seconds. Default 120."""
    post_start: Sequence[str] = ()
    """A postStart exec command run in the container once it started (probes wait for it), e.g. pulling Ollama's
    models. Default none."""
    run_as_image_user: bool = False
    """Run as the image's own user instead of uid 1000 (for images whose runtime lives under ``/root``). Default
    False."""
    recreate: bool = False
    """Replace pods by stopping the old one first (a ReadWriteOnce volume cannot attach to a surge pod). Default
    False: surge one, never unavailable."""


@dataclass(frozen=True, kw_only=True)
class EnginePlacement:
    """Where an engine's pods run and what they ask for (the plan's server pod)."""

    name: str
    """Name of the Deployment, Service, PodDisruptionBudget and PodMonitor (also the ``app.kubernetes.io/name``
    label). An RFC 1123 label."""
    namespace: str
    """Namespace of every object rendered. An RFC 1123 label."""
    service_account: str
    """ServiceAccount the pods run as (its token is not mounted). An RFC 1123 label."""
    requests: Mapping[str, str]
    """Container requests (``cpu``, ``memory``, accelerators…), Kubernetes quantities."""
    limits: Mapping[str, str]
    """Container limits, Kubernetes quantities; extended resources (accelerators, EFA) must equal their ``requests``."""
    placement: PodPlacement
    """Where the pods run: node selector, tolerations, affinity, scheduler and PriorityClass."""
    startup_seconds: int
    """How long the model may take to load (the startup probe's budget), seconds. At least 10."""
    replicas: int | None = 1
    """None: an autoscaler owns them (the Deployment leaves them unset). Default 1."""
    shm_gib: float = 8
    """Size of the memory-backed ``/dev/shm``, GiB. At least 0.0625. Default 8."""
    monitoring: bool = True
    """Render a PodMonitor on the engine's metrics. Default True."""
    mounts: Sequence[Mount] = ()
    """Engine-container mounts besides ``/dev/shm``, HOME and /tmp, each carrying its volume (e.g. the model's).
    Default none."""
    init_containers: Sequence[k8s.Container] = ()
    """Init containers run before the engine (e.g. waiting for the model sync). Default none."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra labels of the Deployment and its pods (not ``app.kubernetes.io/*``). Default none."""


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
            placement=placement.placement,
            startup_seconds=placement.startup_seconds,
            replicas=placement.replicas,
            shm_gib=placement.shm_gib,
            init_containers=placement.init_containers,
            mounts=placement.mounts,
            monitoring=placement.monitoring,
            termination_grace_seconds=spec.termination_grace_seconds,
            post_start=spec.post_start,
            run_as_image_user=spec.run_as_image_user,
            recreate=spec.recreate,
            labels=placement.labels,
        )
        self.workload = ServingWorkload(self, "pod", pod, owner=owner)
        self.deployment = self.workload.deployment
        self.service = self.workload.service
