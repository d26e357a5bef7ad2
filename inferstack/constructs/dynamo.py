"""DynamoGraph: an NVIDIA Dynamo ``nvidia.com/v1beta1`` DynamoGraphDeployment — a frontend and vLLM worker
components, each a ``podTemplate`` whose container ``main`` the operator completes — plus PodMonitors for the
frontend and the workers. Validated against the vendored v1beta1 CRD.

What the Dynamo operator (1.4.0 branch cut, deploy/operator/internal) does with a component and this relies on:

* it merges its defaults into ``main`` with ``mergo.WithOverride`` (dynamo/graph.go): a list given here (``ports``,
  ``command``, ``args``) replaces its own, so ``command`` and ``args`` are always whole, and ``ports`` repeat the
  operator's (frontend ``http`` 8000; workers ``system`` 9090, ``nixl`` 19090; component_*.go) so the PodMonitors'
  port names are declared where they are checked;
* probes are the operator's (workers: startup ``/live`` on ``system`` for up to 2 h; component_worker.go);
* ``/dev/shm`` comes from ``sharedMemorySize`` (its own volume): the pod template mounts none;
* with a pod ``securityContext`` given it applies none of its own; the ServiceAccount is left unset, so the operator
  sets ``<graph>-k8s-service-discovery`` (the Role its service discovery needs), and the token stays mounted;
* ``priorityClassName`` needs Grove (webhook/validation): it is not set (a placement's ``priority_class`` is
  refused).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.versions import IMAGES
from inferstack.constructs import validation as check
from inferstack.constructs.custom_resource import CustomResource
from inferstack.constructs.monitoring import pod_monitor
from inferstack.constructs.pod import PodPlacement, ServingPodProps, pod_template_json, serving_mounts
from inferstack.constructs.pod.mounts import Mount, volume_mounts

API_VERSION = "nvidia.com/v1beta1"
COMPONENT_TYPES = ("frontend", "worker", "prefill", "decode")
#: Ports the operator gives each component type's ``main`` (component_frontend.go, component_worker.go).
FRONTEND_PORTS = {"http": 8000}
WORKER_PORTS = {"system": 9090, "nixl": 19090}
#: The user of the Dynamo runtime images (vllm_runtime.Dockerfile: USER dynamo, uid 1000).
DYNAMO_UID = 1000
#: Caches of the runtime (vLLM's compile cache, FlashInfer's JIT): a volume, not the image's home.
DYNAMO_CACHE = "/home/dynamo/.cache"
#: Where a worker's compilation cache is mounted (``compilationCache.mountPath``): the operator's vLLM default
#: ``/root/.cache/vllm`` (internal/consts/consts.go:208) is under root's home, which the runtime's uid 1000 cannot
#: enter; the image makes ``/home/dynamo/.cache/vllm`` its own (vllm_runtime.Dockerfile:111-115). Not
#: :data:`DYNAMO_CACHE` itself: the operator refuses a second mount at a path ``main`` mounts (graph.go:1877-1878).
DYNAMO_COMPILE_CACHE = f"{DYNAMO_CACHE}/vllm"
#: The pinned operator's Dynamo release (its image tag).
OPERATOR_VERSION = IMAGES["dynamo-operator"].rsplit(":", 1)[1]
_SEMVER = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)")


def image_tag(image: str) -> str:
    """The tag of ``image``: the text after the last ``:`` that follows the last ``/``, a ``@digest`` stripped
    first (the operator's parse, deploy/operator/internal/runtimeversion/runtimeversion.go:80-91); ``""`` untagged."""
    name = image.partition("@")[0].rsplit("/", 1)[-1]
    return name.rpartition(":")[2] if ":" in name else ""


def runtime_version_problem(component: str, image: str, override: str | None = None) -> str | None:
    """Why the Dynamo operator would run ``image`` under another release's defaults, or None.

    The operator (1.4.0 branch cut, deploy/operator/internal) takes a component's runtime version from
    ``runtimeVersionOverride``, else from the image tag's semantic version (``-efa`` and other suffixes dropped;
    runtimeversion.go:17,51-74); admission refuses only a tag that does not parse (webhook/validation/
    shared_v1beta1.go:134-146). Nothing compares it with the operator's own release, and nothing rendered depends on
    it in 1.4.0 (the one runtime gate, features/runtime/gates.go:13-16, is unused): a ``vllm-runtime:0.5.0`` worker
    runs with 1.4.0's env, probes and discovery without a word. So the release must be the operator's, major and
    minor."""
    version = override or image_tag(image)
    found, pinned = _SEMVER.match(version), _SEMVER.match(OPERATOR_VERSION)
    assert pinned is not None
    if found is None:
        return (
            f"component {component!r} runs {image}, whose tag is not a Dynamo release — set the component's "
            f"runtimeVersionOverride to the release it carries ({OPERATOR_VERSION} for the pinned operator)"
        )
    if found.groups()[:2] != pinned.groups()[:2]:
        return (
            f"component {component!r} runs {image}, Dynamo {version}, but the pinned operator is {OPERATOR_VERSION} "
            f"and would run it with {OPERATOR_VERSION}'s defaults — use a {OPERATOR_VERSION} runtime image (e.g. "
            f"nvcr.io/nvidia/ai-dynamo/vllm-runtime:{OPERATOR_VERSION} or :{OPERATOR_VERSION}-efa)"
        )
    return None


def graph_version_problems(graph: Mapping[str, Any]) -> list[str]:
    """:func:`runtime_version_problem` of every component's ``main`` container of a DynamoGraphDeployment
    manifest (e.g. after a user's ``overrides``)."""
    problems = []
    for component in (graph.get("spec") or {}).get("components") or []:
        containers = ((component.get("podTemplate") or {}).get("spec") or {}).get("containers") or []
        for container in containers:
            if container.get("name") == "main" and container.get("image"):
                problem = runtime_version_problem(
                    str(component.get("name")), container["image"], component.get("runtimeVersionOverride")
                )
                if problem:
                    problems.append(problem)
    return problems


def _compilation_cache_mounts(component: DynamoComponentProps) -> list[Mount]:
    """The compilation cache's mount on ``main`` (the operator adds the same one: name and path equal, it keeps
    ours — graph.go:1877-1894)."""
    claim = component.compilation_cache
    if claim is None:
        return []
    if component.type == "frontend":
        raise check.PropError(
            f"DynamoComponentProps {component.name!r}: compilation_cache is a vLLM worker's — the frontend compiles "
            "nothing"
        )
    volume = k8s.Volume(name=claim, persistent_volume_claim=k8s.PersistentVolumeClaimVolumeSource(claim_name=claim))
    return [Mount(path=DYNAMO_COMPILE_CACHE, volume=volume)]


#: What a compilation cache also holds besides ``VLLM_CACHE_ROOT`` (the operator's; vLLM moves Inductor and Triton
#: under it): FlashInfer's JIT workspace (its base; FlashInfer appends ``.cache/flashinfer``) and CUDA's JIT cache,
#: which would otherwise stay in the ``home`` emptyDir.
COMPILATION_CACHE_ENV = {
    "FLASHINFER_WORKSPACE_BASE": DYNAMO_COMPILE_CACHE,
    "CUDA_CACHE_PATH": f"{DYNAMO_COMPILE_CACHE}/nv",
}


_OPERATOR_OWNED = ("serviceAccountName", "automountServiceAccountToken", "priorityClassName")


@dataclass(frozen=True, kw_only=True)
class DynamoComponentProps:
    """One component: ``type`` (frontend, worker, prefill, decode), its replicas and its ``main`` container."""

    name: str
    """Component name (unique in the graph; the operator names its objects ``<graph>-<name>``), also the pods'
    ``inferstack.io/role`` label. An RFC 1123 label."""
    type: str
    """``frontend`` (the OpenAI HTTP API; a graph needs one), ``worker``, ``prefill`` or ``decode``; decides the
    ports ``main`` declares (``http`` or ``system``/``nixl``)."""
    replicas: int = 1
    """Pods of the component. At least 1. Default 1."""
    image: str
    """Image of ``main`` (a Dynamo runtime), pinned by tag or digest; its Dynamo release must be the pinned
    operator's (major.minor)."""
    command: Sequence[str]
    """The whole command of ``main`` (it replaces the operator's)."""
    args: Sequence[str] = ()
    """The whole arguments of ``main`` (they replace the operator's). Default none."""
    env: Sequence[k8s.EnvVar] = ()
    """Environment of ``main`` (the model's and the engine's variables). Default none."""
    requests: Mapping[str, str]
    """Requests of ``main`` (``nvidia.com/gpu`` included), Kubernetes quantities."""
    limits: Mapping[str, str]
    """Limits of ``main``; extended resources must equal their ``requests``."""
    placement: PodPlacement
    """Where the component pods run: node selector, tolerations, affinity (e.g. prefill and decode in one zone) and
    scheduler; ``priority_class`` is refused (it needs Grove)."""
    mounts: Sequence[Mount] = ()
    """Mounts of ``main`` besides the cache and /tmp emptyDirs, each carrying its volume (e.g. the model's). Default
    none."""
    init_containers: Sequence[k8s.Container] = ()
    """Init containers of the component pods (e.g. waiting for the model sync). Default none."""
    init_mounts: Sequence[Mount] = ()
    """Volumes only the init containers mount, each carrying its volume (see ``ServingPodProps.init_mounts``).
    Default none."""
    shm_gib: float = 8
    """``sharedMemorySize`` (``/dev/shm``), GiB. Default 8 (the operator's)."""
    compilation_cache: str | None = None
    """A PersistentVolumeClaim (in the graph's namespace) the operator mounts as the vLLM compile cache
    (``compilationCache``: at :data:`DYNAMO_COMPILE_CACHE`, ``VLLM_CACHE_ROOT`` pointed there — Dynamo 1.4.0
    graph.go:1849-1935, backend_vllm.go:117-139). The pod template carries the volume, named after the claim as
    the operator requires, so the pod's ``fsGroupChangePolicy`` covers it. Workers only. Default none."""

    @property
    def ports(self) -> Mapping[str, int]:
        return FRONTEND_PORTS if self.type == "frontend" else WORKER_PORTS


@dataclass(frozen=True, kw_only=True)
class DynamoGraphProps:
    """A DynamoGraphDeployment.

    :param name: the graph (and its objects' prefix; DNS-1123 label).
    :param backend: ``backendFramework``. Default ``vllm``.
    :param monitoring: PodMonitors for the frontend (``/metrics`` on ``http``) and the workers (``/metrics`` on
        ``system``). Default on.
    """

    name: str
    """Name of the DynamoGraphDeployment, prefix of the objects the operator creates (``<name>-<component>``) and of
    the PodMonitors; also the ``app.kubernetes.io/name`` label. An RFC 1123 label."""
    namespace: str
    """Namespace of the graph and PodMonitors. An RFC 1123 label."""
    components: Sequence[DynamoComponentProps]
    """The components: unique names, at least one of type ``frontend``."""
    backend: str = "vllm"
    """``backendFramework``: ``vllm``, ``sglang`` or ``trtllm``. Default ``vllm``."""
    pull_secrets: Sequence[str] = ()
    """Image pull Secrets of every component's pods. Default none."""
    monitoring: bool = True
    """Render PodMonitors ``<name>-frontend`` (``/metrics`` on ``http``) and ``<name>-workers`` (``/metrics`` on
    ``system``). Default True."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra labels of the graph and its pods (``app.kubernetes.io/*`` and ``inferstack.io/role`` are the
    construct's). Default none."""


class DynamoGraph(Construct):
    """The DynamoGraphDeployment (+ PodMonitors) of one Dynamo workload."""

    def __init__(self, scope: Construct, construct_id: str, props: DynamoGraphProps) -> None:
        super().__init__(scope, construct_id)
        owner = f"DynamoGraph {props.name!r}"
        check.dns_label(owner, "name", props.name)
        check.dns_label(owner, "namespace", props.namespace)
        check.one_of(owner, "backend", props.backend, ("vllm", "sglang", "trtllm"))
        names = [c.name for c in props.components]
        if len(set(names)) != len(names) or not any(c.type == "frontend" for c in props.components):
            raise check.PropError(f"{owner}: components — unique names and one frontend are required (got {names})")
        for component in props.components:
            where = f"components[{component.name!r}]"
            check.dns_label(owner, f"{where}.name", component.name)
            check.one_of(owner, f"{where}.type", component.type, COMPONENT_TYPES)
            check.pinned_image(owner, f"{where}.image", component.image)
            mismatch = runtime_version_problem(component.name, component.image)
            if mismatch:
                raise check.PropError(f"{owner}: {where}.image — {mismatch}")
            check.quantities(owner, f"{where}.requests", component.requests)
            check.extended_resources_equal(owner, component.requests, component.limits)
            check.at_least(owner, f"{where}.replicas", component.replicas, 1, "a graph component serves")
            component.placement.refuse(owner, f"{where}.placement", ("priority_class",), "it needs Grove")
        self.props = props
        labels = {
            "app.kubernetes.io/name": props.name,
            "app.kubernetes.io/component": "dynamo",
            "app.kubernetes.io/part-of": "inferstack",
        }
        self.labels = labels
        components = [self._component(props, component, labels) for component in props.components]
        self.graph = CustomResource(
            self,
            "graph",
            manifest={
                "apiVersion": API_VERSION,
                "kind": "DynamoGraphDeployment",
                "metadata": {"name": props.name, "namespace": props.namespace, "labels": {**props.labels, **labels}},
                "spec": {"backendFramework": props.backend, "components": components},
            },
        )
        #: The operator's Service of the frontend (``<graph>-<component>``, GetDCDResourceName): the OpenAI API on
        #: port 8000.
        self.service_name = f"{props.name}-frontend"
        if props.monitoring:
            for role, port in (("frontend", "http"), ("workers", "system")):
                selector = (
                    {"matchLabels": {**labels, "inferstack.io/role": "frontend"}}
                    if role == "frontend"
                    else {
                        "matchLabels": labels,
                        "matchExpressions": [
                            {
                                "key": "inferstack.io/role",
                                "operator": "In",
                                "values": sorted(c.name for c in props.components if c.type != "frontend"),
                            }
                        ],
                    }
                )
                pod_monitor(
                    self,
                    f"pod-monitor-{role}",
                    name=f"{props.name}-{role}",
                    namespace=props.namespace,
                    labels=labels,
                    selector=selector,
                    port=port,
                )

    @staticmethod
    def _component(
        props: DynamoGraphProps, component: DynamoComponentProps, labels: Mapping[str, str]
    ) -> dict[str, Any]:
        pod_labels = {**props.labels, **labels, "inferstack.io/role": component.name}
        pod = ServingPodProps(
            name=props.name,
            namespace=props.namespace,
            component="dynamo",
            image=component.image,
            command=list(component.command),
            args=list(component.args),
            container_name="main",
            port=next(iter(component.ports.values())),
            home=DYNAMO_CACHE,
            user="dynamo",
            service_account="",
            requests=component.requests,
            limits=component.limits,
            placement=component.placement,
            startup_seconds=600,
            shm_gib=component.shm_gib,
            init_containers=component.init_containers,
            init_mounts=component.init_mounts,
            mounts=[*component.mounts, *_compilation_cache_mounts(component)],
        )
        container = k8s.Container(
            name="main",
            image=component.image,
            command=list(component.command),
            args=list(component.args) or None,
            ports=[k8s.ContainerPort(name=n, container_port=p) for n, p in component.ports.items()],
            env=[
                *component.env,
                *(
                    k8s.EnvVar(name=k, value=v)
                    for k, v in (COMPILATION_CACHE_ENV.items() if component.compilation_cache else ())
                ),
            ]
            or None,
            resources=k8s.ResourceRequirements(
                requests={k: k8s.Quantity.from_string(v) for k, v in component.requests.items()},
                limits={k: k8s.Quantity.from_string(v) for k, v in component.limits.items()},
            ),
            security_context=k8s.SecurityContext(
                run_as_non_root=True,
                run_as_user=DYNAMO_UID,
                allow_privilege_escalation=False,
                capabilities=k8s.Capabilities(drop=["ALL"]),
            ),
            # the cache (HOME), /tmp and the model's; /dev/shm is the operator's (sharedMemorySize)
            volume_mounts=volume_mounts(m for m in serving_mounts(pod) if m.name != "shm"),
        )
        template = pod_template_json(pod, pod_labels, container)
        spec = template["spec"]
        for key in _OPERATOR_OWNED:
            spec.pop(key, None)
        spec["volumes"] = [v for v in spec.get("volumes", []) if v["name"] != "shm"]  # sharedMemorySize's
        if props.pull_secrets:
            spec["imagePullSecrets"] = [{"name": secret} for secret in props.pull_secrets]
        rendered: dict[str, Any] = {
            "name": component.name,
            "type": component.type,
            "replicas": component.replicas,
            "sharedMemorySize": f"{component.shm_gib:g}Gi",
            "podTemplate": {"metadata": {"labels": pod_labels}, "spec": spec},
        }
        if component.compilation_cache is not None:
            rendered["compilationCache"] = {"pvcName": component.compilation_cache, "mountPath": DYNAMO_COMPILE_CACHE}
        return rendered
