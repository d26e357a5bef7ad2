"""NimServer: an NVIDIA NIM as the NIM operator serves it — a ``NIMCache`` (the operator's Job downloads the selected
engine profiles into a PVC it creates) and a ``NIMService`` (a Deployment, Service and ServiceMonitor the operator
renders, serving from that cache). Both ``apps.nvidia.com/v1alpha1``, validated against the vendored CRDs.

What the NIM operator 3.0 does with these fields and this relies on (NVIDIA/k8s-nim-operator@v3.0.0):

* ``NIMService`` waits for its NIMCache to be ``Ready`` before it creates the Deployment (platform/standalone/
  nimservice.go); the pods mount the cache PVC at ``/model-store``.
* The operator names the pods' ServiceAccount, Role, Deployment and Service after the NIMService
  (``GetServiceAccountName``); there is no field to choose another ServiceAccount.
* ``expose.service.port`` is dereferenced without a default (nimservice_types.go): it is always set here.
* The caching Job runs where ``NIMCache.spec.nodeSelector`` says; unset, on nodes labelled
  ``feature.node.kubernetes.io/pci-10de.present`` (NFD) — so it is always set. ``volumeAccessMode`` has no default.
* ``metrics.enabled`` makes the operator create a ServiceMonitor (``/v1/metrics`` on port ``api``): without the
  ServiceMonitor CRD the NIMService never gets its Deployment.
* Operator 3.0 renders no ``affinity`` or ``priorityClassName`` for the Deployment, so neither is offered: a
  placement's ``affinity``, ``priority_class`` and ``scheduler_name`` are refused (the NIMCache CRD has none of
  them, and what the operator does with the NIMService's ``schedulerName`` is not relied on).
* The NGC key is read from key ``NGC_API_KEY`` of ``authSecret``; a Hugging Face token from key ``HF_TOKEN``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from constructs import Construct

from inferstack.constructs import validation as check
from inferstack.constructs.custom_resource import CustomResource
from inferstack.constructs.pod import PodPlacement

API_VERSION = "apps.nvidia.com/v1alpha1"
#: The NIM's OpenAI API port (``DefaultAPIPort``; the container port is named ``api``).
API_PORT = 8000
#: NIM's readiness endpoint (the operator's default readiness and startup probes use it).
READY_PATH = "/v1/health/ready"
STARTUP_PERIOD_SECONDS = 10
STARTUP_INITIAL_DELAY_SECONDS = 30
ACCESS_MODES = ("ReadWriteOnce", "ReadWriteMany", "ReadOnlyMany", "ReadWriteOncePod")


@dataclass(frozen=True, kw_only=True)
class NimCacheProps:
    """The NIMCache: source, profile selection and volume."""

    source: str = "ngc"
    """``ngc`` or ``hf``. Default ngc."""
    auth_secret: str
    """``ngc``: the NGC API key Secret (key ``NGC_API_KEY``); ``hf``: the Hugging Face token Secret (key
    ``HF_TOKEN``)."""
    pull_secret: str
    """Pull Secret of the model-puller image (the NIM image)."""
    model_selector: Mapping[str, Any] = field(default_factory=dict)
    """``ngc``: ``source.ngc.model`` (``engine``, ``precision``, ``tensorParallelism`` (a string), ``qosProfile``,
    ``gpus``, ``profiles``)."""
    hf_endpoint: str = "https://huggingface.co"
    """``hf``: the Hugging Face endpoint the caching Job downloads from (``source.hf.endpoint``). Default
    ``https://huggingface.co``."""
    hf_namespace: str | None = None
    """``hf``: the organization of the model id."""
    hf_model_name: str | None = None
    """``hf`` (required): the model's name within ``hf_namespace`` (``source.hf.modelName``)."""
    hf_revision: str | None = None
    """``hf``: the revision (branch, tag or commit) to cache. Default none: not set."""
    size_gib: int
    """Size of the cache PVC ``<name>-model-cache`` the operator creates, GiB."""
    storage_class: str
    """StorageClass of the cache PVC (an RFC 1123 label)."""
    access_mode: str = "ReadWriteOnce"
    """``volumeAccessMode`` of the cache PVC: ``ReadWriteOnce``, ``ReadWriteMany``, ``ReadOnlyMany`` or
    ``ReadWriteOncePod``. Default ``ReadWriteOnce``."""
    cpu: str = "4"
    """CPU of the caching Job, a Kubernetes quantity (cores, or millicores as ``500m``). Default 4."""
    memory: str = "16Gi"
    """Memory of the caching Job, a Kubernetes quantity. Default ``16Gi``."""
    placement: PodPlacement
    """Where the caching Job runs (its PVC binds in that node's zone): node selector and tolerations only."""


