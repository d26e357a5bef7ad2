"""The operators workloads' custom resources need, by the name the plan uses (``ResolvedWorkload.operators``):
``prometheus`` (PodMonitor), ``keda`` (ScaledObject), ``lws`` (LeaderWorkerSet), ``kuberay`` (RayService), ``nim``
(NIMCache, NIMService), ``dynamo`` (DynamoGraphDeployment). Each installs with Helm at the
catalog version on the system nodes, unless the config says the cluster already runs it (then ``None``: the
workloads' objects are applied without waiting for an inferstack release)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cdk8s
from aws_cdk import Duration
from aws_cdk import aws_eks_v2 as eks
from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.kubernetes import (
    DYNAMO_NAMESPACE,
    EFS_STORAGE_CLASS,
    KNATIVE_NAMESPACE,
    KNATIVE_OPERATOR_NAMESPACE,
    KNATIVE_SERVING_NAME,
    KSERVE_NAMESPACE,
    KUBERAY_NAMESPACE,
    LWS_NAMESPACE,
    MODEL_CACHE_STORAGE_CLASS,
    NIM_NAMESPACE,
    POOL_LABEL,
    SYSTEM_POOL,
)
from inferstack.catalog.routing import APPLIED_BY, APPLIED_BY_LABEL, inference_pool_crd
from inferstack.catalog.versions import IMAGES, STORAGE_ADDONS
from inferstack.charts.knative import KnativeServingChart
from inferstack.charts.workload import StorageRefs
from inferstack.config.model import KnativeServingConfig
from inferstack.constructs.pod import SERVING_UID
from inferstack.plan.workloads import WorkloadsPlan
from inferstack.stacks.compute import add_chart_manifest
from inferstack.stacks.delivery import HandedToGitOps, handed_to_gitops
from inferstack.stacks.helm import helm_chart
from inferstack.stacks.observability import (
    add_ebs_csi_addon,
    add_keda,
    add_prometheus_stack,
    gp3_storage_class,
    observed_namespaces,
)


def webhook_ready(
    scope: Construct, construct_id: str, cluster: eks.ICluster, object_type: str, name: str, *, after: Construct
) -> Construct:
    """Complete once the webhook configuration ``name`` (installed by ``after``) carries a CA bundle: an operator's
    fail-closed webhook refuses every object until then, and the aws-eks-v2 apply handler does not retry a refused
    call. Polls ``.webhooks[0].clientConfig.caBundle`` for up to 10 minutes. Handed to GitOps: nothing (its
    sync waves order the objects; :mod:`inferstack.stacks.delivery`)."""
    return wait_for_object(
        scope, construct_id, cluster, object_type, name, ".webhooks[0].clientConfig.caBundle", after=after
    )


def wait_for_object(
    scope: Construct,
    construct_id: str,
    cluster: eks.ICluster,
    object_type: str,
    name: str,
    json_path: str,
    *,
    after: Construct,
    namespace: str | None = None,
    minutes: int = 10,
) -> Construct:
    """Complete once ``json_path`` of object ``object_type/name`` (applied by ``after``) has a value, polling for
    up to ``minutes`` (default 10). Handed to GitOps: nothing (its sync waves order the objects;
    :mod:`inferstack.stacks.delivery`)."""
    if handed_to_gitops(scope):
        return HandedToGitOps(scope, construct_id)
    ready = eks.KubernetesObjectValue(
        scope,
        construct_id,
        cluster=cluster,
        object_type=object_type,
        object_name=name,
        object_namespace=namespace,
        json_path=json_path,
        timeout=Duration.minutes(minutes),
    )
    ready.node.add_dependency(after)
    return ready


OperatorInstaller = Callable[[Construct, eks.ICluster, WorkloadsPlan, StorageRefs], Construct | None]
"""Installs an operator; returns what the workloads' objects depend on (the release, or a readiness gate after it)."""


