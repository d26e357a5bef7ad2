"""WorkloadsStack: per workload, the Pod Identity associations of its service accounts (to the prefix-scoped roles
of the storage stack) and the Kubernetes objects of its chart.

A cdk8s chart becomes one JSON string in one custom resource, and a template must stay under CloudFormation's 1 MB
and 500 resources: :func:`shard_workloads` splits the workloads over as many stacks as their rendered charts need
(``<name>-workloads``, ``<name>-workloads-2``, …). The first stack owns what all share (namespaces, operators);
the others depend on it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
import cdk8s
from aws_cdk import aws_eks_v2 as eks
from aws_cdk import aws_iam as iam
from constructs import Construct

from inferstack.charts.network_policies import NetworkPoliciesChart
from inferstack.charts.observability import ObservabilityChart, served_workloads
from inferstack.charts.platform_base import PlatformBaseChart
from inferstack.charts.workload import NamespacesChart, StorageRefs, WorkloadChart, config_refs
from inferstack.config.kinds import kind_of
from inferstack.plan import ResolvedWorkload
from inferstack.plan.workloads import WorkloadsPlan
from inferstack.stacks.compute import add_chart_manifest
from inferstack.stacks.delivery import GITOPS_ATTRIBUTE
from inferstack.stacks.storage import StorageStack
from inferstack.stacks.workload_operators import WORKLOAD_OPERATORS, InferencePoolCrdChart

#: Rendered chart JSON per workloads stack, bytes. The template embeds it escaped, plus identities and wrappers:
#: 450 KB of charts stays well under CloudFormation's 1 MB template limit.
SHARD_BYTES = 450_000
#: Workloads per stack (each adds up to 3 resources: its manifest and two identity associations).
SHARD_WORKLOADS = 60


@dataclass(frozen=True)
class RenderedWorkload:
    """One workload's chart, rendered once (its size decides which workloads stack holds it)."""

    workload: ResolvedWorkload
    """The workload, resolved."""
    chart: WorkloadChart
    """Its chart (the workloads stack applies it as one manifest)."""
    size: int
    """Bytes of the chart's JSON (with :func:`with_policies`, its NetworkPolicies' too)."""
    manifest: list[Any]
    """The chart's objects (``to_json()``, rendered once)."""


def storage_refs(plan: WorkloadsPlan, storage: StorageStack | None) -> StorageRefs:
    """What the Kubernetes objects need of the storage stack (none of it without one: ``hf``/``image`` sources)."""
    if storage is None:
        return StorageRefs(region=cdk.Aws.REGION, **config_refs(plan.storage))
    file_system = storage.file_system
    syncs = plan.syncs
    return StorageRefs(
        region=cdk.Aws.REGION,
        bucket=storage.bucket.bucket_name if storage.bucket is not None else None,
        fsx_id=file_system.file_system_id if file_system is not None else None,
        fsx_dns_name=file_system.dns_name if file_system is not None else None,
        fsx_mount_name=storage.fsx_mount_name,
        efs_id=storage.efs_file_system.file_system_id if storage.efs_file_system is not None else None,
        **config_refs(plan.storage),
        sync_image=storage.model_sync_image if syncs else None,
        sync_image_identity=storage.model_sync_image_identity if syncs else None,
    )


def render_workloads(
    plan: WorkloadsPlan, storage: StorageStack | None, refs: StorageRefs | None = None
) -> list[RenderedWorkload]:
    """Build every workload's chart once (its size decides the sharding). ``refs``: instead of the storage stack's
    (e.g. placeholders, to check the charts without CDK stacks). Default: from ``storage``."""
    app, refs = cdk8s.App(), refs or storage_refs(plan, storage)
    version = plan.kubernetes_version
    rendered = []
    for workload in plan.workloads:
        factory = kind_of(workload.config).chart
        chart = factory(app, f"{workload.namespace}-{workload.name}", workload, refs, kubernetes_version=version)
        objects = chart.to_json()
        rendered.append(RenderedWorkload(workload, chart, len(json.dumps(objects)), objects))
    return rendered


