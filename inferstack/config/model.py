"""The inferstack configuration, one pydantic model per concern. ``inferstack.yaml`` is an instance of
:class:`InferstackConfig`; every field documents its default and unit. Unknown keys are errors.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from pydantic import ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from inferstack.catalog.instances import INSTANCE_TYPES, AcceleratorKind
from inferstack.catalog.kubernetes import KNATIVE_GATEWAY_NAMESPACES, PLATFORM_NAMESPACES
from inferstack.catalog.versions import (
    CORE_ADDONS,
    DEFAULT_KUBERNETES_VERSION,
    EKS_REGISTRY_ACCOUNTS,
    KUBERNETES_RELEASES,
)
from inferstack.config.aibrix import AibrixPlatformConfig
from inferstack.config.alerts import AlertTargets
from inferstack.config.base import FIELD_DESCRIPTIONS, StrictModel, refuse_unread
from inferstack.config.compute import ComputeConfig
from inferstack.config.errors import did_you_mean
from inferstack.config.kinds import on_kinds_changed, workload_union
from inferstack.config.network_policy import NetworkPolicyConfig
from inferstack.config.storage import StorageConfig
from inferstack.config.types import (
    AccountId,
    AvailabilityZone,
    Cidr,
    ClusterName,
    InstanceTypeName,
    KubernetesName,
    PrincipalArn,
    Region,
    StackPrefix,
    VpcCidr,
)

#: Tag-key prefixes that name an owner of the instance (lowercase): Karpenter terminates instances carrying its
#: keys that no NodeClaim backs (its garbage collection) and its EC2NodeClass CRD refuses karpenter.sh/nodepool,
#: karpenter.sh/nodeclaim, karpenter.k8s.aws/ec2nodeclass, kubernetes.io/cluster* and eks:eks-cluster-name
#: (karpenter.k8s.aws_ec2nodeclasses.yaml spec.tags x-kubernetes-validations, v1.14.1); ``aws:`` is AWS's own.
OWNED_TAG_PREFIXES: dict[str, str] = {
    "aws:": "AWS",
    "eks:": "Amazon EKS",
    "karpenter.sh/": "Karpenter",
    "karpenter.k8s.aws/": "Karpenter",
    "kubernetes.io/cluster": "Kubernetes (cluster ownership)",
}


#: A DNS-1035 label's longest (Service names, and the objects named after them).
DNS_LABEL_MAX = 63


class EndpointAccess(StrEnum):
    """Who can reach the Kubernetes API endpoint."""

    PRIVATE = "private"
    """Only from inside the VPC (the kubectl Lambda runs in the private subnets)."""
    PUBLIC_AND_PRIVATE = "public_and_private"
    """Inside the VPC, and from ``cluster.public_access_cidrs`` outside it."""
    PUBLIC = "public"
    """Only from ``cluster.public_access_cidrs``; nodes reach it over the internet via NAT."""


class ControlPlaneLog(StrEnum):
    """EKS control-plane log types (CloudWatch Logs)."""

    API = "api"
    AUDIT = "audit"
    AUTHENTICATOR = "authenticator"
    CONTROLLER_MANAGER = "controllerManager"
    SCHEDULER = "scheduler"


class CapacityType(StrEnum):
    """How EC2 capacity for a node group is bought."""

    ON_DEMAND = "on_demand"
    SPOT = "spot"


_TAG_TEXT = re.compile(r"^[\w .:/=+\-@]*$")
#: Public subnets are /24 (load balancers only: a few addresses per zone).
PUBLIC_SUBNET_MASK = 24
#: Zones aws-cdk-lib gives an environment-agnostic stack (Stack.availabilityZones: two tokens).
AGNOSTIC_AZS = 2


class EnvironmentConfig(StrictModel):
    """Where the stacks deploy. Leave both empty for environment-agnostic stacks (deploy to the CLI's account)."""

    account: AccountId | None = None
    """AWS account id. Default: none (environment-agnostic)."""
    region: Region | None = None
    """AWS region. Default: none (environment-agnostic)."""


#: CloudWatch Logs' retention values, days (PutRetentionPolicy ``retentionInDays``; aws-cdk-lib RetentionDays).
LOG_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288,
                      3653)  # fmt: skip


def check_log_retention(days: int) -> int:
    """``days`` if CloudWatch Logs takes it as a retention, else a config error listing the values it takes (a log
    group's retention is one of them: any other would be rounded to the next)."""
    if days not in LOG_RETENTION_DAYS:
        raise PydanticCustomError(
            "log_retention",
            "not a CloudWatch Logs retention — one of {valid}",
            {"days": days, "valid": ", ".join(map(str, LOG_RETENTION_DAYS))},
        )
    return days


