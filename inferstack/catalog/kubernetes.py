"""Kubernetes names inferstack relies on: node labels, taints and extended resources."""

from __future__ import annotations

from inferstack.catalog.instances import AcceleratorKind

#: Every inferstack node carries its pool's name under this label (``system`` for the system node group).
POOL_LABEL = "inferstack.io/pool"
#: terminationGracePeriodSeconds of inferstack's serving pods: the preStop hook and the engine's drain of running
#: requests before SIGKILL, seconds (a Karpenter pool's ``termination_grace_period`` must leave them this).
SERVING_TERMINATION_GRACE_SECONDS = 120
#: ``nvidia`` / ``neuron`` on accelerated nodes.
ACCELERATOR_LABEL = "inferstack.io/accelerator"
#: ``"true"`` on nodes with EFA interfaces (the EFA device plugin runs only there).
EFA_LABEL = "inferstack.io/efa"
SYSTEM_POOL = "system"
#: Node label (value ``"false"``) that keeps every GPU operator operand off a node: Bottlerocket's NVIDIA variants
#: run their own device plugin (``nvidia-k8s-device-plugin.service``, on by default: bottlerocket-core-kit
#: packages/nvidia-k8s-device-plugin), and two plugins registering ``nvidia.com/gpu`` replace each other in the
#: kubelet's device manager. Not ``nvidia.com/gpu.deploy.device-plugin=false``: gpu-operator v26.7.0 strips every
#: state label from a node without ``nvidia.com/gpu.present`` (controllers/nodelabeling_controller.go
#: ``updateGPUStateLabels`` → ``removeAllGPUStateLabels``), i.e. from each new node until NFD has labelled it; the
#: operands label is not a state label and disables them all (state_manager.go ``hasOperandsDisabled``). Its
#: validator would fail there anyway: it looks for nvidia-smi in /usr/bin, /usr/sbin, /bin, /sbin, /opt/bin
#: (cmd/nvidia-validator/main.go), and Bottlerocket ships it under /usr/libexec/nvidia/tesla/bin (? newer releases).
#: So no DCGM exporter on those nodes (rule BOTTLEROCKET-GPU-METRICS).
GPU_OPERATOR_OPERANDS_LABEL = "nvidia.com/gpu.deploy.operands"

#: Extended resource each accelerator kind exposes through its device plugin.
ACCELERATOR_RESOURCE: dict[AcceleratorKind, str] = {
    AcceleratorKind.NVIDIA: "nvidia.com/gpu",
    AcceleratorKind.NEURON: "aws.amazon.com/neuron",
}
EFA_RESOURCE = "vpc.amazonaws.com/efa"

#: Taint every accelerated node carries, so only pods that ask for the accelerator land there.
ACCELERATOR_TAINT_KEY: dict[AcceleratorKind, str] = {
    AcceleratorKind.NVIDIA: "nvidia.com/gpu",
    AcceleratorKind.NEURON: "aws.amazon.com/neuron",
}
ACCELERATOR_TAINT_VALUE = "true"
ACCELERATOR_TAINT_EFFECT = "NoSchedule"

#: The second kube-scheduler the Neuron Helm chart deploys with its scheduler extension
#: (``scheduler.customScheduler.fullnameOverride`` in the chart's values.yaml, 1.9.0): Neuron pods that set
#: ``schedulerName`` to it get contiguous Neuron devices (required for pods with more than one device).
NEURON_SCHEDULER = "my-scheduler"
#: Namespace of the Neuron chart's node-problem detector (``npd.namespaceOverride``); the chart does not create it.
NEURON_HEALTHCHECK_NAMESPACE = "neuron-healthcheck-system"

#: Namespace of the kube-prometheus-stack release inferstack installs, and the URL of its Prometheus service.
PROMETHEUS_NAMESPACE = "monitoring"
PROMETHEUS_URL = f"http://kube-prometheus-stack-prometheus.{PROMETHEUS_NAMESPACE}.svc:9090"
#: Namespace of the LeaderWorkerSet controller (the chart's webhook service lives there; lws docs install into it).
LWS_NAMESPACE = "lws-system"
#: Namespace of inferstack's Fluent Bit DaemonSet (privileged: it reads the nodes' logs).
LOGGING_NAMESPACE = "logging"
#: Knative Serving (KServe's serverless mode) and the gateways of its networking layers (net-kourier, net-istio
#: default installs): installed by you (``cluster.knative_serving``), or by inferstack with the Knative Operator
#: (in ``knative-operator``) for a Knative-mode KServe workload.
KNATIVE_NAMESPACE = "knative-serving"
KNATIVE_OPERATOR_NAMESPACE = "knative-operator"
#: The KnativeServing resource inferstack applies (the operator's docs name it so, in ``knative-serving``).
KNATIVE_SERVING_NAME = "knative-serving"
KNATIVE_GATEWAY_NAMESPACES = {"kourier": "kourier-system", "istio": "istio-system"}
#: The cluster-local gateway Service of each Knative ingress (port 80; net-kourier's and net-istio's default
#: installs), which routes by Host header to a Knative Service.
KNATIVE_LOCAL_GATEWAYS = {"kourier": "kourier-internal", "istio": "knative-local-gateway"}
#: AIBrix's control plane (v0.7.0 release manifests: its controller and gateway plugins) and the Envoy Gateway
#: that runs its proxies, installed by you (``cluster.aibrix``).
AIBRIX_CONTROLLER_NAMESPACE, AIBRIX_GATEWAY_NAMESPACE = "aibrix-system", "envoy-gateway-system"
#: AIBrix's Gateway (``config/gateway/gateway.yaml`` at v0.7.0: ``eg`` with the kustomize prefix ``aibrix-``, in
#: ``aibrix-system``, one HTTP listener on port 80).
AIBRIX_GATEWAY = "aibrix-eg"
#: Labels Envoy Gateway puts on the proxy pods and the Service it makes for a Gateway (``gatewayapi.
#: OwningGatewayNameLabel`` / ``OwningGatewayNamespaceLabel``): how a client finds AIBrix's gateway.
AIBRIX_GATEWAY_PODS = {
    "gateway.envoyproxy.io/owning-gateway-name": AIBRIX_GATEWAY,
    "gateway.envoyproxy.io/owning-gateway-namespace": AIBRIX_CONTROLLER_NAMESPACE,
}
#: The proxy's container port for the listener's port 80: Envoy Gateway shifts a privileged listener port by 10000
#: (``servicePortToContainerPort``, ``wellKnownPortShift``; read in Envoy Gateway's translator source, not at the
#: v1.2.8 tag AIBrix pins (?)), so the proxy runs without CAP_NET_BIND_SERVICE.
AIBRIX_GATEWAY_SERVICE_PORT, AIBRIX_GATEWAY_POD_PORT = 80, 10080