#: The LWS chart's mutating webhook configuration (charts/lws/templates/webhook/webhook.yaml at v0.10.0, release
#: name ``lws``): ``failurePolicy: Fail`` on every LeaderWorkerSet and pod of one, so nothing may be applied before
#: the webhook serves. LWS's internal cert controller fills ``caBundle`` once it has generated the certificates.
LWS_MUTATING_WEBHOOK = "lws-mutating-webhook-configuration"
#: Controller replicas: its webhooks fail closed, so one replica drained off a system node would block every group
#: (re)creation until it is back; the chart's manager runs with leader election.
LWS_REPLICAS = 2


def lws_values() -> dict[str, Any]:
    """LWS chart values (v0.10.0 values.yaml): two controller replicas on the system nodes, the image pinned to the
    release (git's values say ``main`` / ``Always``), webhook certificates from LWS's built-in cert controller (the
    chart's default ``enableCertManager: false`` — no cert-manager needed)."""
    repository, tag = IMAGES["lws-controller"].rsplit(":", 1)
    return {
        "replicaCount": LWS_REPLICAS,
        "image": {"manager": {"repository": repository, "tag": tag, "pullPolicy": "IfNotPresent"}},
        "nodeSelector": {POOL_LABEL: SYSTEM_POOL},
        "enableCertManager": False,
    }


def add_lws(scope: Construct, cluster: eks.ICluster) -> Construct:
    """The LeaderWorkerSet controller and CRD (the chart's ``crds/``) in ``lws-system``, installed with ``--wait``
    (its Deployment ready), and complete only once its webhook has a CA bundle (a ``KubernetesObjectValue`` polls
    the webhook configuration): the aws-eks-v2 apply handler does not retry a refused webhook call, so a
    LeaderWorkerSet applied earlier would fail the deploy. What depends on the returned construct waits for both.

    Caveat: the controller starts serving once the certificates it wrote are mounted into its pod, which can trail
    the CA bundle by the kubelet's secret sync (seconds, at most about a minute)."""
    chart = helm_chart(scope, "Lws", cluster, "lws", LWS_NAMESPACE, lws_values(), create_namespace=True, wait=True)
    ready = webhook_ready(
        scope, "LwsWebhookReady", cluster, "mutatingwebhookconfiguration", LWS_MUTATING_WEBHOOK, after=chart
    )
    return ready


def kuberay_values() -> dict[str, Any]:
    """KubeRay operator values (chart 1.7.0 values.yaml): the operator on the system nodes, its image pinned to the
    chart's release. The chart has no admission webhooks, so RayServices need only the release (and its CRDs)."""
    repository, tag = IMAGES["kuberay-operator"].rsplit(":", 1)
    return {"image": {"repository": repository, "tag": tag}, "nodeSelector": {POOL_LABEL: SYSTEM_POOL}}


def add_kuberay(scope: Construct, cluster: eks.ICluster) -> Construct:
    """The KubeRay operator and its CRDs (the chart's ``crds/``) in ``kuberay-system``, installed with ``--wait``:
    a RayService applied before the operator runs would wait unreconciled, and its CRD must exist."""
    return helm_chart(
        scope,
        "KubeRay",
        cluster,
        "kuberay-operator",
        KUBERAY_NAMESPACE,
        kuberay_values(),
        create_namespace=True,
        wait=True,
    )


