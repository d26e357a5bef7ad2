"""The workloads stacks' slice of the plan: everything the Kubernetes side of a platform is built from, worked out
once from the config (:func:`workloads_plan`), so the stacks and their charts never read the config itself."""

from __future__ import annotations

from dataclasses import dataclass

from inferstack.config.model import InferstackConfig, KnativeServingConfig, KubernetesDelivery, ObservabilityConfig
from inferstack.config.storage import StorageConfig
from inferstack.plan import ResolvedWorkload, resolve
from inferstack.plan.kserve import installs_knative, knative_serving
from inferstack.plan.names import namespaces_to_create
from inferstack.plan.network import NamespaceFlows, network_flows


@dataclass(frozen=True)
class WorkloadsPlan:
    """What the workloads stacks apply, resolved: the workloads, the namespaces and flows inferstack owns, the
    operators the workloads need and the settings those operators install with."""

    workloads: tuple[ResolvedWorkload, ...]
    """Every workload, resolved (pools, roles, models, operators), in config order."""
    namespaces: tuple[str, ...]
    """The workload namespaces inferstack creates and labels (not the built-in ones, not
    ``cluster.existing_namespaces``), sorted."""
    flows: tuple[NamespaceFlows, ...]
    """The network flows of each owned namespace; empty when ``network_policies.enabled`` is off."""
    operators: tuple[str, ...]
    """Operators (:data:`~inferstack.stacks.workload_operators.WORKLOAD_OPERATORS` names) some workload needs,
    sorted; each is installed unless its ``observability.install_*`` switch is off."""
    kubernetes_version: str
    """The cluster's Kubernetes minor version (``cluster.kubernetes_version``), which the charts render for."""
    observability: ObservabilityConfig
    """The operator switches and Prometheus, Grafana and alert settings (``observability``)."""
    knative: KnativeServingConfig | None
    """The Knative Serving KServe's Knative mode runs on: the cluster's (``cluster.knative_serving``) or the one
    inferstack installs; None: none."""
    installs_knative: bool
    """Whether inferstack installs Knative Serving, before KServe
    (:func:`~inferstack.plan.kserve.installs_knative`)."""
    storage: StorageConfig
    """Where models live (``storage``): the Mountpoint cache size, the FSx import prefix and path."""
    gitops: bool = False
    """The Kubernetes side is delivered by GitOps (``kubernetes_delivery: gitops``): the stacks hold only their AWS
    resources. Default False."""

    @property
    def workload_namespaces(self) -> tuple[str, ...]:
        """Every workload's namespace, owned or not, sorted once each (Prometheus watches them all)."""
        return tuple(sorted({workload.namespace for workload in self.workloads}))

    @property
    def syncs(self) -> bool:
        """Whether any workload copies a model into the bucket (its model-sync Job needs the sync image)."""
        return any(model.sync for workload in self.workloads for model in workload.models)


def workloads_plan(config: InferstackConfig) -> WorkloadsPlan:
    """The workloads stacks' slice of ``config``'s plan."""
    workloads = resolve(config).workloads
    return WorkloadsPlan(
        workloads=workloads,
        namespaces=tuple(namespaces_to_create(config)),
        flows=network_flows(config),
        operators=tuple(
            sorted(
                {name for workload in workloads for name in workload.operators}
                # the EFS class lives as long as the file system: removing and re-adding a cache that names it
                # must not find it gone, nor re-adding storage.efs find it naming the old file system
                | ({"efs-storage"} if config.storage.efs is not None else set())
            )
        ),
        kubernetes_version=config.cluster.kubernetes_version,
        observability=config.observability,
        knative=knative_serving(config),
        installs_knative=installs_knative(config),
        storage=config.storage,
        gitops=config.kubernetes_delivery is KubernetesDelivery.GITOPS,
    )