def shard_workloads(
    rendered: Sequence[RenderedWorkload],
    max_bytes: int | None = None,
    max_workloads: int | None = None,
    reserved_first: int = 0,
) -> list[list[RenderedWorkload]]:
    """Consecutive groups whose charts fit ``max_bytes`` (default :data:`SHARD_BYTES`) and ``max_workloads``
    (default :data:`SHARD_WORKLOADS`); config order is kept. ``reserved_first``: bytes the first stack holds besides
    its workloads (namespaces, the namespaces' policies, dashboards: :func:`shared_chart_bytes`), so the first
    group is that much smaller — empty when they fill it. Default 0."""
    max_bytes = max_bytes or SHARD_BYTES
    max_workloads = max_workloads or SHARD_WORKLOADS
    shards: list[list[RenderedWorkload]] = []
    current: list[RenderedWorkload] = []
    size = reserved_first
    for item in rendered:
        full = size + item.size > max_bytes or len(current) >= max_workloads
        if full and (current or (not shards and reserved_first)):
            shards.append(current)
            current, size = [], 0
        current.append(item)
        size += item.size
    if current:
        shards.append(current)
    return shards


def policy_bytes(plan: WorkloadsPlan) -> dict[tuple[str, str], int]:
    """Bytes of each workload's own NetworkPolicies (its own and its benchmark's), which shard with it."""
    flows = plan.flows
    if not flows:
        return {}
    owner = {(ns.namespace, w.name): (ns.namespace, w.owner or w.name) for ns in flows for w in ns.workloads}
    sizes: dict[tuple[str, str], int] = {}
    for policy in NetworkPoliciesChart(cdk8s.App(), "np", flows, namespace_policies=False).to_json():
        meta = policy["metadata"]
        key = owner[(meta["namespace"], meta["name"])]
        sizes[key] = sizes.get(key, 0) + len(json.dumps(policy))
    return sizes


def _dashboards(plan: WorkloadsPlan) -> ObservabilityChart | None:
    """The Grafana dashboards of the served workloads (with ``observability.grafana`` and kube-prometheus-stack)."""
    served = served_workloads(plan.workloads)
    observability = plan.observability
    if not (served and observability.grafana and observability.install_prometheus_stack):
        return None
    return ObservabilityChart(cdk8s.App(), "dashboards", served, observability.alerts)


def shared_chart_bytes(plan: WorkloadsPlan) -> int:
    """Bytes of the charts only the first workloads stack applies: the namespaces, the namespaces' own policies,
    the dashboards (a row per workload) and the InferencePool CRD a router needs (its manifest is inline, ~12 KB;
    the operators' Helm releases name their charts)."""
    size = len(json.dumps(NamespacesChart(cdk8s.App(), "ns", list(plan.namespaces)).to_json()))
    if plan.flows:
        chart = NetworkPoliciesChart(cdk8s.App(), "np", plan.flows, workloads=set())
        size += len(json.dumps(chart.to_json()))
    dashboards = _dashboards(plan)
    if dashboards is not None:
        size += len(json.dumps(dashboards.to_json()))
    if "inference-pool" in plan.operators and plan.observability.install_inference_pool_crd:
        size += len(json.dumps(InferencePoolCrdChart(cdk8s.App(), "inference-pool").to_json()))
    return size


def with_policies(plan: WorkloadsPlan, rendered: Sequence[RenderedWorkload]) -> list[RenderedWorkload]:
    """``rendered`` with each workload's NetworkPolicies counted in its size."""
    sizes = policy_bytes(plan)
    return [
        dataclasses.replace(item, size=item.size + sizes.get((item.workload.namespace, item.workload.name), 0))
        for item in rendered
    ]


