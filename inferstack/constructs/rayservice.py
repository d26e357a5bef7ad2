"""RayServiceServer: a KubeRay ``ray.io/v1`` RayService — the Ray head (GCS, dashboard, Serve controller; no
replicas: ``num-cpus: 0``), GPU worker groups scaled by the in-tree Ray autoscaler, and a Ray Serve config
(``serveConfigV2``) — plus PodMonitors for head and workers. Validated against the vendored KubeRay v1.7.0 CRD.

What KubeRay v1.7.0 expects and this relies on (ray-project/kuberay@v1.7.0, ../shared/facts/ray-serve-llm.md §1):
the Ray container is ``containers[0]``; KubeRay writes its ``ray start`` command; the head's ports are exposed by
its Services only if declared, the serve Service ``<name>-serve-svc`` takes the port named ``serve`` and RayService
reaches the dashboard through the port named ``dashboard``; ``rayStartParams`` values are strings; a group's
``resources`` are what the autoscaler knows of it (declare custom resources there so it can scale from zero).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.constructs import validation as check
from inferstack.constructs.custom_resource import CustomResource
from inferstack.constructs.monitoring import pod_monitor
from inferstack.constructs.pod import PodPlacement, ServingPodProps, pod_template_json, serving_mounts
from inferstack.constructs.pod.mounts import Mount, volume_mounts

#: Ports of the head's Ray container, named as KubeRay expects (utils/constant.go; service.go getServicePorts).
HEAD_PORTS = {"gcs-server": 6379, "dashboard": 8265, "client": 10001, "serve": 8000, "metrics": 8080}
METRICS_PORT = 8080
RAY_UID = 1000
#: Where Ray's caches go (the image's HOME /home/ray holds its Python; only its cache is a volume).
RAY_CACHE = "/home/ray/.cache"
UPGRADE_STRATEGIES = ("NewCluster", "None")
#: The head's projected service-account token (token, cluster CA, namespace), mounted in the autoscaler sidecar only.
AUTOSCALER_TOKEN_VOLUME = "autoscaler-token"  # noqa: S105 - a volume name, not a secret
SA_TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"  # noqa: S105 - the standard mount path


def _with_token_volume(template: dict[str, Any]) -> dict[str, Any]:
    """``template`` with the projected token volume the autoscaler sidecar mounts (the Ray container does not: Ray
    code never sees the API credentials)."""
    volume = {
        "name": AUTOSCALER_TOKEN_VOLUME,
        "projected": {
            "sources": [
                {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}]}},
            ]
        },
    }
    spec = template["spec"]
    return {**template, "spec": {**spec, "volumes": [*spec.get("volumes", []), volume]}}


@dataclass(frozen=True, kw_only=True)
class RayWorkerGroupProps:
    """One worker group: pods on one pool, min/max replicas for the autoscaler."""

    name: str
    """``groupName`` (becomes the pod label ``ray.io/group``)."""
    requests: Mapping[str, str]
    """Ray-container requests of each worker pod (``cpu``, ``memory``, ``nvidia.com/gpu``…), Kubernetes quantities."""
    limits: Mapping[str, str]
    """Ray-container limits of each worker pod; extended resources must equal their ``requests``."""
    placement: PodPlacement
    """Where the worker pods run: node selector, tolerations, affinity, scheduler and PriorityClass."""
    min_replicas: int = 0
    """Fewest worker pods, also the group's initial ``replicas``: 0 ≤ ``min_replicas`` ≤ ``max_replicas``. Default 0
    (scale from zero)."""
    max_replicas: int = 1
    """Most worker pods the Ray autoscaler adds. Default 1."""
    ray_resources: Mapping[str, str] = field(default_factory=dict)
    """``resources``: Ray logical resources of each pod (e.g. ``{"prefill": "8"}``), for placement and for the
    autoscaler to scale from zero. Default none."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Environment of this group only (after the shared one)."""
    shm_gib: float = 8
    """Size of each worker's memory-backed ``/dev/shm`` (the head gets 1), GiB. Default 8."""


