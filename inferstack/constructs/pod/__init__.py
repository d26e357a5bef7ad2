"""The shared serving pod: what every serving engine (vLLM today; SGLang, TGI, Triton… next) runs as, so each engine
only says what is its own (image, command line, engine environment, metric names).

:class:`ServingWorkload` renders a Deployment (hardened, non-root with a writable HOME, memory-backed ``/dev/shm``,
a startup probe sized to the model load, readiness/liveness, a preStop pause, accelerator and EFA requests = limits,
its :class:`~inferstack.constructs.pod.placement.PodPlacement` (node selector, tolerations, affinity, scheduler,
priority)), its Service, PodDisruptionBudget, PodMonitor and a KEDA ScaledObject or HPA parameterised by the
engine's queue metric. Rendered with the L1 API (cdk8s-plus can express neither
``nvidia.com/gpu`` nor ``aws.amazon.com/neuron`` nor ``vpc.amazonaws.com/efa``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import cdk8s
from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.kubernetes import PROMETHEUS_URL, SERVING_TERMINATION_GRACE_SECONDS
from inferstack.constructs import validation as check
from inferstack.constructs.custom_resource import CustomResource
from inferstack.constructs.monitoring import WORKLOAD_SERIES_LABEL, pod_monitor
from inferstack.constructs.pod.mounts import Mount, check_mounted, empty_dir, pod_volumes, volume_mounts
from inferstack.constructs.pod.placement import PodPlacement

PROBE_PERIOD_SECONDS = 10
#: preStop pause: endpoints controllers and kube-proxy stop routing to the pod before the engine drains, seconds.
PRE_STOP_SECONDS = 15
#: The serving user (engine images are commonly built to run as root, with no passwd entry for other UIDs: the pod
#: gives the process a writable HOME and USER/LOGNAME, which ``getpass.getuser()`` reads before the passwd database).
SERVING_UID = 1000


@dataclass(frozen=True, kw_only=True)
class QueueMetric:
    """The engine's queue-depth metric, as Prometheus and the custom-metrics API name it."""

    prometheus: str
    """e.g. ``vllm:num_requests_waiting`` (KEDA's Prometheus query)."""
    pods: str
    """e.g. ``vllm_num_requests_waiting`` (the HPA's pods metric, as an adapter exposes it)."""
    matchers: str = ""
    """More label matchers of KEDA's query, e.g. ``priority=""`` (SGLang's total, not its per-priority series).
    Default none."""


@dataclass(frozen=True, kw_only=True)
class Autoscaling:
    """Scale replicas on the engine's queue depth."""

    kind: str = "keda"
    """``keda`` (ScaledObject, Prometheus trigger) or ``hpa`` (autoscaling/v2, pods metric via an adapter)."""
    min_replicas: int = 1
    """Fewest replicas (KEDA ``minReplicaCount`` / HPA ``minReplicas``), also the replicas the Deployment starts
    with. Default 1."""
    max_replicas: int = 4
    """Most replicas (``maxReplicaCount`` / ``maxReplicas``): at least ``min_replicas`` and 1. Default 4."""
    target_waiting_requests: int = 5
    """Waiting requests per replica to scale at: KEDA's Prometheus ``threshold`` on the pods' summed queue metric, or
    the HPA's ``AverageValue`` target. Default 5."""
    prometheus_url: str = PROMETHEUS_URL
    """Prometheus that KEDA's trigger queries (``serverAddress``; unused with ``hpa``). Default the in-cluster
    kube-prometheus-stack (:data:`~inferstack.catalog.kubernetes.PROMETHEUS_URL`)."""