class NetworkConfig(StrictModel):
    """The VPC the cluster and its nodes live in."""

    vpc_cidr: VpcCidr = "10.0.0.0/16"
    """IPv4 range of the VPC, /16 to /24. Default ``10.0.0.0/16`` (pods take VPC addresses: keep it large)."""
    availability_zones: tuple[AvailabilityZone, ...] | None = None
    """Exact AZs to use (≥ 2). Default: none — CDK picks ``max_azs`` zones as tokens, no lookup needed.
    Required when ``env.account`` and ``env.region`` are both set (an AZ lookup would need AWS credentials)."""
    max_azs: int = Field(default=2, ge=2, le=6)
    """Number of AZs when ``availability_zones`` is not given. Default 2."""
    nat_gateways: int = Field(default=1, ge=1, le=6)
    """NAT gateways (one per AZ at most). Default 1; use one per AZ in production. At least 1: nodes pull images
    and the kubectl Lambda pulls Helm charts through NAT."""
    flow_logs: bool = True
    """VPC flow logs to CloudWatch Logs (all traffic). Default on."""
    flow_log_retention_days: int = 30
    """Retention of the flow log group, days: one of CloudWatch Logs' values (1, 3, 5, 7, 14, 30, 60, 90, 120, 150,
    180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653). Default 30."""
    s3_gateway_endpoint: bool = True
    """S3 gateway endpoint: model weights stream from S3 without NAT charges. Default on."""

    @field_validator("flow_log_retention_days")
    @classmethod
    def _flow_log_retention(cls, days: int) -> int:
        return check_log_retention(days)

    @model_validator(mode="after")
    def _flow_log_settings(self) -> NetworkConfig:
        if not self.flow_logs:
            refuse_unread(
                self,
                ("flow_log_retention_days",),
                "with flow_logs: true (the retention of the flow log group), and flow_logs is false",
                "set flow_logs: true",
            )
        return self

    @field_validator("availability_zones")
    @classmethod
    def _distinct_zones(cls, zones: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if zones is None:
            return zones
        if len(zones) < 2:
            raise PydanticCustomError("min_azs", "EKS needs subnets in at least 2 Availability Zones; list ≥ 2")
        if len(set(zones)) != len(zones):
            raise PydanticCustomError("duplicate_az", "each Availability Zone may appear only once")
        regions = {z[:-1] for z in zones}
        if len(regions) > 1:
            raise PydanticCustomError(
                "az_regions", "zones span regions {regions} — a VPC lives in one region", {"regions": sorted(regions)}
            )
        return zones

    @property
    def az_count(self) -> int:
        return len(self.availability_zones) if self.availability_zones else self.max_azs

    @property
    def private_subnet_mask(self) -> int:
        """Private subnets: /19 in a /16; narrower VPCs get proportionally smaller ones (3 bits below the VPC)."""
        return min(int(self.vpc_cidr.split("/")[1]) + 3, 26)

    def subnets_fit(self) -> bool:
        """Whether one /24 public and one private subnet per zone fit the VPC CIDR, allocated in order and aligned
        to their size (as aws-cdk-lib's Vpc allocates them)."""
        prefix = int(self.vpc_cidr.split("/")[1])
        space, cursor = 2 ** (32 - prefix), 0
        for mask in [PUBLIC_SUBNET_MASK] * self.az_count + [self.private_subnet_mask] * self.az_count:
            size = 2 ** (32 - mask)
            cursor = -(-cursor // size) * size + size
        return cursor <= space

    @model_validator(mode="after")
    def _subnets_fit(self) -> NetworkConfig:
        if not self.subnets_fit():
            raise PydanticCustomError(
                "vpc_too_small",
                "{cidr} cannot hold a /{public} public and a /{private} private subnet in each of {azs} zones — use a "
                "larger VPC (e.g. /16) or fewer zones",
                {
                    "cidr": self.vpc_cidr,
                    "public": PUBLIC_SUBNET_MASK,
                    "private": self.private_subnet_mask,
                    "azs": self.az_count,
                    "field": "vpc_cidr",
                },
            )
        return self

    @model_validator(mode="after")
    def _nat_within_azs(self) -> NetworkConfig:
        if self.nat_gateways > self.az_count:
            raise PydanticCustomError(
                "nat_gateways",
                "{nat} — at most one per Availability Zone; the VPC has {azs}",
                {"nat": self.nat_gateways, "azs": self.az_count, "field": "nat_gateways"},
            )
        return self


class SystemNodeGroupConfig(StrictModel):
    """The managed CPU node group for controllers, operators and Ray heads."""

    instance_types: tuple[InstanceTypeName, ...] = ("m6i.xlarge",)
    """CPU instance types (catalog keys). Default ``m6i.xlarge`` (4 vCPU, 16 GiB)."""
    capacity_type: CapacityType = CapacityType.ON_DEMAND
    """Default on-demand: controllers should not be interrupted."""
    min_size: int = Field(default=2, ge=1)
    """Default 2 (controllers spread over two nodes)."""
    desired_size: int = Field(default=2, ge=1)
    """Default 2."""
    max_size: int = Field(default=4, ge=1)
    """Default 4."""
    disk_size_gib: int = Field(default=100, ge=20, le=16384)
    """Encrypted gp3 root volume, GiB. Default 100."""

    @field_validator("instance_types")
    @classmethod
    def _cpu_only(cls, types: tuple[str, ...]) -> tuple[str, ...]:
        if not types:
            raise PydanticCustomError("empty", "list at least one instance type (e.g. m6i.xlarge)")
        accelerated = [t for t in types if INSTANCE_TYPES[t].accelerator is not AcceleratorKind.NONE]
        if accelerated:
            raise PydanticCustomError(
                "system_accelerated",
                "{types} carry accelerators — the system group runs CPU work; use e.g. m6i.xlarge or m7i.xlarge",
                {"types": ", ".join(accelerated)},
            )
        return types

    @model_validator(mode="after")
    def _sizes_ordered(self) -> SystemNodeGroupConfig:
        if not self.min_size <= self.desired_size <= self.max_size:
            raise PydanticCustomError(
                "sizes",
                "need min_size ≤ desired_size ≤ max_size, got {min} ≤ {desired} ≤ {max}",
                {"min": self.min_size, "desired": self.desired_size, "max": self.max_size, "field": "desired_size"},
            )
        return self


ALL_CONTROL_PLANE_LOGS: tuple[ControlPlaneLog, ...] = tuple(ControlPlaneLog)
#: Namespaces every Kubernetes cluster has.
BUILT_IN_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
#: Namespaces of the cluster itself: never a workload namespace.
SYSTEM_NAMESPACES = BUILT_IN_NAMESPACES - {"default"}


class KubernetesDelivery(StrEnum):
    """How the workloads' Kubernetes side (operators' Helm releases, namespaces, policies, workload objects) reaches
    the cluster."""

    CDK = "cdk"
    """The workloads stacks apply it through the kubectl provider (``cdk deploy``)."""
    GITOPS = "gitops"
    """Argo CD applies it from ``inferstack export``'s folder; the workloads stacks hold only their AWS side."""


class KnativeIngress(StrEnum):
    KOURIER = "kourier"
    """net-kourier (``ingress-class: kourier.ingress.networking.knative.dev``): KServe then creates no Istio
    VirtualService (``disableIstioVirtualHost``)."""
    ISTIO = "istio"
    """net-istio with the ``knative-serving/knative-ingress-gateway`` and local gateways KServe defaults to."""


class KnativeServingConfig(StrictModel):
    """A Knative Serving installation on the cluster, made before inferstack's KServe (the KServe controller
    decides at start whether it manages Knative Services). What KServe's GPU predictors need of it: the
    ``config-features`` flags ``kubernetes.podspec-nodeselector`` and ``kubernetes.podspec-tolerations``
    enabled (Knative 1.21 disables both by default), and the ``config-autoscaler`` ConfigMap in
    ``knative-serving``."""

    version: str = Field(default="1.21", pattern=r"^1\.[0-9]+$")
    """Knative Serving minor version (KServe v0.20.0 is tested with 1.21). Default 1.21."""
    ingress: KnativeIngress = KnativeIngress.KOURIER
    """Its networking layer. Default ``kourier``."""
    podspec_features_enabled: bool = False
    """You enabled ``kubernetes.podspec-nodeselector`` and ``kubernetes.podspec-tolerations`` in
    ``config-features`` (without them Knative refuses a predictor placed on GPU nodes). Default false."""
    gateway_namespace: KubernetesName | None = None
    """The namespace of the networking layer's gateway (Kourier's ``3scale-kourier-gateway`` and
    ``kourier-internal``, Istio's ``knative-local-gateway``): predictors admit its calls and clients egress to it.
    Default: where that layer's own release installs it, ``kourier-system`` or ``istio-system``. Knative installed
    with the Knative Operator runs Kourier in ``knative-serving``: say so here."""

    @property
    def gateway_ns(self) -> str:
        """:attr:`gateway_namespace`, else the ingress's default (:data:`KNATIVE_GATEWAY_NAMESPACES`)."""
        return self.gateway_namespace or KNATIVE_GATEWAY_NAMESPACES[self.ingress.value]


_ADDON_VERSION = re.compile(r"^v[0-9]+\.[0-9]+\.[0-9]+-eksbuild\.[0-9]+$")


class ClusterConfig(StrictModel):
    """The EKS cluster."""

    name: ClusterName | None = None
    """EKS cluster name. Default: ``<name>`` of the config."""
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    """Kubernetes minor version. Default ``1.36``."""
    endpoint_access: EndpointAccess = EndpointAccess.PRIVATE
    """Default ``private``: the API server is reachable only from the VPC."""
    public_access_cidrs: tuple[Cidr, ...] = ()
    """CIDRs allowed to reach a public endpoint. Default none. Required with a public endpoint (rule EKS-ENDPOINT)."""
    admin_principal_arns: tuple[PrincipalArn, ...] = ()
    """IAM roles/users granted cluster admin through access entries. Default none."""
    control_plane_logs: tuple[ControlPlaneLog, ...] = ALL_CONTROL_PLANE_LOGS
    """Control-plane log types sent to CloudWatch Logs. Default all five (rule EKS-LOGS)."""
    addon_versions: dict[str, str] = Field(default_factory=dict)
    """Pins for the core EKS add-ons (``vpc-cni``, ``coredns``, ``kube-proxy``, ``eks-pod-identity-agent``).
    Default: the version EKS selects for the Kubernetes version."""
    system_nodes: SystemNodeGroupConfig = SystemNodeGroupConfig()
    """The CPU system node group."""
    existing_namespaces: tuple[KubernetesName, ...] = ()
    """Namespaces that already exist on the cluster (created by someone else). inferstack applies no Namespace
    object to them (their labels, e.g. Pod Security, stay as their owner set them) and judges their pods at the
    ``privileged`` level (their owner's labels are not known at synth). ``default``, ``kube-system``,
    ``kube-public`` and ``kube-node-lease`` always count as existing. Default none: every other workload
    namespace is created by inferstack with Pod Security ``enforce: baseline``."""

    aibrix: AibrixPlatformConfig | None = None
    """The AIBrix control plane as you installed it (inferstack does not: no published chart). Required by
    workloads with ``aibrix``. Default: none."""
    knative_serving: KnativeServingConfig | None = None
    """Knative Serving the cluster already runs (installed by you), for ``kind: kserve`` workloads in ``Knative``
    mode (scale to zero). Default: none — inferstack installs Knative Serving itself when such a workload exists
    (``observability.install_knative_serving``)."""

    @property
    def preexisting_namespaces(self) -> frozenset[str]:
        """Namespaces inferstack never creates (built-in ones and ``existing_namespaces``)."""
        return BUILT_IN_NAMESPACES | frozenset(self.existing_namespaces)

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _known_version(cls, value: object) -> str:
        if isinstance(value, float):
            # YAML reads an unquoted 1.30 as the number 1.3: say so, rather than "1.3 is not supported".
            raise PydanticCustomError(
                "k8s_version_number",
                "a number, not a version (YAML reads an unquoted 1.30 as 1.3) — quote it, e.g. kubernetes_version: "
                '"1.36"; supported: {valid}',
                {"valid": ", ".join(KUBERNETES_RELEASES)},
            )
        text = str(value)
        if text not in KUBERNETES_RELEASES:
            raise PydanticCustomError(
                "k8s_version",
                "unsupported Kubernetes version — supported: {valid}",
                {"valid": ", ".join(KUBERNETES_RELEASES)},
            )
        return text

    @field_validator("addon_versions")
    @classmethod
    def _known_addons(cls, pins: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(pins) - set(CORE_ADDONS))
        if unknown:
            raise PydanticCustomError(
                "addon",
                "unknown add-on {unknown} — pinnable add-ons: {valid}",
                {"unknown": ", ".join(unknown), "valid": ", ".join(CORE_ADDONS)},
            )
        for name, version in pins.items():
            # EKS add-on versions: v<major>.<minor>.<patch>-eksbuild.<n> (aws eks describe-addon-versions)
            if not _ADDON_VERSION.match(version):
                raise PydanticCustomError(
                    "addon_version",
                    "{version} is not an EKS add-on version — v<major>.<minor>.<patch>-eksbuild.<n>, e.g. "
                    "v1.19.2-eksbuild.1 (aws eks describe-addon-versions --addon-name {name})",
                    {"version": repr(version[:80]), "name": name, "field": name},
                )
        return pins

    @field_validator("admin_principal_arns")
    @classmethod
    def _distinct_admins(cls, arns: tuple[str, ...]) -> tuple[str, ...]:
        # One access entry per principal: a repeated ARN would be a second entry for it (CloudFormation refuses).
        repeated = sorted({a for a in arns if arns.count(a) > 1})
        if repeated:
            raise PydanticCustomError(
                "duplicate_admin", "{arns} listed twice — each principal once", {"arns": ", ".join(repeated)}
            )
        return arns

    @field_validator("control_plane_logs")
    @classmethod
    def _distinct_logs(cls, logs: tuple[ControlPlaneLog, ...]) -> tuple[ControlPlaneLog, ...]:
        if len(set(logs)) != len(logs):
            raise PydanticCustomError("duplicate_log", "each log type may appear only once")
        return logs

    @model_validator(mode="after")
    def _buildable_endpoint(self) -> ClusterConfig:
        # aws_eks_v2 refuses to restrict a public-only endpoint (CannotRestricPublicAccessEndpoint: "Use
        # PUBLIC_AND_PRIVATE.onlyFrom() instead"), so this config could pass check and then fail synth.
        if self.endpoint_access is EndpointAccess.PUBLIC and self.public_access_cidrs:
            raise PydanticCustomError(
                "public_only_cidrs",
                "an allow-list needs private access too (aws_eks_v2 cannot restrict a public-only endpoint) — use "
                "endpoint_access: public_and_private with these CIDRs",
                {"field": "endpoint_access"},
            )
        return self


class ObservabilityConfig(StrictModel):
    """Operators installed when workloads need their CRDs. Turn one off only if the cluster already runs it."""

    install_prometheus_stack: bool = True
    """kube-prometheus-stack (PodMonitor CRD, Prometheus) when a workload has ``monitoring`` on. Default on."""
    install_keda: bool = True
    """KEDA (ScaledObject CRD) when a workload autoscales with KEDA. Default on."""
    install_lws: bool = True
    """The LeaderWorkerSet controller (LeaderWorkerSet CRD) when a ``vllm_multinode`` workload exists. Default on."""
    install_kuberay: bool = True
    """The KubeRay operator (RayService CRD) when a ``ray_serve`` workload exists. Default on."""
    install_nim_operator: bool = True
    """The NIM operator (NIMCache, NIMService CRDs) and the ``inferstack-model-cache`` StorageClass when a ``nim``
    workload exists. Default on."""
    install_kserve: bool = True
    """KServe v0.20.0 (CRDs, controller, the Hugging Face runtime) when a ``kserve`` workload exists. Default on."""
    install_cert_manager: bool = True
    """cert-manager (the EKS add-on), which KServe's webhook certificates need, when KServe is installed. Turn off
    when the cluster runs cert-manager already. Default on."""
    install_inference_pool_crd: bool = True
    """The InferencePool CRD (``inference.networking.k8s.io``, the Gateway API inference extension's) when a
    workload has a router (``routing``); applied, and kept when no router needs it. Turn off when the cluster has it
    (a Gateway or inference-extension install manages it). Default on."""
    install_metrics_server: bool = True
    """metrics-server (the EKS add-on) when a workload scales on CPU (a gateway's HPA). Turn off when the cluster
    runs one. Default on."""
    install_dynamo_operator: bool = True
    """The Dynamo platform's operator (DynamoGraphDeployment CRD, applied by the operator) when a ``dynamo``
    workload exists. Default on."""
    install_knative_serving: bool = True
    """Knative Serving 1.21 with Kourier (the Knative Operator chart 1.21.1 and a ``KnativeServing`` resource, the
    pod-spec node selector and tolerations features on, Kourier's gateway cluster-internal), before KServe, when a
    ``kserve`` workload runs in Knative mode and ``cluster.knative_serving`` does not say the cluster runs it
    already. Default on."""
    prometheus_retention_days: int = Field(default=15, ge=1, le=365)
    """How long Prometheus keeps samples, days. Default 15."""
    prometheus_storage_gib: int = Field(default=50, ge=5, le=16384)
    """Prometheus' persistent volume, GiB: samples survive restarts; Prometheus keeps at most 85 % of it
    (``retentionSize``), so a full disk never stops it. Read when the volume is first created: a later change
    resizes nothing (expand the PVC by hand; the StorageClass allows expansion). Default 50."""
    prometheus_storage_class: KubernetesName | None = None
    """StorageClass of Prometheus' volume. Default: ``inferstack-gp3`` (EBS gp3, encrypted, retained), created by
    inferstack; name an existing class to use it instead (nothing is created)."""
    install_ebs_csi_driver: bool = True
    """The EBS CSI driver add-on (with its Pod Identity role) for the default StorageClass. Turn off when the
    cluster already has the add-on (creating it twice fails). Default on."""
    grafana: bool = True
    """Grafana (kube-prometheus-stack's) with inferstack's dashboards — vLLM, Ray Serve LLM, NIM and the GPUs, one
    row per workload — when Prometheus is installed. Its admin password is generated by the chart (Secret
    ``kube-prometheus-stack-grafana``, key ``admin-password``). Default on."""
    alerts: AlertTargets = AlertTargets()
    """Targets of every workload's alerts (a workload's own ``alerts`` overrides them). Default: seed 001's."""
    log_shipping: bool = True
    """Fluent Bit on every node ships every container's log to the CloudWatch Logs group
    ``/aws/eks/<cluster>/containers-<stack id>`` (KMS-encrypted, retained when the stack goes). Only on the cluster
    inferstack creates. Default on."""
    log_pod_exclusion: bool = False
    """Let a pod keep its logs out of that group with the annotation ``fluentbit.io/exclude: "true"``. Default off:
    every container's log is shipped, so no tenant can hide what its pods do."""
    log_retention_days: int = 30
    """How long that group keeps events, days: one of CloudWatch Logs' values (1, 3, 5, 7, 14, 30, 60, 90, 120, 150,
    180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653). Default 30."""
    custom_metrics_adapter: bool = False
    """The cluster runs a custom-metrics adapter (e.g. prometheus-adapter) that serves the pods metrics
    ``vllm_num_requests_waiting``, ``sglang_num_queue_reqs`` and ``tgi_queue_size`` to the HPA — its rules rename
    the colon names (``vllm:num_requests_waiting`` → ``vllm_num_requests_waiting``) and, for SGLang, keep the
    ``priority=""``, ``pp_rank="0"`` series. inferstack does not install one; ``autoscaling.kind: hpa`` needs this
    set (rule AUTOSCALING-HPA-ADAPTER). Default off."""

    @field_validator("log_retention_days")
    @classmethod
    def _retention(cls, days: int) -> int:
        return check_log_retention(days)

    @model_validator(mode="after")
    def _switched_off(self) -> ObservabilityConfig:
        """Settings of what inferstack installs, set while it installs none of it."""
        if not self.install_prometheus_stack:
            refuse_unread(
                self,
                ("grafana", "prometheus_retention_days", "prometheus_storage_gib", "prometheus_storage_class"),
                "with install_prometheus_stack: true (they configure the kube-prometheus-stack inferstack installs), "
                "and install_prometheus_stack is false",
                "set install_prometheus_stack: true",
            )
        if not self.log_shipping:
            refuse_unread(
                self,
                ("log_retention_days", "log_pod_exclusion"),
                "with log_shipping: true (they configure Fluent Bit and its CloudWatch Logs group), and log_shipping "
                "is false",
                "set log_shipping: true",
            )
        return self


class RuleAcknowledgement(StrictModel):
    """Accept one rule's finding on purpose, with the reason on record (like a cdk-nag acknowledgement)."""

    rule: str
    """The rule id, e.g. ``EKS-LOGS``."""
    reason: str = Field(min_length=10)
    """Why this finding is acceptable here (at least 10 characters besides white space)."""

    @field_validator("reason")
    @classmethod
    def _reason(cls, value: str) -> str:
        if len(value.strip()) < 10:
            raise PydanticCustomError(
                "acknowledgement_reason", "a reason is required — at least 10 characters besides white space"
            )
        return value


class InferstackConfig(StrictModel):
    """One inferstack platform: network, cluster and (in later layers) compute, storage and workloads."""

    schema_: str | None = Field(default=None, alias="$schema")
    """Optional path of the JSON Schema, for editors. Ignored."""
    name: StackPrefix = "inferstack"
    """Prefix of every stack name and the default cluster name. Default ``inferstack``."""
    env: EnvironmentConfig = EnvironmentConfig()
    """Target account/region. Default: environment-agnostic."""
    tags: dict[str, str] = Field(default_factory=dict, max_length=40)
    """Tags applied to every taggable AWS resource, Karpenter's instances and volumes included (their EC2NodeClasses'
    ``spec.tags``: changing a tag there drifts every node of the pool, which Karpenter replaces within its disruption
    budgets). At most 40: EC2 allows 50 per resource, and Karpenter and inferstack add theirs. Default none
    (``inferstack:platform`` is always added)."""
    network: NetworkConfig = NetworkConfig()
    """The VPC."""
    cluster: ClusterConfig = ClusterConfig()
    """The EKS cluster and its system nodes."""
    compute: ComputeConfig = ComputeConfig()
    """Accelerated node groups, Karpenter pools and the operators they need. Default none."""
    storage: StorageConfig = StorageConfig()
    """Model bucket (always), FSx for Lustre (optional)."""
    workloads: tuple[workload_union(), ...] = ()  # type: ignore[valid-type]
    """Models served on the platform, each of a ``kind`` (default ``vllm``). Default none."""
    observability: ObservabilityConfig = ObservabilityConfig()
    """Operators whose custom resources workloads emit."""
    network_policies: NetworkPolicyConfig = NetworkPolicyConfig()
    """Default-deny NetworkPolicies in the workload namespaces inferstack owns, with the app's paths allowed."""
    kubernetes_delivery: KubernetesDelivery = KubernetesDelivery.CDK
    """How the workloads' Kubernetes side reaches the cluster. ``cdk``: the workloads stacks apply it at
    ``cdk deploy``. ``gitops``: the workloads stacks deploy only their AWS resources (the workloads' IAM roles, Pod
    Identity associations, EKS add-ons) and ``inferstack export CONFIG DIR`` writes the Kubernetes side for Argo CD,
    in sync waves that keep the CDK order. The cluster's own add-ons (Karpenter, the GPU operator, Prometheus'
    stack…) stay in the CDK stacks either way. Default ``cdk``."""
    acknowledge: tuple[RuleAcknowledgement, ...] = ()
    """Findings of inferstack rules accepted on purpose. Default none."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        populate_by_name=True,
        validate_default=True,
        use_attribute_docstrings=FIELD_DESCRIPTIONS,
        allow_inf_nan=False,
    )

    @property
    def cluster_name(self) -> str:
        return self.cluster.name or self.name

    @field_validator("tags")
    @classmethod
    def _tags(cls, tags: dict[str, str]) -> dict[str, str]:
        # AWS tag rules (Tagging AWS resources): key 1-128, value ≤ 256 characters of letters, digits, spaces and
        # _ . : / = + - @; keys may not start with "aws:". CloudFormation refuses others only at deploy time.
        for key, value in tags.items():
            owner = next((o for prefix, o in OWNED_TAG_PREFIXES.items() if key.lower().startswith(prefix)), None)
            if owner is not None:
                raise PydanticCustomError(
                    "tag_key",
                    "{key} is a tag key {owner} owns — inferstack's tags reach the system nodes and every Karpenter "
                    "node, where such a key makes the owner claim (or clean up) them; use a key of your own, e.g. "
                    "'team' or 'example.com/owner'",
                    {"key": repr(key)[:60], "owner": owner, "field": key[:80]},
                )
            if not _TAG_TEXT.match(key) or not 1 <= len(key) <= 128 or key.lower().startswith("aws:"):
                raise PydanticCustomError(
                    "tag_key",
                    "{key} is not an AWS tag key — 1-128 letters, digits, spaces and _ . : / = + - @, not starting "
                    "with 'aws:'",
                    {"key": repr(key)[:60], "field": key[:80]},
                )
            if not _TAG_TEXT.match(value) or len(value) > 256:
                raise PydanticCustomError(
                    "tag_value",
                    "not an AWS tag value — at most 256 letters, digits, spaces and _ . : / = + - @",
                    {"field": key[:80]},
                )
        return tags

    @model_validator(mode="after")
    def _efa_registry_in_region(self) -> InferstackConfig:
        """The EFA device plugin's image comes from Amazon EKS's registry of the region: a pinned region without a
        known one would stop the synth (stacks/operators.py ``eks_registry``)."""
        region = self.env.region
        if region and region not in EKS_REGISTRY_ACCOUNTS and any(p.efa for p in self.compute.pools):
            raise PydanticCustomError(
                "efa_registry_region",
                "{region} has no Amazon EKS image registry inferstack knows (the EFA device plugin's image) — "
                "valid regions: {valid}",
                {"region": region, "valid": ", ".join(sorted(EKS_REGISTRY_ACCOUNTS)), "field": "env.region"},
            )
        return self

    @model_validator(mode="after")
    def _zones_match_env(self) -> InferstackConfig:
        zones = self.network.availability_zones
        region = self.env.region
        if zones and region and any(not z.startswith(region) for z in zones):
            raise PydanticCustomError(
                "az_region",
                "zones are not in env.region {region} — use zones named {region}a, {region}b, …",
                {"region": region, "field": "network.availability_zones"},
            )
        agnostic = not (self.env.account and region)
        if agnostic and not zones and self.network.max_azs > AGNOSTIC_AZS:
            raise PydanticCustomError(
                "agnostic_azs",
                "{n} zones, but an environment-agnostic stack gets {agnostic} from aws-cdk-lib — pin "
                "network.availability_zones (e.g. [us-west-2a, us-west-2b, us-west-2c]) or set env.account and "
                "env.region",
                {"n": self.network.max_azs, "agnostic": AGNOSTIC_AZS, "field": "network.max_azs"},
            )
        for path, pool in self._zoned_pools():
            self._check_zone(path, pool.availability_zone)
        if self.storage.fsx is not None:
            self._check_zone("storage.fsx", self.storage.fsx.availability_zone)
        self._check_workloads()
        if self.env.account and region and not zones:
            raise PydanticCustomError(
                "az_required",
                "required when env.account and env.region are set — otherwise synth "
                "looks the zones up in the account and needs AWS credentials; e.g. [{region}a, {region}b]",
                {"region": region, "field": "network.availability_zones"},
            )
        return self

    def _zoned_pools(self) -> list[tuple[str, Any]]:
        pools: list[tuple[str, Any]] = [
            (f"compute.node_groups[{i}]", g) for i, g in enumerate(self.compute.node_groups)
        ]
        pools += [(f"compute.karpenter_pools[{i}]", p) for i, p in enumerate(self.compute.karpenter_pools)]
        return [(path, pool) for path, pool in pools if pool.availability_zone is not None]

    def _check_zone(self, path: str, zone: str | int) -> None:
        zones = self.network.availability_zones
        if isinstance(zone, int):
            if not 0 <= zone < self.network.az_count:
                raise PydanticCustomError(
                    "zone_index",
                    "zone index {zone} is outside the VPC's {n} zones — use 0 to {last}",
                    {
                        "zone": zone,
                        "n": self.network.az_count,
                        "last": self.network.az_count - 1,
                        "field": f"{path}.availability_zone",
                    },
                )
        elif not zones or zone not in zones:
            valid = (
                f"one of {', '.join(zones)}" if zones else "a zone index (0, 1, …) or pin network.availability_zones"
            )
            raise PydanticCustomError(
                "zone_name",
                "{zone} is not one of the VPC's zones — use {valid}",
                {"zone": zone, "valid": valid, "field": f"{path}.availability_zone"},
            )

    def zone_index(self, zone: str | int) -> int:
        """Index into the VPC's zones of a pool's ``availability_zone``."""
        if isinstance(zone, int):
            return zone
        return list(self.network.availability_zones or ()).index(zone)

    def _check_workloads(self) -> None:
        pools = {p.name for p in self.compute.pools}
        names: set[tuple[str, str]] = set()
        joins: dict[str, str] = {}
        accounts: dict[tuple[str, str], str] = {}
        # <x>-bench named both by a workload and by x's benchmark: bench_name_taken (below) names that clash
        # likewise <x>-router: router_name_taken
        bench_named = {
            (w.namespace, f"{w.name}-{suffix}")
            for w in self.workloads
            for suffix, on in (("bench", w.bench), ("router", w.routing))
            if on
        } & {(w.namespace, w.name) for w in self.workloads}
        for index, workload in enumerate(self.workloads):
            if workload.pool not in pools:
                valid = ", ".join(sorted(pools)) or "none configured — add compute.karpenter_pools or node_groups"
                raise PydanticCustomError(
                    "pool",
                    "'{pool}' is not a node group or Karpenter pool — valid: {valid}{near}",
                    {
                        "pool": workload.pool,
                        "valid": valid,
                        "near": did_you_mean(workload.pool, sorted(pools)),
                        "field": f"workloads[{index}].pool",
                    },
                )
            routing_pool = workload.routing.pool if workload.routing is not None else None
            if routing_pool is not None and routing_pool not in pools:
                raise PydanticCustomError(
                    "routing_pool",
                    "'{pool}' is not a node group or Karpenter pool — valid: {valid}{near}",
                    {
                        "pool": routing_pool,
                        "valid": ", ".join(sorted(pools)),
                        "near": did_you_mean(routing_pool, sorted(pools)),
                        "field": f"workloads[{index}].routing.pool",
                    },
                )
            workload.check_in(index, self.pool(workload.pool).accelerator)
            if workload.namespace in SYSTEM_NAMESPACES:
                raise PydanticCustomError(
                    "system_namespace",
                    "'{ns}' is the cluster's own — inferstack would label it Pod Security baseline, which blocks "
                    "aws-node, kube-proxy and the other system pods; use a namespace of your own (e.g. inference)",
                    {"ns": workload.namespace, "field": f"workloads[{index}].namespace"},
                )
            owner = PLATFORM_NAMESPACES.get(workload.namespace)
            if owner is not None:
                raise PydanticCustomError(
                    "operator_namespace",
                    "'{ns}' belongs to {owner}: a workload there would relabel it for Pod Security and put "
                    "default-deny NetworkPolicies over its pods — use a namespace of your own (e.g. inference)",
                    {"ns": workload.namespace, "owner": owner, "field": f"workloads[{index}].namespace"},
                )
            key = (workload.namespace, workload.name)
            if key in names:
                raise PydanticCustomError(
                    "duplicate_workload",
                    "{ns}/{name} appears twice — workload names are unique per namespace",
                    {"ns": key[0], "name": key[1], "field": f"workloads[{index}].name"},
                )
            names.add(key)
            joined = f"{workload.namespace}-{workload.name}"
            if joined in joins:
                raise PydanticCustomError(
                    "joined_names",
                    "{ns}/{name} and {other} both give '{joined}' to the objects named after namespace and workload "
                    "(e.g. the cluster-wide model PersistentVolume '{joined}-model-s3-…') — rename one",
                    {
                        "ns": key[0],
                        "name": key[1],
                        "other": joins[joined],
                        "joined": joined,
                        "field": f"workloads[{index}].name",
                    },
                )
            joins[joined] = f"{key[0]}/{key[1]}"
            own = workload.serving_account
            if own == "default":
                raise PydanticCustomError(
                    "default_service_account",
                    "a workload named 'default' runs as the namespace's default account (its service account is "
                    "its name), which every pod that names none uses: its role would go to all of them — rename "
                    "it or set service_account",
                    {"field": f"workloads[{index}].name"},
                )
            derived = [
                f"{workload.name}-model-sync",
                *([f"{workload.name}-bench"] if workload.bench else []),
                *([f"{workload.name}-router"] if workload.routing else []),
            ]
            for account in (own, *derived):
                owner = accounts.get((workload.namespace, account))
                if (workload.namespace, account) in bench_named:
                    continue
                if owner is not None:
                    explicit = account == own and workload.service_account is not None
                    raise PydanticCustomError(
                        "shared_service_account",
                        "service account {ns}/{account} is also {owner}'s — each account is bound to a role for "
                        "its own workload and model prefix (a workload's, its model sync's, its benchmark's); "
                        + ("set service_account to one of its own" if explicit else "rename one of the workloads"),
                        {
                            "ns": workload.namespace,
                            "account": account,
                            "owner": owner,
                            "field": f"workloads[{index}].{'service_account' if explicit else 'name'}",
                        },
                    )
                role = "" if account == own else f" ({account.removeprefix(workload.name + '-')})"
                accounts[(workload.namespace, account)] = f"{workload.name}{role}"
        for index, workload in enumerate(self.workloads):
            router = f"{workload.name}-router"
            if workload.routing is not None and len(router) > DNS_LABEL_MAX:
                raise PydanticCustomError(
                    "router_name_long",
                    "{name} has {length} characters: its router's objects are named {name}-router, which a DNS "
                    "label (a Service name) keeps to {limit} — use a name of at most {most}",
                    {
                        "name": workload.name,
                        "length": len(workload.name),
                        "limit": DNS_LABEL_MAX,
                        "most": DNS_LABEL_MAX - len("-router"),
                        "field": f"workloads[{index}].name",
                    },
                )
            if workload.routing is not None and (workload.namespace, router) in names:
                raise PydanticCustomError(
                    "router_name_taken",
                    "{ns}/{name}'s router is named {router} (its Deployment, Service, ServiceAccount, ConfigMaps, "
                    "InferencePool and NetworkPolicy), and {ns}/{router} is a workload — rename that workload or "
                    "{name}, or remove {name}'s routing",
                    {
                        "ns": workload.namespace,
                        "name": workload.name,
                        "router": router,
                        "field": f"workloads[{index}].routing",
                    },
                )
            bench = f"{workload.name}-bench"
            if workload.bench is not None and (workload.namespace, bench) in names:
                raise PydanticCustomError(
                    "bench_name_taken",
                    "{ns}/{name}'s benchmark is named {bench} (its CronJob, ServiceAccount and NetworkPolicy), and "
                    "{ns}/{bench} is a workload — rename that workload or {name}, or remove {name}'s bench",
                    {
                        "ns": workload.namespace,
                        "name": workload.name,
                        "bench": bench,
                        "field": f"workloads[{index}].bench",
                    },
                )

    def pool(self, name: str) -> Any:
        """The node group or Karpenter pool called ``name``."""
        return next(p for p in self.compute.pools if p.name == name)


def _rebuild_workloads() -> None:
    """The ``workloads`` union again, with the kinds registered now."""
    InferstackConfig.model_fields["workloads"].annotation = tuple[workload_union(), ...]
    InferstackConfig.model_rebuild(force=True)


on_kinds_changed(_rebuild_workloads)