@dataclass(frozen=True, kw_only=True)
class RayServiceProps:
    """A RayService. Resources as Kubernetes quantities."""

    name: str
    """Name of the RayService (KubeRay derives its RayCluster and the Service ``<name>-serve-svc``) and prefix of the
    PodMonitors ``<name>-head``/``<name>-workers``; also the ``app.kubernetes.io/name`` label. An RFC 1123 label."""
    namespace: str
    """Namespace of the RayService and PodMonitors. An RFC 1123 label."""
    image: str
    """The Ray image of head and workers, pinned by tag or digest."""
    ray_version: str
    """Ray in the image (KubeRay's ``rayVersion``)."""
    service_account: str
    """ServiceAccount of head and worker pods; its token is mounted only in the head's autoscaler sidecar (the Ray
    autoscaler calls the API server with it)."""
    serve_config: Mapping[str, Any]
    """The Ray Serve config (``applications: […]``), rendered as the ``serveConfigV2`` YAML string."""
    head_requests: Mapping[str, str]
    """Ray-container requests of the head, Kubernetes quantities (it runs no Serve replicas: ``num-cpus: 0``)."""
    head_limits: Mapping[str, str]
    """Ray-container limits of the head, Kubernetes quantities."""
    head_placement: PodPlacement
    """Where the head pod runs: node selector, tolerations, affinity, scheduler and PriorityClass (each worker
    group has its own ``placement``)."""
    workers: Sequence[RayWorkerGroupProps]
    """The worker groups (``workerGroupSpecs``): at least one, since the head runs no replicas."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Environment of every Ray container, head and workers (a group's ``env`` wins). Default none."""
    env_from_secrets: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """Env var → (Secret, key), e.g. ``HF_TOKEN`` (Ray passes it to the replicas)."""
    mounts: Sequence[Mount] = ()
    """Ray-container mounts of every pod, head and workers, besides ``/dev/shm``, HOME (or the cache) and /tmp, each
    carrying its volume (e.g. the model's). Default none."""
    init_containers: Sequence[k8s.Container] = ()
    """Init containers of every pod (e.g. waiting for the model sync). Default none."""
    init_mounts: Sequence[Mount] = ()
    """Volumes only the init containers mount, each carrying its volume (see ``ServingPodProps.init_mounts``).
    Default none."""
    upgrade_strategy: str = "NewCluster"
    """KubeRay's ``upgradeStrategy.type``: ``NewCluster`` (a cluster change brings up a new RayCluster and switches
    traffic once it serves) or ``None`` (cluster changes are not rolled out). Default ``NewCluster``."""
    idle_timeout_seconds: int = 600
    """The Ray autoscaler's ``idleTimeoutSeconds``: how long a worker may stay idle before it is removed, seconds.
    Default 600."""
    monitoring: bool = True
    """Render the PodMonitors ``<name>-head`` and ``<name>-workers`` scraping the ``metrics`` port (8080). Default
    True."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra labels of the RayService and its pods (``app.kubernetes.io/*`` and ``inferstack.io/role`` are the
    construct's). Default none."""
    home: str | None = None
    """HOME of the Ray containers, on an emptyDir, when the image's own is not writable by uid 1000 (the AWS Ray LLM
    DLC runs as root with HOME /root). Default None: the image's HOME (rayproject images: /home/ray, uid 1000's, whose
    Python lives there; only ``~/.cache`` is a volume)."""
    token_auth: bool = True
    """Ray token authentication (``authOptions.mode: token``): KubeRay v1.7.0 generates the Secret ``<cluster>``
    (key ``auth_token``) and sets ``RAY_AUTH_MODE``/``RAY_AUTH_TOKEN`` on every Ray container
    (``raycluster_controller.go:422-486``, ``common/pod.go:344-426``), so the dashboard, the Jobs API and GCS refuse
    callers without the token; KubeRay sends it on its own dashboard calls. Needs Ray ≥ 2.52
    (``utils/validation.go:284-313``); off for older images. Default True."""


#: The first Ray release with token authentication (KubeRay v1.7.0 utils/validation.go).
TOKEN_AUTH_MIN_RAY = (2, 52)