@dataclass(frozen=True, kw_only=True)
class EngineSpec:
    """How one engine runs and answers: its container, ports, endpoints and lifecycle — what differs between engines
    (the rest of the pod comes from :class:`EnginePlacement`)."""

    component: str
    """``app.kubernetes.io/component`` (the engine, e.g. ``vllm``)."""
    image: str
    """The engine's container image, pinned by tag or digest (``latest`` or untagged is refused)."""
    command: Sequence[str]
    """The engine container's command (entrypoint)."""
    args: Sequence[str] = ()
    """The engine container's arguments (the engine's command line). Default none."""
    container_name: str
    """Name of the engine container."""
    port: int
    """The engine's HTTP port (named ``http``; probes, Service and metrics use it)."""
    ports: Mapping[str, int] = field(default_factory=dict)
    """Extra container ports, name → port (IANA port names, neither ``http`` nor ``port``). Default none."""
    service_ports: Sequence[str] = ()
    """Names of ``ports`` the Service exposes besides ``http`` (e.g. Triton's ``grpc``). Default none."""
    health_path: str = "/health"
    """Startup and readiness probe path (on ``port``). Default ``/health`` (vLLM's)."""
    live_path: str | None = None
    """Liveness probe path (on ``port``). Default: ``health_path``."""
    metrics_path: str = "/metrics"
    """Path the PodMonitor scrapes on ``metrics_port``. Default ``/metrics``."""
    metrics_port: str = "http"
    """Name of the port the PodMonitor scrapes (``http``, or one of ``ports``). Default ``http``."""
    home: str
    """The writable HOME of the serving user (an emptyDir), e.g. where the engine keeps its caches."""
    user: str
    """USER / LOGNAME of the serving process."""
    env: Sequence[k8s.EnvVar] = ()
    """The engine's environment (after HOME, USER and LOGNAME). Default none."""
    queue_metric: QueueMetric | None = None
    """The engine's queue-depth metric; required with ``autoscaling``. Default none."""
    termination_grace_seconds: int = SERVING_TERMINATION_GRACE_SECONDS
    """The pods' terminationGracePeriodSeconds: time for the preStop and the engine's drain before SIGKILL, seconds.
    Default 120."""
    post_start: Sequence[str] = ()
    """A postStart exec command run in the container once it started (probes wait for it), e.g. warming a cache.
    Default none."""
    run_as_image_user: bool = False
    """Run as the image's own user (root for images without ``USER``) instead of uid 1000, for images whose
    runtime lives under ``/root``. Still no privilege escalation and no capabilities. Default False."""
    recreate: bool = False
    """Replace pods by stopping the old one first (a ReadWriteOnce volume cannot attach to a surge pod on another
    node). Default False: surge one, never unavailable."""


@dataclass(frozen=True, kw_only=True)
class EnginePlacement:
    """Where an engine's pods run and what they ask for (filled from the plan's server pod)."""

    name: str
    """Name of the Deployment, Service, PodDisruptionBudget, PodMonitor and ScaledObject/HPA (also the
    ``app.kubernetes.io/name`` label). An RFC 1123 label."""
    namespace: str
    """Namespace of every object rendered. An RFC 1123 label."""
    service_account: str
    """ServiceAccount the pods run as (its token is not mounted). An RFC 1123 label."""
    requests: Mapping[str, str]
    """Container requests (``cpu``, ``memory``, ``nvidia.com/gpu``…), Kubernetes quantities."""
    limits: Mapping[str, str]
    """Container limits, Kubernetes quantities; extended resources (accelerators, EFA) must equal their ``requests``."""
    placement: PodPlacement
    """Where the pods run: node selector (e.g. the Karpenter NodePool's labels), tolerations, affinity, scheduler and
    PriorityClass."""
    startup_seconds: int
    """How long the model may take to load: the startup probe allows ``startup_seconds // 10`` failures, 10 seconds
    apart, before the kubelet restarts the container. At least 10 seconds."""
    replicas: int | None = 1
    """Replicas. None: not set on the Deployment — an external autoscaler (an HPA, AIBrix's PodAutoscaler) owns
    them, and a re-apply must not reset them. Default 1."""
    shm_gib: float = 8
    """Size of the memory-backed ``/dev/shm`` emptyDir (NCCL, the tokenizer pool), GiB. At least 0.0625. Default 8."""
    monitoring: bool = True
    """Render a PodMonitor scraping ``metrics_path`` on ``metrics_port``. Default True."""
    mounts: Sequence[Mount] = ()
    """Engine-container mounts after ``/dev/shm``, HOME and /tmp, each carrying its volume (e.g. the model's): the
    pod's volumes are these and the three built-in ones. Default none."""
    init_containers: Sequence[k8s.Container] = ()
    """Init containers run before the engine (e.g. waiting for the model sync). They may mount only the pod's
    volumes: ``/dev/shm`` (``shm``), HOME (``home``), /tmp (``tmp``), those of ``mounts`` and those of
    ``init_mounts`` — anything else is refused. Default none."""
    init_mounts: Sequence[Mount] = ()
    """Volumes only the init containers mount (the engine container does not), e.g. a ConfigMap a set-up step
    reads: each carrying its volume, added to the pod's; the init containers list their own ``volumeMounts``
    (:func:`~inferstack.constructs.pod.mounts.volume_mounts`). Default none."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra labels of the Deployment and its pods; ``app.kubernetes.io/*`` keys are refused (they select the pods).
    Default none."""


