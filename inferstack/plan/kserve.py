"""Plan of the ``kserve`` kind: one ``server`` role (the predictor pod, ``tensor_parallel_size`` GPUs) and the cold
start of a predictor scaled to zero: a node, the runtime image and the model load."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from inferstack.catalog.kubernetes import KNATIVE_NAMESPACE
from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.config.kserve import DeploymentMode, KServeWorkloadConfig
from inferstack.config.model import InferstackConfig, KnativeIngress, KnativeServingConfig
from inferstack.config.workloads import WorkloadBase
from inferstack.plan import ResolvedPool, ResolvedWorkload, server_role, workload_plan
from inferstack.plan.placement import STARTUP_SAFETY

#: A GPU node from nothing: Karpenter's launch, EC2 boot, kubelet join, the GPU device plugin ready, seconds.
NODE_START_SECONDS = 180
#: Pulling the runtime image (kserve/huggingfaceserver -gpu, ~10 GB) onto a new node, seconds (?).
IMAGE_PULL_SECONDS = 120


@dataclass(frozen=True)
class ColdStart:
    """What a request waits for when no replica runs, seconds (the model load without the probe's safety)."""

    node: int
    image: int
    model: int

    @property
    def total(self) -> int:
        return self.node + self.image + self.model


def cold_start(resolved: ResolvedWorkload) -> ColdStart:
    model = int(resolved.server.pod.estimated_startup_seconds / STARTUP_SAFETY)
    return ColdStart(node=NODE_START_SECONDS, image=IMAGE_PULL_SECONDS, model=model)


def plan_kserve(
    config: InferstackConfig, pools: Mapping[str, ResolvedPool], index: int, workload: WorkloadBase
) -> ResolvedWorkload:
    assert isinstance(workload, KServeWorkloadConfig)
    server = server_role(config, pools, workload, ranks=workload.ranks)
    return workload_plan(
        config, pools, index, workload, roles={"server": server}, image=ENGINE_IMAGES["kserve-huggingface"]
    )


#: The Knative Serving inferstack installs for KServe's Knative mode (``observability.install_knative_serving``):
#: 1.21 with Kourier, the pod-spec node selector and tolerations features on. The Knative Operator puts every
#: object of the release, Kourier's gateway included, in the KnativeServing's namespace (knative/operator
#: knative-v1.21.1 pkg/reconciler/knativeserving/common/transformers.go: ``mf.InjectNamespace``).
INSTALLED_KNATIVE = KnativeServingConfig(
    version="1.21",
    ingress=KnativeIngress.KOURIER,
    podspec_features_enabled=True,
    gateway_namespace=KNATIVE_NAMESPACE,
)


def needs_knative(config: InferstackConfig) -> bool:
    """Whether a ``kserve`` workload runs in Knative mode."""
    return any(getattr(w, "deployment_mode", None) is DeploymentMode.KNATIVE for w in config.workloads)


def installs_knative(config: InferstackConfig) -> bool:
    """Whether inferstack installs Knative Serving: a Knative-mode workload, ``cluster.knative_serving`` unset (the
    cluster does not run it already) and ``observability.install_knative_serving`` on."""
    return (
        needs_knative(config)
        and config.cluster.knative_serving is None
        and config.observability.install_knative_serving
    )


def knative_serving(config: InferstackConfig) -> KnativeServingConfig | None:
    """The Knative Serving the platform's Knative-mode workloads run on: the cluster's own
    (``cluster.knative_serving``), else the one inferstack installs (:data:`INSTALLED_KNATIVE`), else none."""
    if config.cluster.knative_serving is not None:
        return config.cluster.knative_serving
    return INSTALLED_KNATIVE if installs_knative(config) else None