#: Namespace → what lives there: every namespace the platform, an operator inferstack installs, or a control plane
#: a kind relies on uses. Never a workload namespace: a workload there would relabel it for Pod Security (breaking
#: privileged agents such as Fluent Bit) and put default-deny NetworkPolicies over its pods. Extended with
#: :func:`register_platform_namespace` (an operator registered by a library user).
PLATFORM_NAMESPACES: dict[str, str] = {
    PROMETHEUS_NAMESPACE: "kube-prometheus-stack (installed by inferstack)",
    "keda": "KEDA (installed by inferstack)",
    "gpu-operator": "the NVIDIA GPU operator (installed by inferstack)",
    NEURON_HEALTHCHECK_NAMESPACE: "the Neuron node health checks (installed by inferstack)",
    LWS_NAMESPACE: "the LeaderWorkerSet controller (installed by inferstack)",
    "kuberay-system": "the KubeRay operator (installed by inferstack)",
    "nim-operator": "the NIM operator (installed by inferstack)",
    "dynamo-system": "the Dynamo platform (installed by inferstack)",
    "kserve": "the KServe controller (installed by inferstack)",
    "cert-manager": "cert-manager (the EKS add-on inferstack installs for KServe)",
    LOGGING_NAMESPACE: "Fluent Bit (installed by inferstack; privileged)",
    KNATIVE_NAMESPACE: "Knative Serving (KServe's serverless mode)",
    KNATIVE_OPERATOR_NAMESPACE: "the Knative Operator (installed by inferstack for KServe's Knative mode)",
    **{ns: f"the {layer} gateway of Knative Serving" for layer, ns in KNATIVE_GATEWAY_NAMESPACES.items()},
    AIBRIX_CONTROLLER_NAMESPACE: "AIBrix's control plane",
    AIBRIX_GATEWAY_NAMESPACE: "the Envoy Gateway that runs AIBrix's proxies",
}


def register_platform_namespace(namespace: str, owner: str) -> None:
    """Reserve ``namespace`` for ``owner`` (e.g. an operator a library user adds to the platform)."""
    PLATFORM_NAMESPACES[namespace] = owner


def unregister_platform_namespace(namespace: str) -> None:
    """Release a namespace reserved with :func:`register_platform_namespace`."""
    PLATFORM_NAMESPACES.pop(namespace, None)


def operator_namespaces() -> frozenset[str]:
    """Every reserved platform namespace (:data:`PLATFORM_NAMESPACES`)."""
    return frozenset(PLATFORM_NAMESPACES)


#: Operators a workload kind may need (the kind registry names them; the workloads stack installs each with Helm):
#: kube-prometheus-stack (PodMonitor), KEDA (ScaledObject), LeaderWorkerSet, KubeRay (RayService), the NIM operator
#: (NIMCache, NIMService), the Dynamo operator (DynamoGraphDeployment), KServe (InferenceService) and the
#: ``inferstack-model-cache`` StorageClass (``model-cache``: NIM caches, Ollama's models, EBS caches) and the
#: ``inferstack-efs`` StorageClass (``efs-storage``: EFS caches), and the InferencePool CRD (``inference-pool``: a
#: workload's router).
WORKLOAD_OPERATORS = frozenset(
    {
        "prometheus",
        "keda",
        "lws",
        "kuberay",
        "nim",
        "dynamo",
        "kserve",
        "model-cache",
        "efs-storage",
        "gp3-storage",
        "metrics-server",
        "inference-pool",
    }
)
#: Namespace of the KubeRay operator release.
KUBERAY_NAMESPACE = "kuberay-system"
#: Namespace of the NIM operator release (the NIM docs install it into ``nim-operator``).
NIM_NAMESPACE = "nim-operator"
#: Namespace of the Dynamo platform release (the Dynamo docs install it into ``dynamo-system``; its CRD conversion
#: webhook service lives there).
DYNAMO_NAMESPACE = "dynamo-system"
#: StorageClass of NIM model caches: EBS gp3 provisioned for reads at load (16,000 IOPS, 1,000 MiB/s).
MODEL_CACHE_STORAGE_CLASS = "inferstack-model-cache"
#: StorageClass of the EFS file system ``storage.efs`` creates (ReadWriteMany caches): an access point per claim.
EFS_STORAGE_CLASS = "inferstack-efs"
#: Namespace of the KServe controller release (the literal ``kserve`` of its manifests becomes the release namespace).
KSERVE_NAMESPACE = "kserve"
#: StorageClass of inferstack's small persistent volumes (Prometheus, a gateway's Postgres): EBS gp3, encrypted,
#: retained, bound where the pod lands.
GP3_STORAGE_CLASS = "inferstack-gp3"
