"""WorkloadsStack: per workload, the Pod Identity associations of its service accounts (to the prefix-scoped roles
of the storage stack) and the Kubernetes objects of its chart."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import cdk8s
from aws_cdk import aws_eks_v2 as eks
from aws_cdk import aws_iam as iam
from constructs import Construct

from inferstack.charts.workload import (
    NamespacesChart,
    StorageRefs,
    WorkloadChart,
    server_service_account,
    sync_service_account,
)
from inferstack.config.engine import AutoscalerKind
from inferstack.config.model import InferstackConfig
from inferstack.config.workloads import WorkloadConfig
from inferstack.stacks.compute import add_chart_manifest
from inferstack.stacks.observability import add_keda, add_prometheus_stack
from inferstack.stacks.storage import StorageStack


class WorkloadsStack(cdk.Stack):
    """Workload identities and charts for ``config.workloads``."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: InferstackConfig,
        cluster: eks.Cluster,
        storage: StorageStack,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.config, self.cluster, self.storage = config, cluster, storage
        app = cdk8s.App()
        self.namespaces = add_chart_manifest(
            self, "Namespaces", cluster, NamespacesChart(app, "namespaces", (w.namespace for w in config.workloads))
        )
        fsx = config.storage.fsx
        file_system = storage.file_system
        refs = StorageRefs(
            region=cdk.Aws.REGION,
            bucket=storage.bucket.bucket_name if storage.bucket is not None else None,
            fsx_id=file_system.file_system_id if file_system is not None else None,
            fsx_dns_name=file_system.dns_name if file_system is not None else None,
            fsx_mount_name=file_system.mount_name if file_system is not None else None,
            fsx_import_prefix=fsx.import_prefix if fsx else "models/",
            fsx_path=fsx.file_system_path if fsx else "/models",
            mount_cache_gib=config.storage.mount_cache_gib,
        )
        self.operators: dict[str, eks.HelmChart] = {}
        observability = config.observability
        if observability.install_prometheus_stack and any(w.monitoring for w in config.workloads):
            self.operators["prometheus"] = add_prometheus_stack(self, cluster)
        if observability.install_keda and any(
            w.autoscaling is not None and w.autoscaling.kind is AutoscalerKind.KEDA for w in config.workloads
        ):
            self.operators["keda"] = add_keda(self, cluster)
        self.roles: dict[str, iam.Role] = {}
        self.charts: dict[str, WorkloadChart] = {}
        self.manifests: dict[str, eks.KubernetesManifest] = {}
        for workload in config.workloads:
            self._identities(workload)
            chart = self.build_chart(app, workload, refs)
            manifest = add_chart_manifest(self, f"Workload-{workload.namespace}-{workload.name}", cluster, chart)
            manifest.node.add_dependency(self.namespaces)
            for addon in storage.addons.values():
                manifest.node.add_dependency(addon)
            for operator in self.operators.values():
                manifest.node.add_dependency(operator)
            self.charts[workload.name] = chart
            self.manifests[workload.name] = manifest

    def build_chart(self, app: cdk8s.App, workload: WorkloadConfig, refs: StorageRefs) -> WorkloadChart:
        """The workload's chart: identities, model volume and jobs, and its vLLM server."""
        return WorkloadChart(app, f"{workload.namespace}-{workload.name}", workload, refs, self.config)

    def _associate(self, workload: WorkloadConfig, service_account: str, role: iam.IRole) -> None:
        eks.CfnPodIdentityAssociation(
            self,
            f"Identity-{workload.namespace}-{service_account}",
            cluster_name=self.cluster.cluster_name,
            namespace=workload.namespace,
            service_account=service_account,
            role_arn=role.role_arn,
        )

    def _identities(self, workload: WorkloadConfig) -> None:
        roles = self.storage.workload_roles.get((workload.namespace, workload.name))
        if roles is None:
            return
        if roles.reader is not None:
            self._associate(workload, server_service_account(workload), roles.reader)
        if roles.sync is not None:
            self._associate(workload, sync_service_account(workload), roles.sync)