def supports_token_auth(ray_version: str) -> bool:
    """Whether Ray ``ray_version`` (``2.58.0``) has token authentication."""
    parts = tuple(int(p) for p in ray_version.split(".")[:2] if p.isdigit())
    return len(parts) == 2 and parts >= TOKEN_AUTH_MIN_RAY


class _PlainDumper(yaml.SafeDumper):
    """YAML without anchors and aliases: a value repeated (e.g. one kv_transfer_config on both P/D sides) is written
    out each time, as a reader of the manifest expects."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def serve_config_yaml(config: Mapping[str, Any]) -> str:
    """``config`` as the ``serveConfigV2`` string (key order kept, no aliases)."""
    return yaml.dump(dict(config), Dumper=_PlainDumper, sort_keys=False, width=1000)


def _env(props: RayServiceProps, extra: Mapping[str, str]) -> list[k8s.EnvVar]:
    secrets = [
        k8s.EnvVar(name=n, value_from=k8s.EnvVarSource(secret_key_ref=k8s.SecretKeySelector(name=s, key=k)))
        for n, (s, k) in sorted(props.env_from_secrets.items())
    ]
    plain = {**props.env, **extra}
    return [*(k8s.EnvVar(name=k, value=v) for k, v in sorted(plain.items())), *secrets]


class RayServiceServer(Construct):
    """RayService (+ PodMonitors) of one Ray Serve LLM app."""

    def __init__(self, scope: Construct, construct_id: str, props: RayServiceProps) -> None:
        super().__init__(scope, construct_id)
        owner = f"RayServiceServer {props.name!r}"
        check.dns_label(owner, "name", props.name)
        check.dns_label(owner, "namespace", props.namespace)
        check.pinned_image(owner, "image", props.image)
        check.one_of(owner, "upgrade_strategy", props.upgrade_strategy, UPGRADE_STRATEGIES)
        if not props.workers:
            raise check.PropError(f"{owner}: workers — at least one worker group (the head runs no replicas)")
        for group in props.workers:
            check.dns_label(owner, f"workers[{group.name!r}].name", group.name)
            check.quantities(owner, f"workers[{group.name!r}].requests", group.requests)
            check.extended_resources_equal(owner, group.requests, group.limits)
            if not 0 <= group.min_replicas <= group.max_replicas:
                raise check.PropError(f"{owner}: workers[{group.name!r}] — need 0 ≤ min_replicas ≤ max_replicas")
        self.props = props
        labels = {
            "app.kubernetes.io/name": props.name,
            "app.kubernetes.io/component": "ray",
            "app.kubernetes.io/part-of": "inferstack",
        }
        self.labels = labels
        head_labels = {**props.labels, **labels, "inferstack.io/role": "head"}
        worker_labels = {**props.labels, **labels, "inferstack.io/role": "worker"}
        head = self._template(
            props,
            "ray-head",
            head_labels,
            requests=props.head_requests,
            limits=props.head_limits,
            placement=props.head_placement,
            ports=HEAD_PORTS,
            shm_gib=1,
        )
        groups = []
        for group in props.workers:
            template = self._template(
                props,
                "ray-worker",
                worker_labels,
                requests=group.requests,
                limits=group.limits,
                placement=group.placement,
                ports={"metrics": METRICS_PORT},
                shm_gib=group.shm_gib,
                env=group.env,
            )
            # Ray's autoscaler v2 (the default since Ray 2.47; pinned below) reclaims idle workers by deleting
            # them and needs them never restarted in place (KubeRay autoscaling guide).
            template["spec"]["restartPolicy"] = "Never"
            spec: dict[str, Any] = {
                "groupName": group.name,
                "replicas": group.min_replicas,
                "minReplicas": group.min_replicas,
                "maxReplicas": group.max_replicas,
                "rayStartParams": {},
                "template": template,
            }
            if group.ray_resources:
                spec["resources"] = dict(group.ray_resources)
            groups.append(spec)
        manifest = {
            "apiVersion": "ray.io/v1",
            "kind": "RayService",
            "metadata": {"name": props.name, "namespace": props.namespace, "labels": {**props.labels, **labels}},
            "spec": {
                "upgradeStrategy": {"type": props.upgrade_strategy},
                "serveConfigV2": serve_config_yaml(props.serve_config),
                "rayClusterConfig": {
                    "rayVersion": props.ray_version,
                    "enableInTreeAutoscaling": True,
                    "autoscalerOptions": {
                        "version": "v2",
                        "idleTimeoutSeconds": props.idle_timeout_seconds,
                        # The Ray autoscaler talks to the API server with the pod's service-account token (Ray 2.52
                        # autoscaler/_private/kuberay/node_provider.py reads it from the standard path); KubeRay
                        # mounts none, and the pods do not automount it — so only the sidecar gets it.
                        # KubeRay builds the sidecar from these alone (common/pod.go:935-1034 at v1.7.0): a HOME that
                        # is not the image's must be given to it too.
                        "volumeMounts": [
                            {"name": AUTOSCALER_TOKEN_VOLUME, "mountPath": SA_TOKEN_DIR, "readOnly": True},
                            *([{"name": "home", "mountPath": props.home}] if props.home else []),
                        ],
                        **({"env": [{"name": "HOME", "value": props.home}]} if props.home else {}),
                        "securityContext": {
                            "runAsNonRoot": True,
                            "runAsUser": RAY_UID,
                            "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]},
                        },
                    },
                    "headGroupSpec": {"rayStartParams": {"num-cpus": "0"}, "template": _with_token_volume(head)},
                    "workerGroupSpecs": groups,
                    **(
                        {"authOptions": {"mode": "token"}}
                        if props.token_auth and supports_token_auth(props.ray_version)
                        else {}
                    ),
                },
            },
        }
        self.ray_service = CustomResource(self, "ray-service", manifest=manifest)
        #: KubeRay's Service for the serve port (``<name>-serve-svc``, selects pods running a Serve proxy).
        self.serve_service_name = f"{props.name}-serve-svc"
        if props.monitoring:
            for role, selected in (("head", head_labels), ("workers", worker_labels)):
                pod_monitor(
                    self,
                    f"pod-monitor-{role}",
                    name=f"{props.name}-{role}",
                    namespace=props.namespace,
                    labels=labels,
                    selector={"matchLabels": selected},
                    port="metrics",
                )

    @staticmethod
    def _template(
        props: RayServiceProps,
        container_name: str,
        labels: Mapping[str, str],
        *,
        requests: Mapping[str, str],
        limits: Mapping[str, str],
        placement: PodPlacement,
        ports: Mapping[str, int],
        shm_gib: float,
        env: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        pod = ServingPodProps(
            name=props.name,
            namespace=props.namespace,
            component="ray",
            image=props.image,
            command=[],
            args=[],
            container_name=container_name,
            port=HEAD_PORTS["serve"],
            home=props.home or RAY_CACHE,
            user="ray",
            service_account=props.service_account,
            requests=requests,
            limits=limits,
            placement=placement,
            startup_seconds=600,
            shm_gib=shm_gib,
            init_containers=props.init_containers,
            init_mounts=props.init_mounts,
            mounts=props.mounts,
        )
        container = k8s.Container(
            name=container_name,
            image=props.image,
            ports=[k8s.ContainerPort(name=n, container_port=p) for n, p in ports.items()],
            env=_env(props, {**(env or {}), **({"HOME": props.home} if props.home else {})}),
            resources=k8s.ResourceRequirements(
                requests={k: k8s.Quantity.from_string(v) for k, v in requests.items()},
                limits={k: k8s.Quantity.from_string(v) for k, v in limits.items()},
            ),
            security_context=k8s.SecurityContext(
                run_as_non_root=True,
                run_as_user=RAY_UID,
                allow_privilege_escalation=False,
                capabilities=k8s.Capabilities(drop=["ALL"]),
            ),
            # /dev/shm, HOME (or the cache), /tmp (Ray's session dir /tmp/ray), the model's
            volume_mounts=volume_mounts(serving_mounts(pod)),
        )
        return pod_template_json(pod, labels, container)