@dataclass(frozen=True, kw_only=True)
class NimServerProps:
    """A NIM and its cache.

    :param name: names the NIMCache, the NIMService and everything the operator creates for them (DNS-1123 label).
    :param startup_seconds: what the startup probe allows (``/v1/health/ready`` every 10 s after 30 s).
    :param monitoring: the operator's ServiceMonitor (needs the Prometheus operator CRDs). Default on.
    """

    name: str
    """Name of the NIMCache, the NIMService and what the operator creates for them (Deployment, Service,
    ServiceAccount, Role); the cache PVC is ``<name>-model-cache``. An RFC 1123 label."""
    namespace: str
    """Namespace of the NIMCache and NIMService. An RFC 1123 label."""
    repository: str
    """The NIM image repository (e.g. ``nvcr.io/nim/meta/llama-3.1-8b-instruct``); also the caching Job's model
    puller."""
    tag: str
    """The NIM image tag (pinned: not ``latest``), of the server and the model puller."""
    auth_secret: str
    """The NGC API key Secret (key ``NGC_API_KEY``)."""
    pull_secrets: Sequence[str] = ()
    """Image pull Secrets of the NIM pods (RFC 1123 labels). Default none."""
    replicas: int = 1
    """Replicas of the NIMService. At least 1. Default 1."""
    requests: Mapping[str, str]
    """NIM container requests (``nvidia.com/gpu`` included), Kubernetes quantities."""
    limits: Mapping[str, str]
    """NIM container limits; extended resources must equal their ``requests``."""
    placement: PodPlacement
    """Where the NIM pods run: node selector and tolerations only (see the module docstring)."""
    startup_seconds: int
    """How long the startup probe allows (``/v1/health/ready`` every 10 seconds after a 30-second delay), seconds. At
    least 60."""
    shm_gib: float = 8
    """``storage.sharedMemorySizeLimit``: size of the pods' ``/dev/shm``, GiB. Default 8."""
    monitoring: bool = True
    """``metrics.enabled``: the operator creates a ServiceMonitor (every 15 seconds; needs the Prometheus operator
    CRDs). Default True."""
    profile: str | None = None
    """One explicit profile id the server runs (``NIM_MODEL_PROFILE``). Default: NIM picks among the cached ones."""
    cache: NimCacheProps
    """The NIMCache the server runs from (source, profile selection, PVC, where the caching Job runs)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra labels of the NIMCache, the NIMService and its pods. Default none."""


#: Placement fields the NIM operator 3.0 does not render (see the module docstring).
_UNRENDERED = ("affinity", "scheduler_name", "priority_class")
_UNRENDERED_WHY = "the NIM operator 3.0 does not render it"