class WorkloadsStack(cdk.Stack):
    """Identities and Kubernetes objects of one shard of workloads.

    :param plan: the platform's :class:`~inferstack.plan.workloads.WorkloadsPlan` (all workloads, for what the
        first stack shares: namespaces, network policies, operators, dashboards).
    :param workloads: this stack's shard (:func:`render_workloads`, :func:`shard_workloads`).
    :param primary: the first workloads stack, which owns namespaces and operators; ``None`` for that stack itself.
    :param platform_base: apply inferstack's PriorityClasses here (on a team's own cluster, which has no
        ``ClusterStack``). Default False.

    With ``plan.gitops`` (``kubernetes_delivery: gitops``) the stack holds only its AWS resources: its Kubernetes
    side is what ``inferstack export`` writes.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        plan: WorkloadsPlan,
        cluster: eks.ICluster,
        storage: StorageStack | None,
        workloads: Sequence[RenderedWorkload],
        primary: WorkloadsStack | None = None,
        platform_base: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        # ``kubernetes_delivery: gitops``: every Helm release, manifest and wait below is handed to GitOps
        # (inferstack.stacks.delivery); the roles, Pod Identity associations and add-ons stay.
        setattr(self, GITOPS_ATTRIBUTE, plan.gitops)
        self.plan, self.cluster, self.storage = plan, cluster, storage
        self.operators: dict[str, Construct] = {}
        if primary is None:
            self.namespaces: tuple[Construct, ...] = ()
            if platform_base:  # a team's own cluster: inferstack's PriorityClasses come with the workloads
                base = add_chart_manifest(
                    self, "PlatformBase", cluster, PlatformBaseChart(cdk8s.App(), "platform-base"), durable=True
                )
                self.namespaces = (base,)
            if plan.namespaces:
                chart = NamespacesChart(cdk8s.App(), "namespaces", list(plan.namespaces))
                self.namespaces += (add_chart_manifest(self, "Namespaces", cluster, chart, durable=True),)
            self._install_operators()
            self._observability()
        else:
            self.namespaces = primary.namespaces
            self.operators = primary.operators
        flows = plan.flows
        if flows:
            # the namespaces' policies in the first stack; each stack the policies of the workloads it holds
            held = {(item.workload.namespace, item.workload.name) for item in workloads}
            policies = NetworkPoliciesChart(
                cdk8s.App(), "network-policies", flows, namespace_policies=primary is None, workloads=held
            )
            objects = policies.to_json()
            if objects:  # a shard whose workloads all live in namespaces inferstack does not own has none
                manifest = add_chart_manifest(
                    self, "NetworkPolicies", cluster, policies, rendered=objects, overwrite=True
                )
                for dependency in self.namespaces:
                    manifest.node.add_dependency(dependency)
        self.charts: dict[str, WorkloadChart] = {}
        self.manifests: dict[str, Construct] = {}
        for item in workloads:
            workload = item.workload
            identities = self._identities(workload)
            manifest = add_chart_manifest(
                self, f"Workload-{workload.namespace}-{workload.name}", cluster, item.chart, rendered=item.manifest
            )
            addons = storage.addons.values() if storage is not None else ()
            operators = [self.operators[name] for name in sorted(workload.operators) if name in self.operators]
            # The pods get credentials only if their Pod Identity association exists when they start (the EKS Pod
            # Identity webhook injects the credentials at pod admission), so the objects wait for the associations.
            for dependency in (*self.namespaces, *addons, *operators, *identities):
                manifest.node.add_dependency(dependency)
            self.charts[workload.name] = item.chart
            self.manifests[workload.name] = manifest

    def _install_operators(self) -> None:
        """Operators whose CRDs any workload (in any shard) uses (the plan says which; the config may leave one out
        when the cluster already runs it). A workload's objects wait for the operators they need."""
        refs = storage_refs(self.plan, self.storage)
        for name in self.plan.operators:
            chart = WORKLOAD_OPERATORS[name](self, self.cluster, self.plan, refs)
            if chart is not None:
                self.operators[name] = chart

    def _observability(self) -> None:
        """The Grafana dashboards (with ``observability.grafana``), once kube-prometheus-stack made their namespace."""
        chart = _dashboards(self.plan)
        if chart is None:
            return
        manifest = add_chart_manifest(self, "Dashboards", self.cluster, chart)
        for dependency in (
            *self.namespaces,
            *([self.operators["prometheus"]] if "prometheus" in self.operators else []),
        ):
            manifest.node.add_dependency(dependency)

    def _associate(
        self, workload: ResolvedWorkload, service_account: str, role: iam.IRole
    ) -> eks.CfnPodIdentityAssociation:
        return eks.CfnPodIdentityAssociation(
            self,
            f"Identity-{workload.namespace}-{service_account}",
            cluster_name=self.cluster.cluster_name,
            namespace=workload.namespace,
            service_account=service_account,
            role_arn=role.role_arn,
        )

    def _identities(self, workload: ResolvedWorkload) -> list[eks.CfnPodIdentityAssociation]:
        """The workload's roles and the Pod Identity associations of its service accounts."""
        if self.storage is None:
            return []
        roles = self.storage.add_workload_roles(self, workload, self.cluster.cluster_name)
        associations = []
        if roles.reader is not None:
            for account in workload.readers:
                associations.append(self._associate(workload, account, roles.reader))
        if roles.sync is not None:
            associations.append(self._associate(workload, workload.writer_service_account, roles.sync))
        if roles.bench is not None and workload.bench is not None:
            associations.append(self._associate(workload, workload.bench.service_account, roles.bench))
        return associations