@dataclass(frozen=True, kw_only=True)
class ServingPodProps(EnginePlacement, EngineSpec):
    """One serving engine's pods and what fronts them: an :class:`EngineSpec` (how the engine runs) and an
    :class:`EnginePlacement` (where its pods run) in one, plus what only some engines use (autoscaling, pod
    annotations, a preStop command). Resources as Kubernetes quantities (accelerators included)."""

    autoscaling: Autoscaling | None = None
    """Scale on ``queue_metric`` with a KEDA ScaledObject or an HPA (the Deployment starts at its ``min_replicas``,
    ``replicas`` is ignored). Default none."""
    annotations: Mapping[str, str] = field(default_factory=dict)
    """Annotations of the pod template. Default none."""
    pre_stop: Sequence[str] = ()
    """A preStop exec command instead of the preStop pause (the kubelet runs it before SIGTERM, within the
    termination grace period), e.g. waiting for in-flight requests of an engine that aborts them at SIGTERM.
    Default none: the pause."""

    @classmethod
    def of(cls, spec: EngineSpec, placement: EnginePlacement) -> ServingPodProps:
        """``spec`` and ``placement`` as one props object (every field of both, as given)."""
        values = {f.name: getattr(spec, f.name) for f in fields(EngineSpec)}
        values |= {f.name: getattr(placement, f.name) for f in fields(EnginePlacement)}
        return cls(**values)


def _quantities(values: Mapping[str, str]) -> dict[str, k8s.Quantity]:
    return {key: k8s.Quantity.from_string(value) for key, value in values.items()}


def serving_mounts(props: ServingPodProps) -> list[Mount]:
    """The engine container's mounts: the memory-backed ``/dev/shm`` (``shm_gib``), HOME and /tmp emptyDirs, then
    ``props.mounts``. The pod's volumes are exactly theirs."""
    return [
        Mount(path="/dev/shm", volume=empty_dir("shm", size_gib=props.shm_gib, memory=True)),  # noqa: S108 - RAM
        Mount(path=props.home, volume=empty_dir("home")),
        Mount(path="/tmp", volume=empty_dir("tmp")),  # noqa: S108 - a pod-local emptyDir
        *props.mounts,
    ]


def validate(owner: str, props: ServingPodProps) -> None:
    """Every prop a Kubernetes object would reject, refused at construction with the prop named."""
    check.dns_label(owner, "name", props.name)
    check.dns_label(owner, "namespace", props.namespace)
    check.dns_label(owner, "service_account", props.service_account)
    check.pinned_image(owner, "image", props.image)
    check.quantities(owner, "requests", props.requests)
    check.quantities(owner, "limits", props.limits)
    check.extended_resources_equal(owner, props.requests, props.limits)
    check.at_least(owner, "startup_seconds", props.startup_seconds, PROBE_PERIOD_SECONDS, "one startup probe period")
    if props.replicas is not None:
        check.at_least(owner, "replicas", props.replicas, 0, "a Deployment cannot have fewer")
    check.at_least(owner, "shm_gib", props.shm_gib, 0.0625, "NCCL and the tokenizer pool need /dev/shm")
    if props.metrics_port != "http" and props.metrics_port not in props.ports:
        raise check.PropError(
            f"{owner}: metrics_port {props.metrics_port!r} — http or one of ports {sorted(props.ports)}"
        )
    unknown = sorted(set(props.service_ports) - set(props.ports))
    if unknown:
        raise check.PropError(f"{owner}: service_ports {unknown} — names of ports {sorted(props.ports)}")
    for name, port in props.ports.items():
        check.port_name(owner, f"ports[{name!r}]", name)
        if name == "http" or port == props.port or not 1 <= port <= 65535:
            raise check.PropError(f"{owner}: ports[{name!r}] {port} — a port 1–65535 other than http/{props.port}")
    reserved = sorted(k for k in props.labels if k.startswith("app.kubernetes.io/"))
    if reserved:
        raise check.PropError(f"{owner}: labels {reserved} — app.kubernetes.io/* labels select the pods; use others")
    if props.autoscaling is not None:
        scaling = props.autoscaling
        check.one_of(owner, "autoscaling.kind", scaling.kind, ("keda", "hpa"))
        check.at_least(owner, "autoscaling.max_replicas", scaling.max_replicas, max(1, scaling.min_replicas), "≥ min")
        if props.queue_metric is None:
            raise check.PropError(f"{owner}: autoscaling needs the engine's queue_metric")