class NimServer(Construct):
    """The NIMCache and NIMService of one NIM."""

    def __init__(self, scope: Construct, construct_id: str, props: NimServerProps) -> None:
        super().__init__(scope, construct_id)
        owner = f"NimServer {props.name!r}"
        check.dns_label(owner, "name", props.name)
        check.dns_label(owner, "namespace", props.namespace)
        check.pinned_image(owner, "repository:tag", f"{props.repository}:{props.tag}")
        check.dns_label(owner, "auth_secret", props.auth_secret)
        for secret in props.pull_secrets:
            check.dns_label(owner, "pull_secrets[]", secret)
        check.quantities(owner, "requests", props.requests)
        check.extended_resources_equal(owner, props.requests, props.limits)
        check.at_least(owner, "replicas", props.replicas, 1, "the NIM operator 3.0 CRD allows no fewer")
        check.at_least(owner, "startup_seconds", props.startup_seconds, 60, "NIM needs minutes to load a profile")
        props.placement.refuse(owner, "placement", _UNRENDERED, _UNRENDERED_WHY)
        cache = props.cache
        cache.placement.refuse(owner, "cache.placement", _UNRENDERED, _UNRENDERED_WHY)
        check.one_of(owner, "cache.source", cache.source, ("ngc", "hf"))
        check.one_of(owner, "cache.access_mode", cache.access_mode, ACCESS_MODES)
        check.dns_label(owner, "cache.storage_class", cache.storage_class)
        check.quantities(owner, "cache", {"cpu": cache.cpu, "memory": cache.memory})
        if cache.source == "hf" and not (cache.hf_namespace and cache.hf_model_name):
            raise check.PropError(f"{owner}: cache — an hf source needs hf_namespace and hf_model_name")
        self.props = props
        labels = {
            "app.kubernetes.io/name": props.name,
            "app.kubernetes.io/component": "nim",
            "app.kubernetes.io/part-of": "inferstack",
        }
        image = f"{props.repository}:{props.tag}"
        self.cache_pvc_name = f"{props.name}-model-cache"
        self.cache = CustomResource(
            self,
            "nim-cache",
            manifest={
                "apiVersion": API_VERSION,
                "kind": "NIMCache",
                "metadata": {"name": props.name, "namespace": props.namespace, "labels": {**props.labels, **labels}},
                "spec": {
                    "source": self._source(cache, image),
                    "storage": {
                        "pvc": {
                            "create": True,
                            "name": self.cache_pvc_name,
                            "size": f"{cache.size_gib}Gi",
                            "storageClass": cache.storage_class,
                            "volumeAccessMode": cache.access_mode,
                        }
                    },
                    "resources": {"cpu": cache.cpu, "memory": cache.memory},
                    **cache.placement.pod_spec_json(),
                },
            },
        )
        failure_threshold = max(
            1, -(-(props.startup_seconds - STARTUP_INITIAL_DELAY_SECONDS) // STARTUP_PERIOD_SECONDS)
        )
        storage: dict[str, Any] = {
            "nimCache": {"name": props.name, **({"profile": props.profile} if props.profile else {})},
            "sharedMemorySizeLimit": f"{props.shm_gib:g}Gi",
        }
        spec: dict[str, Any] = {
            "image": {
                "repository": props.repository,
                "tag": props.tag,
                "pullPolicy": "IfNotPresent",
                "pullSecrets": list(props.pull_secrets),
            },
            "authSecret": props.auth_secret,
            "storage": storage,
            "replicas": props.replicas,
            "resources": {"requests": dict(props.requests), "limits": dict(props.limits)},
            "expose": {"service": {"type": "ClusterIP", "port": API_PORT}},
            "startupProbe": {
                "enabled": True,
                "probe": {
                    "httpGet": {"path": READY_PATH, "port": "api"},
                    "initialDelaySeconds": STARTUP_INITIAL_DELAY_SECONDS,
                    "periodSeconds": STARTUP_PERIOD_SECONDS,
                    "timeoutSeconds": 1,
                    "failureThreshold": failure_threshold,
                },
            },
            **props.placement.pod_spec_json(),
            "labels": {**props.labels, **labels},
        }
        if props.monitoring:
            spec["metrics"] = {"enabled": True, "serviceMonitor": {"interval": "15s"}}
        self.service = CustomResource(
            self,
            "nim-service",
            manifest={
                "apiVersion": API_VERSION,
                "kind": "NIMService",
                "metadata": {"name": props.name, "namespace": props.namespace, "labels": {**props.labels, **labels}},
                "spec": spec,
            },
        )
        self.service.node.add_dependency(self.cache)
        #: The Service the operator creates for the NIMService (its name, port 8000).
        self.service_name = props.name

    @staticmethod
    def _source(cache: NimCacheProps, image: str) -> dict[str, Any]:
        if cache.source == "hf":
            hf: dict[str, Any] = {
                "endpoint": cache.hf_endpoint,
                "namespace": cache.hf_namespace,
                "modelName": cache.hf_model_name,
                "authSecret": cache.auth_secret,
                "modelPuller": image,
                "pullSecret": cache.pull_secret,
            }
            if cache.hf_revision:
                hf["revision"] = cache.hf_revision
            return {"hf": hf}
        ngc: dict[str, Any] = {"modelPuller": image, "pullSecret": cache.pull_secret, "authSecret": cache.auth_secret}
        if cache.model_selector:
            ngc["model"] = dict(cache.model_selector)
        return {"ngc": ngc}