class ModelCacheStorageClassChart(cdk8s.Chart):
    """The ``inferstack-model-cache`` StorageClass: EBS gp3 provisioned for the read at model load (16,000 IOPS,
    1,000 MiB/s — gp3's maxima below 4 TiB; the default 3,000 / 125 MiB/s would take ~18 minutes to read 140 GB),
    encrypted, ``Retain`` (a deleted cache's volume stays: nothing downloaded is lost by an update),
    ``WaitForFirstConsumer`` (created in the zone of the caching Job's node), expandable. EBS allows at most 500 IOPS
    per GiB, so volumes are ≥ 32 GiB. Applied with ``overwrite`` (it is durable: a config that needs it again finds
    it on the cluster)."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id, disable_resource_name_hashes=True)
        k8s.KubeStorageClass(
            self,
            "model-cache",
            metadata=k8s.ObjectMeta(name=MODEL_CACHE_STORAGE_CLASS),
            provisioner="ebs.csi.aws.com",
            parameters={"type": "gp3", "encrypted": "true", "iops": "16000", "throughput": "1000"},
            reclaim_policy="Retain",
            volume_binding_mode="WaitForFirstConsumer",
            allow_volume_expansion=True,
        )


class EfsStorageClassChart(cdk8s.Chart):
    """The ``inferstack-efs`` StorageClass: an EFS access point per claim in ``file_system_id`` (``provisioningMode:
    efs-ap``), its directory created ``700`` and owned by the serving uid/gid 1000 — the access point makes every
    operation through it that user, whatever the pod runs as, so non-root engines (and TGI as root) write it; the
    driver supports no ``fsGroup`` (no VOLUME_MOUNT_GROUP, CSIDriver without ``fsGroupPolicy``). ``Retain``: a
    deleted claim leaves its access point and files. The size a claim asks for is not enforced by EFS. Parameters
    read at kubernetes-sigs/aws-efs-csi-driver v3.4.1 (docs/parameters.md, pkg/driver/controller.go)."""

    def __init__(self, scope: Construct, construct_id: str, file_system_id: str) -> None:
        super().__init__(scope, construct_id, disable_resource_name_hashes=True)
        k8s.KubeStorageClass(
            self,
            "efs",
            metadata=k8s.ObjectMeta(name=EFS_STORAGE_CLASS),
            provisioner="efs.csi.aws.com",
            parameters={
                "provisioningMode": "efs-ap",
                "fileSystemId": file_system_id,
                "directoryPerms": "700",
                "uid": str(SERVING_UID),
                "gid": str(SERVING_UID),
                # one directory per claim, found again by a claim of the same name (a cache taken out of the
                # config and put back, a workload re-created): no UUID appended
                "subPathPattern": "${.PVC.namespace}/${.PVC.name}",
                "ensureUniqueDirectory": "false",
            },
            reclaim_policy="Retain",
            volume_binding_mode="Immediate",
            # EFS ignores the size a claim asks for; growing it must not be refused by the API server
            allow_volume_expansion=True,
        )


def add_efs_storage_class(scope: Construct, cluster: eks.ICluster, file_system_id: str) -> Construct:
    """The ``inferstack-efs`` StorageClass of ``file_system_id``, as long as ``storage.efs`` is set: applied (an
    existing one is updated, not refused) and deleted with the file system's removal from the config (a deleted
    StorageClass leaves its bound volumes alone; its parameters cannot change in place, so a new file system needs
    a new class)."""
    chart = EfsStorageClassChart(cdk8s.App(), "efs-storage", file_system_id)
    return add_chart_manifest(scope, "EfsStorageClass", cluster, chart, overwrite=True)


def nim_operator_values() -> dict[str, Any]:
    """NIM operator values (chart 3.0.0 values.yaml): the operator on the system nodes, its image pinned to the NGC
    release (the chart's ``release-3.0`` / ``Always`` follows a branch), and no NodeFeatureRule (``nfd.
    nodeFeatureRules.deviceID``: it needs NFD's CRD, and inferstack places NIM pods by its own node labels). The
    admission controller stays off (the chart's default; it would need cert-manager)."""
    repository, tag = IMAGES["nim-operator"].rsplit(":", 1)
    return {
        "operator": {
            "image": {"repository": repository, "tag": tag, "pullPolicy": "IfNotPresent"},
            "nodeSelector": {POOL_LABEL: SYSTEM_POOL},
        },
        "nfd": {"nodeFeatureRules": {"deviceID": False}},
    }


def add_model_cache_storage(scope: Construct, cluster: eks.ICluster, plan: WorkloadsPlan) -> Construct:
    """The ``inferstack-model-cache`` StorageClass (NIM caches, Ollama's models), after the EBS CSI add-on unless
    ``install_ebs_csi_driver`` is off (the add-on is created once per stack, shared with Prometheus' volume)."""
    # durable (kept when no workload needs it any more), so applied rather than created: a workload that needs it
    # again must find it there, not fail on "already exists"
    chart = ModelCacheStorageClassChart(cdk8s.App(), "model-cache")
    storage = add_chart_manifest(scope, "ModelCacheStorageClass", cluster, chart, durable=True, overwrite=True)
    if plan.observability.install_ebs_csi_driver:
        storage.node.add_dependency(add_ebs_csi_addon(scope, cluster))
    return storage


def add_nim_operator(scope: Construct, cluster: eks.ICluster) -> Construct:
    """The NIM operator and its CRDs (the chart's ``crds/``) in ``nim-operator``, with ``--wait``. The operator has
    no admission webhook by default, so NIMCache/NIMService need only the release and its CRDs (and the model-cache
    StorageClass for the cache's PVC: a separate operator entry)."""
    return helm_chart(
        scope,
        "NimOperator",
        cluster,
        "k8s-nim-operator",
        NIM_NAMESPACE,
        nim_operator_values(),
        create_namespace=True,
        wait=True,
    )


#: The Dynamo platform release name: the operator's objects are named ``<release>-dynamo-operator-…``.
DYNAMO_RELEASE = "dynamo-platform"
#: The operator's validating webhook configuration (components/operator/templates/webhook-configuration.yaml at
#: 1.4.0, ``failurePolicy: Fail``); the operator patches its CA bundle in at start (cmd/main.go, internal/cert).
DYNAMO_VALIDATING_WEBHOOK = f"{DYNAMO_RELEASE}-dynamo-operator-validating"


def dynamo_operator_values() -> dict[str, Any]:
    """Dynamo platform values (1.4.0 values.yaml and its dynamo-operator subchart): only the operator — NATS, etcd,
    Grove and KAI stay off (the chart's defaults; discovery is Kubernetes, the request plane TCP, the event plane
    ZMQ), the operator on the system nodes with its image pinned, and no chart PodMonitors (the workload charts
    render their own; the chart's auto-detection depends on install order)."""
    repository, tag = IMAGES["dynamo-operator"].rsplit(":", 1)
    system = {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": POOL_LABEL, "operator": "In", "values": [SYSTEM_POOL]}]}]
    }
    return {
        "dynamo-operator": {
            "controllerManager": {
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": system}},
                "manager": {"image": {"repository": repository, "tag": tag}},
            },
            "dynamo": {"metrics": {"podMonitors": {"enabled": False}}},
        },
    }


def add_dynamo_operator(scope: Construct, cluster: eks.ICluster) -> Construct:
    """The Dynamo operator in ``dynamo-system``, installed with ``--wait``: its ``crd-apply`` init container applies
    the CRDs (the 1.4 chart ships none) and its readiness check passes only once the webhook server serves
    (``webhook-server`` StartedChecker, cmd/main.go). Complete once the validating webhook has its CA bundle (a
    ``KubernetesObjectValue`` polls it): the webhooks fail closed, and the aws-eks-v2 apply handler does not retry
    a refused call."""
    chart = helm_chart(
        scope,
        "DynamoPlatform",
        cluster,
        "dynamo-platform",
        DYNAMO_NAMESPACE,
        dynamo_operator_values(),
        create_namespace=True,
        release=DYNAMO_RELEASE,
        wait=True,
    )
    ready = webhook_ready(
        scope, "DynamoWebhookReady", cluster, "validatingwebhookconfiguration", DYNAMO_VALIDATING_WEBHOOK, after=chart
    )
    return ready


#: KServe's fail-closed mutating webhook (charts/kserve-resources resources.yaml at v0.20.0): its CA bundle is
#: injected by cert-manager's cainjector (``cert-manager.io/inject-ca-from: kserve/serving-cert``).
KSERVE_MUTATING_WEBHOOK = "inferenceservice.serving.kserve.io"
#: The serving runtimes of kserve-runtime-configs v0.20.0 (values.yaml ``kserve.servingruntime.*``): only the
#: Hugging Face runtime is installed.
KSERVE_RUNTIMES = (
    "tensorflow",
    "mlserver",
    "sklearnserver",
    "xgbserver",
    "huggingfaceserver",
    "huggingfaceserver_multinode",
    "tritonserver",
    "pmmlserver",
    "predictiveserver",
    "paddleserver",
    "lgbserver",
    "autogluonserver",
    "torchserve",
    "vllmserver",
)
CERT_MANAGER_ADDON = "cert-manager"


def kserve_values(plan: WorkloadsPlan) -> dict[str, Any]:
    """kserve-resources v0.20.0 values: Standard as the default mode (an InferenceService asks for Knative with its
    annotation), no Ingress objects (the platform has no ingress controller; clients use ``<name>-predictor``), no
    Istio VirtualService unless Knative runs on Istio, the controller on the system nodes. Its webhook certificate
    comes from cert-manager (``serving-cert``; the chart has no other mode)."""
    knative = plan.knative
    istio = knative is not None and knative.ingress.value == "istio"
    return {
        "kserve": {
            "controller": {
                "deploymentMode": "Standard",
                "nodeSelector": {POOL_LABEL: SYSTEM_POOL},
                "gateway": {"disableIngressCreation": True, "disableIstioVirtualHost": not istio},
            }
        }
    }


def kserve_runtime_values() -> dict[str, Any]:
    """kserve-runtime-configs v0.20.0 values: the runtimes on (the chart installs none by default), every one but the
    Hugging Face server disabled."""
    runtimes: dict[str, Any] = {name: {"disabled": name != "huggingfaceserver"} for name in KSERVE_RUNTIMES}
    return {"kserve": {"servingruntime": {"enabled": True, **runtimes}}}


def knative_operator_values() -> dict[str, Any]:
    """knative-operator 1.21.1 values (config/charts/knative-operator/values.yaml at knative-v1.21.1): both images
    pinned to the catalog's, the operator and its webhook on the system nodes (the chart has ``affinity`` but no
    ``nodeSelector``; Helm merges this node affinity into the webhook's default pod anti-affinity), and a pod
    ``seccompProfile: RuntimeDefault`` — the chart's containers drop every capability and run non-root, but
    nothing sets a seccomp profile (templates/operator.yaml), which Pod Security ``restricted`` requires."""
    system = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": POOL_LABEL, "operator": "In", "values": [SYSTEM_POOL]}]}
                ]
            }
        }
    }
    seccomp = {"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}
    operator, operator_tag = IMAGES["knative-operator"].rsplit(":", 1)
    webhook, webhook_tag = IMAGES["knative-operator-webhook"].rsplit(":", 1)
    return {
        "knative_operator": {
            "knative_operator": {"image": operator, "tag": operator_tag, "affinity": system, **seccomp},
            "operator_webhook": {"image": webhook, "tag": webhook_tag, "affinity": system, **seccomp},
        }
    }


def add_knative_serving(scope: Construct, cluster: eks.ICluster, knative: KnativeServingConfig) -> Construct:
    """Knative Serving for KServe's Knative mode: the Knative Operator (chart 1.21.1 in ``knative-operator``, its
    CRDs in the chart's templates, ``--wait``), then the ``knative-serving`` namespace and ``KnativeServing``
    resource, then a gate until the operator reports the install done: it sets ``status.version`` only in its last
    stage, after Serving's Deployments are ready (knative/operator knative-v1.21.1
    pkg/reconciler/knativeserving/knativeserving.go: CheckDeployments, then MarkStatusSuccess). KServe's controller
    comes after the gate: it decides at start whether Knative Services exist."""
    operator = helm_chart(
        scope,
        "KnativeOperator",
        cluster,
        "knative-operator",
        KNATIVE_OPERATOR_NAMESPACE,
        knative_operator_values(),
        create_namespace=True,
        wait=True,
    )
    serving = add_chart_manifest(
        scope,
        "KnativeServing",
        cluster,
        KnativeServingChart(cdk8s.App(), "knative-serving", knative, {POOL_LABEL: SYSTEM_POOL}),
    )
    serving.node.add_dependency(operator)
    return wait_for_object(
        scope,
        "KnativeServingReady",
        cluster,
        "knativeserving",
        KNATIVE_SERVING_NAME,
        ".status.version",
        after=serving,
        namespace=KNATIVE_NAMESPACE,
        minutes=15,
    )


def add_kserve(scope: Construct, cluster: eks.ICluster, plan: WorkloadsPlan) -> Construct:
    """KServe v0.20.0 in ``kserve``: Knative Serving first when inferstack installs it (:func:`add_knative_serving`),
    cert-manager (the EKS community add-on, unless ``install_cert_manager`` is off), the CRDs (kserve-crd), the
    controller (kserve-resources, ``--wait``; its readiness is its webhook server started), a gate until
    cert-manager injected the mutating webhook's CA bundle (its webhooks fail closed), then the Hugging Face
    ClusterServingRuntime (kserve-runtime-configs: its validating webhook is the controller's). Returns the runtime
    release: InferenceServices depend on it."""
    crds = helm_chart(scope, "KServeCrd", cluster, "kserve-crd", KSERVE_NAMESPACE, {}, create_namespace=True)
    controller = helm_chart(
        scope,
        "KServe",
        cluster,
        "kserve-resources",
        KSERVE_NAMESPACE,
        kserve_values(plan),
        create_namespace=True,
        wait=True,
    )
    controller.node.add_dependency(crds)
    if plan.installs_knative:
        assert plan.knative is not None
        controller.node.add_dependency(add_knative_serving(scope, cluster, plan.knative))
    if plan.observability.install_cert_manager:
        cert_manager = eks.Addon(
            scope,
            f"Addon-{CERT_MANAGER_ADDON}",
            cluster=cluster,
            addon_name=CERT_MANAGER_ADDON,
            addon_version=STORAGE_ADDONS.get(CERT_MANAGER_ADDON),
            preserve_on_delete=False,
        )
        controller.node.add_dependency(cert_manager)
    ready = webhook_ready(
        scope, "KServeWebhookReady", cluster, "mutatingwebhookconfiguration", KSERVE_MUTATING_WEBHOOK, after=controller
    )
    runtimes = helm_chart(
        scope,
        "KServeRuntimes",
        cluster,
        "kserve-runtime-configs",
        KSERVE_NAMESPACE,
        kserve_runtime_values(),
        create_namespace=True,
    )
    runtimes.node.add_dependency(ready)
    return runtimes


def _prometheus(scope: Construct, cluster: eks.ICluster, plan: WorkloadsPlan, refs: StorageRefs) -> Construct | None:
    observability = plan.observability
    if not observability.install_prometheus_stack:
        return None
    namespaces = observed_namespaces(plan.workload_namespaces)
    return add_prometheus_stack(scope, cluster, observability, namespaces)


def _keda(scope: Construct, cluster: eks.ICluster, plan: WorkloadsPlan, refs: StorageRefs) -> Construct | None:
    return add_keda(scope, cluster) if plan.observability.install_keda else None


def _lws(scope: Construct, cluster: eks.ICluster, plan: WorkloadsPlan, refs: StorageRefs) -> Construct | None:
    return add_lws(scope, cluster) if plan.observability.install_lws else None


def _kuberay(scope: Construct, cluster: eks.ICluster, plan: WorkloadsPlan, refs: StorageRefs) -> Construct | None:
    return add_kuberay(scope, cluster) if plan.observability.install_kuberay else None


def _nim(scope: Construct, cluster: eks.ICluster, plan: WorkloadsPlan, refs: StorageRefs) -> Construct | None:
    return add_nim_operator(scope, cluster) if plan.observability.install_nim_operator else None


def _model_cache(scope: Construct, cluster: eks.ICluster, plan: WorkloadsPlan, refs: StorageRefs) -> Construct | None:
    return add_model_cache_storage(scope, cluster, plan)


def _efs_storage(scope: Construct, cluster: eks.ICluster, plan: WorkloadsPlan, refs: StorageRefs) -> Construct | None:
    # Without storage.efs there is no file system: CACHE-EFS refuses a cache naming the class.
    return add_efs_storage_class(scope, cluster, refs.efs_id) if refs.efs_id is not None else None


def _dynamo(scope: Construct, cluster: eks.ICluster, plan: WorkloadsPlan, refs: StorageRefs) -> Construct | None:
    return add_dynamo_operator(scope, cluster) if plan.observability.install_dynamo_operator else None


def _kserve(scope: Construct, cluster: eks.ICluster, plan: WorkloadsPlan, refs: StorageRefs) -> Construct | None:
    return add_kserve(scope, cluster, plan) if plan.observability.install_kserve else None


def _gp3(scope: Construct, cluster: eks.ICluster, plan: WorkloadsPlan, refs: StorageRefs) -> Construct | None:
    """The ``inferstack-gp3`` StorageClass (a gateway's Postgres), after the EBS CSI add-on unless
    ``install_ebs_csi_driver`` is off."""
    storage = gp3_storage_class(scope, cluster)
    if plan.observability.install_ebs_csi_driver:
        storage.node.add_dependency(add_ebs_csi_addon(scope, cluster))
    return storage


class InferencePoolCrdChart(cdk8s.Chart):
    """The InferencePool CustomResourceDefinition (``inference.networking.k8s.io/v1``) a workload's router needs: no
    pinned chart installs it (the extension's ``inferencepool`` chart creates pools, not the CRD), so it is applied
    as upstream ships it (:func:`inferstack.catalog.routing.inference_pool_crd`)."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id, disable_resource_name_hashes=True)
        crd = inference_pool_crd()
        cdk8s.ApiObject(
            self,
            "inference-pool-crd",
            api_version=crd["apiVersion"],
            kind=crd["kind"],
            # the label tells inferstack's apply from a cluster's own install (preflight --cluster reads it)
            metadata=cdk8s.ApiObjectMetadata(
                name=crd["metadata"]["name"],
                annotations=dict(crd["metadata"].get("annotations") or {}),
                labels={APPLIED_BY_LABEL: APPLIED_BY},
            ),
        ).add_json_patch(cdk8s.JsonPatch.add("/spec", crd["spec"]))


def _inference_pool(
    scope: Construct, cluster: eks.ICluster, plan: WorkloadsPlan, refs: StorageRefs
) -> Construct | None:
    """The InferencePool CRD, applied (another install of the extension may have created it) and durable: deleting a
    CRD deletes every InferencePool on the cluster, inferstack's or not."""
    if not plan.observability.install_inference_pool_crd:
        return None
    chart = InferencePoolCrdChart(cdk8s.App(), "inference-pool")
    return add_chart_manifest(scope, "InferencePoolCrd", cluster, chart, durable=True, overwrite=True)


#: The resource-metrics API for CPU HPAs (a gateway's): the metrics-server EKS community add-on (AWS-built; the
#: default version for the cluster — its availability per region could not be checked offline (?)).
METRICS_SERVER_ADDON = "metrics-server"


def _metrics_server(
    scope: Construct, cluster: eks.ICluster, plan: WorkloadsPlan, refs: StorageRefs
) -> Construct | None:
    if not plan.observability.install_metrics_server:
        return None
    return eks.Addon(
        scope,
        f"Addon-{METRICS_SERVER_ADDON}",
        cluster=cluster,
        addon_name=METRICS_SERVER_ADDON,
        addon_version=STORAGE_ADDONS.get(METRICS_SERVER_ADDON),
        preserve_on_delete=False,
    )


#: Operator name (:data:`inferstack.catalog.kubernetes.WORKLOAD_OPERATORS`) → installer.
WORKLOAD_OPERATORS: dict[str, OperatorInstaller] = {
    "prometheus": _prometheus,
    "keda": _keda,
    "lws": _lws,
    "kuberay": _kuberay,
    "nim": _nim,
    "dynamo": _dynamo,
    "kserve": _kserve,
    "model-cache": _model_cache,
    "efs-storage": _efs_storage,
    "gp3-storage": _gp3,
    "metrics-server": _metrics_server,
    "inference-pool": _inference_pool,
}