def serving_container(
    props: ServingPodProps,
    *,
    serves: bool = True,
    command: Sequence[str] | None = None,
    args: Sequence[str] | None = None,
    pre_stop_seconds: int | None = None,
) -> k8s.Container:
    """The engine container: hardened (non-root with a writable HOME and /tmp, no privilege escalation, no
    capabilities), accelerator and EFA requests = limits, ``/dev/shm``. ``serves``: it serves HTTP on
    ``props.port`` — startup probe sized to the model load, readiness and liveness on the health path, a preStop
    pause; False for a multi-node worker, which serves nothing (no port, no probes). ``command``/``args``: instead
    of the props' (e.g. a worker's). Default: the props'. ``pre_stop_seconds``: the preStop pause. Default
    :data:`PRE_STOP_SECONDS` when serving, none otherwise (a multi-node worker sets it to outlive its leader's
    drain)."""
    env = [
        k8s.EnvVar(name="HOME", value=props.home),
        k8s.EnvVar(name="USER", value=props.user),
        k8s.EnvVar(name="LOGNAME", value=props.user),
        *props.env,
    ]
    health = k8s.HttpGetAction(path=props.health_path, port=k8s.IntOrString.from_number(props.port))
    live = k8s.HttpGetAction(path=props.live_path or props.health_path, port=k8s.IntOrString.from_number(props.port))
    probes: dict[str, Any] = {}
    ports: list[k8s.ContainerPort] = []
    if serves:
        ports = [
            k8s.ContainerPort(name="http", container_port=props.port),
            *(k8s.ContainerPort(name=name, container_port=port) for name, port in sorted(props.ports.items())),
        ]
        probes = {
            "startup_probe": k8s.Probe(
                http_get=health,
                period_seconds=PROBE_PERIOD_SECONDS,
                timeout_seconds=5,
                failure_threshold=max(1, props.startup_seconds // PROBE_PERIOD_SECONDS),
            ),
            "readiness_probe": k8s.Probe(http_get=health, period_seconds=10, timeout_seconds=5, failure_threshold=3),
            "liveness_probe": k8s.Probe(http_get=live, period_seconds=15, timeout_seconds=5, failure_threshold=4),
        }
        pre_stop_seconds = PRE_STOP_SECONDS if pre_stop_seconds is None else pre_stop_seconds
    if pre_stop_seconds or props.post_start:
        stop = (
            k8s.LifecycleHandler(exec=k8s.ExecAction(command=list(props.pre_stop)))
            if props.pre_stop and serves
            else k8s.LifecycleHandler(sleep=k8s.SleepAction(seconds=pre_stop_seconds))
        )
        probes["lifecycle"] = k8s.Lifecycle(
            pre_stop=stop if pre_stop_seconds else None,
            post_start=k8s.LifecycleHandler(exec=k8s.ExecAction(command=list(props.post_start)))
            if props.post_start
            else None,
        )
    user = (
        {}
        if props.run_as_image_user
        else {"run_as_non_root": True, "run_as_user": SERVING_UID, "run_as_group": SERVING_UID}
    )
    return k8s.Container(
        name=props.container_name,
        image=props.image,
        command=list(props.command if command is None else command),
        args=list(props.args if args is None else args),
        ports=ports or None,
        env=env,
        resources=k8s.ResourceRequirements(requests=_quantities(props.requests), limits=_quantities(props.limits)),
        security_context=k8s.SecurityContext(
            **user,
            allow_privilege_escalation=False,
            capabilities=k8s.Capabilities(drop=["ALL"]),
        ),
        volume_mounts=volume_mounts(serving_mounts(props)),
        **probes,
    )


def _writable_claims(volumes: Sequence[k8s.Volume]) -> bool:
    """Whether the pod mounts a PersistentVolumeClaim writable: the kubelet would then chown every file of it to the
    ``fsGroup`` at each start (a cache of many thousand files: minutes) unless ``fsGroupChangePolicy`` is
    ``OnRootMismatch`` (only when the volume's root is not the group's yet)."""
    return any(v.persistent_volume_claim is not None and not v.persistent_volume_claim.read_only for v in volumes)


def pod_template(
    props: ServingPodProps, labels: Mapping[str, str], container: k8s.Container | None = None
) -> k8s.PodTemplateSpec:
    """The serving pod: ``container`` (default :func:`serving_container` of ``props``), the volumes of
    :func:`serving_mounts` (memory-backed ``/dev/shm``, HOME, /tmp, the model's) and of ``init_mounts``, init
    containers, service account without a token, the placement (priority, scheduler, node selector, tolerations; not
    the untyped ``affinity``: :func:`pod_template_json` and :class:`ServingWorkload` add it), RuntimeDefault seccomp
    and the termination grace period.

    :raises PropError: a container (``container``, an init container) mounting a volume the pod does not have."""
    volumes = pod_volumes(f"pod {props.name!r}", serving_mounts(props), props.init_mounts)
    check_mounted(f"pod {props.name!r}", [*props.init_containers, *([container] if container else [])], volumes)
    return k8s.PodTemplateSpec(
        metadata=k8s.ObjectMeta(labels=dict(labels), annotations=dict(props.annotations) or None),
        spec=k8s.PodSpec(
            service_account_name=props.service_account,
            automount_service_account_token=False,
            **props.placement.pod_spec_kwargs(empty=True),
            termination_grace_period_seconds=props.termination_grace_seconds,
            security_context=k8s.PodSecurityContext(
                fs_group=SERVING_UID,
                fs_group_change_policy="OnRootMismatch" if _writable_claims(volumes) else None,
                seccomp_profile=k8s.SeccompProfile(type="RuntimeDefault"),
            ),
            init_containers=list(props.init_containers) or None,
            containers=[container or serving_container(props)],
            volumes=volumes,
        ),
    )


def template_json(template: k8s.PodTemplateSpec) -> dict[str, Any]:
    """``template`` as the JSON the API server receives (through a throwaway PodTemplate object)."""
    chart = cdk8s.Chart(cdk8s.App(), "template")
    rendered = k8s.KubePodTemplate(chart, "t", template=template).to_json()
    return copy.deepcopy(rendered["template"])


def pod_template_json(
    props: ServingPodProps, labels: Mapping[str, str], container: k8s.Container | None = None
) -> dict[str, Any]:
    """:func:`pod_template` as JSON (for a custom resource), with the placement's ``affinity`` added."""
    template = template_json(pod_template(props, labels, container))
    props.placement.add_affinity(template["spec"])
    return template


def add_front(
    scope: Construct, props: ServingPodProps, labels: Mapping[str, str], serving: Mapping[str, str]
) -> k8s.KubeService:
    """What fronts a serving engine's pods: the Service (``http`` and the ``service_ports``) and, with
    ``monitoring``, the PodMonitor — both selecting the ``serving`` pods — and a PodDisruptionBudget of one pod at a
    time over all ``labels`` pods (in a multi-node group, evicting any pod restarts its group: at most one group is
    down)."""
    service = k8s.KubeService(
        scope,
        "service",
        metadata=k8s.ObjectMeta(name=props.name, namespace=props.namespace, labels=dict(labels)),
        spec=k8s.ServiceSpec(
            selector=dict(serving),
            ports=[
                k8s.ServicePort(name="http", port=props.port, target_port=k8s.IntOrString.from_string("http")),
                *(
                    k8s.ServicePort(name=name, port=port, target_port=k8s.IntOrString.from_string(name))
                    for name, port in sorted(props.ports.items())
                    if name in props.service_ports
                ),
            ],
        ),
    )
    k8s.KubePodDisruptionBudget(
        scope,
        "pdb",
        metadata=k8s.ObjectMeta(name=props.name, namespace=props.namespace, labels=dict(labels)),
        spec=k8s.PodDisruptionBudgetSpec(
            selector=k8s.LabelSelector(match_labels=dict(labels)), max_unavailable=k8s.IntOrString.from_number(1)
        ),
    )
    if props.monitoring:
        pod_monitor(
            scope,
            "pod-monitor",
            name=props.name,
            namespace=props.namespace,
            labels=labels,
            selector={"matchLabels": dict(serving)},
            port=props.metrics_port,
            path=props.metrics_path,
        )
    return service


class ServingWorkload(Construct):
    """Deployment + Service + PodDisruptionBudget (+ PodMonitor, ScaledObject/HPA) of one serving engine.

    Defaults that matter in production: accelerator requests equal limits; a memory-backed ``/dev/shm``; a startup
    probe sized to the model load, then readiness and liveness on the health path; a preStop pause so the Service
    stops routing before the engine drains; non-root with a writable HOME and /tmp, no privilege escalation, no
    capabilities, RuntimeDefault seccomp; the service-account token is not mounted; surge 1, never unavailable.
    """

    def __init__(
        self, scope: Construct, construct_id: str, props: ServingPodProps, *, owner: str | None = None
    ) -> None:
        """:param owner: how errors name the construct (an engine passes its own, e.g. ``VllmServer 'qwen'``).
        Default ``ServingWorkload '<name>'``."""
        super().__init__(scope, construct_id)
        validate(owner or f"ServingWorkload {props.name!r}", props)
        self.props = props
        labels = {
            "app.kubernetes.io/name": props.name,
            "app.kubernetes.io/component": props.component,
            "app.kubernetes.io/part-of": "inferstack",
        }
        self.labels = labels
        pod_labels = {**props.labels, **labels}
        self.pod_labels = pod_labels
        template = pod_template(props, pod_labels)
        replicas = props.autoscaling.min_replicas if props.autoscaling else props.replicas
        self.deployment = k8s.KubeDeployment(
            self,
            "deployment",
            metadata=k8s.ObjectMeta(name=props.name, namespace=props.namespace, labels=pod_labels),
            spec=k8s.DeploymentSpec(
                replicas=replicas,
                selector=k8s.LabelSelector(match_labels=labels),
                strategy=k8s.DeploymentStrategy(type="Recreate")
                if props.recreate
                else k8s.DeploymentStrategy(
                    type="RollingUpdate",
                    rolling_update=k8s.RollingUpdateDeployment(
                        max_surge=k8s.IntOrString.from_number(1), max_unavailable=k8s.IntOrString.from_number(0)
                    ),
                ),
                template=template,
            ),
        )
        props.placement.patch_affinity(self.deployment, "/spec/template/spec")
        self.service = add_front(self, props, labels, labels)
        if props.autoscaling is not None:
            assert props.queue_metric is not None  # validate() says so
            self._autoscaling(props, props.autoscaling, props.queue_metric, labels)

    def _autoscaling(
        self, props: ServingPodProps, scaling: Autoscaling, metric: QueueMetric, labels: dict[str, str]
    ) -> None:
        if scaling.kind == "keda":
            extra = f",{metric.matchers}" if metric.matchers else ""
            # the workload's series by the label its PodMonitor copies from the pods (podTargetLabels): a pod-name
            # pattern misses the pods of a long Deployment name, whose generated names the API server truncates
            pods = f'namespace="{props.namespace}",{WORKLOAD_SERIES_LABEL}="{props.name}"'
            query = f"sum({metric.prometheus}{{{pods}{extra}}})"
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
                            metric=k8s.MetricIdentifierV2(name=metric.pods),
                            target=k8s.MetricTargetV2(
                                type="AverageValue",
                                average_value=k8s.Quantity.from_number(scaling.target_waiting_requests),
                            ),
                        ),
                    )
                ],
            ),
        )
