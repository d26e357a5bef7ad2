"""Every chart, add-on, layer and Kubernetes version inferstack deploys, in one place.

Helm chart versions come from ../shared/crds/CHARTS.md (each with its upstream source); a chart is only ever
installed at the version pinned here. Python and npm tooling versions are pinned in ``requirements.txt`` and
``package-lock.json``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class HelmChartVersion:
    """A Helm chart pinned to one published version."""

    chart: str
    repository: str
    version: str
    source: str
    """Where the version was read: ``owner/repo`` · path · ref."""
    reference_version: str | None = None
    """The release whose vendored ``values.yaml`` (tests/upstream) the values we set are checked against, when no
    copy of ``version`` itself could be obtained. Default: ``version``."""

    @property
    def values_reference(self) -> str:
        return self.reference_version or self.version


@dataclass(frozen=True, kw_only=True)
class KubernetesRelease:
    """A Kubernetes minor version the cluster stack can create."""

    version: str
    """``"1.36"`` style minor version."""
    kubectl_layer: str
    """Python module of the matching ``aws-cdk.lambda-layer-kubectl-vNN`` package."""


DEFAULT_KUBERNETES_VERSION = "1.36"

#: Kubernetes versions inferstack supports. The kubectl layer must stay within kubectl's ±1 minor version skew of
#: the cluster; aws-cdk-lib 2.275 knows versions up to 1.36, and only the v36 layer is pinned.
KUBERNETES_RELEASES: dict[str, KubernetesRelease] = {
    "1.35": KubernetesRelease(version="1.35", kubectl_layer="aws_cdk.lambda_layer_kubectl_v36"),
    "1.36": KubernetesRelease(version="1.36", kubectl_layer="aws_cdk.lambda_layer_kubectl_v36"),
}

#: EKS managed add-ons installed on every cluster. ``None`` means "the default version EKS selects for the
#: cluster's Kubernetes version when the add-on is created"; a config can pin any of them
#: (``cluster.addon_versions``). Exact ``vX.Y.Z-eksbuild.N`` strings for 1.36 could not be confirmed offline.
CORE_ADDONS: dict[str, str | None] = {
    "vpc-cni": None,
    "coredns": None,
    "kube-proxy": None,
    "eks-pod-identity-agent": None,
}

#: Helm charts (../shared/crds/CHARTS.md). Placeholder ``Chart.yaml`` versions are replaced by the published ones.
HELM_CHARTS: dict[str, HelmChartVersion] = {
    "karpenter": HelmChartVersion(
        chart="karpenter",
        repository="oci://public.ecr.aws/karpenter/karpenter",
        version="1.14.1",
        source="aws/karpenter-provider-aws · charts/karpenter/Chart.yaml · main 1d927085",
    ),
    "karpenter-crd": HelmChartVersion(
        chart="karpenter-crd",
        repository="oci://public.ecr.aws/karpenter/karpenter-crd",
        version="1.14.1",
        source="aws/karpenter-provider-aws · charts/karpenter-crd/Chart.yaml · main 1d927085",
    ),
    "gpu-operator": HelmChartVersion(
        chart="gpu-operator",
        repository="https://helm.ngc.nvidia.com/nvidia",
        version="v26.7.0",
        source="NVIDIA/gpu-operator · release workflow packages tag v26.7.0 (10ee5b36)",
    ),
    "neuron-helm-chart": HelmChartVersion(
        chart="neuron-helm-chart",
        repository="oci://public.ecr.aws/neuron/neuron-helm-chart",
        version="1.10.0",
        # Newest confirmed release (GitHub release 1.10.0, tag commit 8ca1e5c, 2026-08-19; ../shared/crds/CHARTS.md).
        # Its values.yaml could not be read offline: the values we set are checked against 1.9.0 (b77a6f9), the
        # nearest vendored copy. Unconfirmed for 1.10.0 itself (?).
        source="aws-neuron/neuron-helm-charts · GitHub release 1.10.0 (8ca1e5c); values checked against 1.9.0",
        reference_version="1.9.0",
    ),
    "aws-efa-k8s-device-plugin": HelmChartVersion(
        chart="aws-efa-k8s-device-plugin",
        repository="https://aws.github.io/eks-charts",
        version="v0.5.30",
        source="aws/eks-charts · stable/aws-efa-k8s-device-plugin/Chart.yaml · 52396092",
    ),
    "kuberay-operator": HelmChartVersion(
        chart="kuberay-operator",
        repository="https://ray-project.github.io/kuberay-helm/",
        version="1.7.0",
        source="ray-project/kuberay · helm-chart/kuberay-operator/Chart.yaml · tag v1.7.0",
    ),
    "kserve-crd": HelmChartVersion(
        chart="kserve-crd",
        repository="oci://ghcr.io/kserve/charts/kserve-crd",
        version="v0.20.0",
        source="kserve/kserve · charts/kserve-crd/Chart.yaml · tag v0.20.0",
    ),
    "kserve-runtime-configs": HelmChartVersion(
        chart="kserve-runtime-configs",
        repository="oci://ghcr.io/kserve/charts/kserve-runtime-configs",
        version="v0.20.0",
        source="kserve/kserve · charts/kserve-runtime-configs/Chart.yaml · tag v0.20.0",
    ),
    "kserve-resources": HelmChartVersion(
        chart="kserve-resources",
        repository="oci://ghcr.io/kserve/charts/kserve-resources",
        version="v0.20.0",
        source="kserve/kserve · charts/kserve-resources/Chart.yaml · tag v0.20.0",
    ),
    # The Knative Operator (KServe v0.20.0's kserve-deps.env: KNATIVE_OPERATOR_VERSION=v1.21.1). Its Chart.yaml says
    # "{{ version }}": hack/generate-helm.sh writes the tag without its "v" (1.21.1) before packaging, and the
    # publish-helm workflow indexes the release assets on the repository's GitHub Pages — that URL could not be
    # checked offline (?).
    "knative-operator": HelmChartVersion(
        chart="knative-operator",
        repository="https://knative.github.io/operator",
        version="1.21.1",
        source="knative/operator · config/charts/knative-operator · tag knative-v1.21.1",
    ),
    "k8s-nim-operator": HelmChartVersion(
        chart="k8s-nim-operator",
        repository="https://helm.ngc.nvidia.com/nvidia",
        version="3.0.0",
        # Read at tag v3.0.0 (061628a7); Chart.yaml says 3.0.0 at every tag up to v3.1.2, so the published 3.0.0
        # may have been packaged from a later 3.0.x/3.1.x tree (?).
        source="NVIDIA/k8s-nim-operator · deployments/helm/k8s-nim-operator/Chart.yaml · tag v3.0.0 (061628a7)",
    ),
    "dynamo-platform": HelmChartVersion(
        chart="dynamo-platform",
        repository="https://helm.ngc.nvidia.com/nvidia/ai-dynamo",
        version="1.4.0",
        # Read at the 1.4.0 branch cut (parent of c13fdcec, via the fork mirror wxsms/dynamo): no release tag is in
        # any available snapshot, so the published chart may carry release-branch cherry-picks (?).
        source="ai-dynamo/dynamo · deploy/helm/charts/platform/Chart.yaml · main e147ceea (1.4.0 branch cut)",
    ),
    "lws": HelmChartVersion(
        chart="lws",
        repository="oci://registry.k8s.io/lws/charts/lws",
        # The OCI tag is the release tag, v-prefixed: hack/push-chart.sh at v0.10.0 packages with
        # --version/--app-version <release tag> (Chart.yaml in git holds the placeholder 0.1.0).
        version="v0.10.0",
        source="kubernetes-sigs/lws · charts/lws/Chart.yaml + hack/push-chart.sh · tag v0.10.0 (2161f38f)",
        reference_version="0.10.0",
        # The CRD comes from the chart's crds/, which Helm installs once and never upgrades: a later LWS bump needs
        # the new CRD applied first (kubectl apply --server-side -f charts/lws/crds/ of that release).
    ),
    "kube-prometheus-stack": HelmChartVersion(
        chart="kube-prometheus-stack",
        repository="https://prometheus-community.github.io/helm-charts",
        version="88.5.3",
        source="prometheus-community/helm-charts · charts/kube-prometheus-stack/Chart.yaml · tag 88.5.3",
    ),
    "keda": HelmChartVersion(
        chart="keda",
        repository="https://kedacore.github.io/charts",
        version="2.20.2",
        source="kedacore/charts · keda/Chart.yaml · tag v2.20.2",
    ),
    "aws-mountpoint-s3-csi-driver": HelmChartVersion(
        chart="aws-mountpoint-s3-csi-driver",
        repository="https://awslabs.github.io/mountpoint-s3-csi-driver",
        version="2.7.0",
        source="awslabs/mountpoint-s3-csi-driver · charts/aws-mountpoint-s3-csi-driver/Chart.yaml · tag v2.7.0",
    ),
    "aws-fsx-csi-driver": HelmChartVersion(
        chart="aws-fsx-csi-driver",
        repository="https://kubernetes-sigs.github.io/aws-fsx-csi-driver",
        version="1.17.0",
        source="kubernetes-sigs/aws-fsx-csi-driver · charts/aws-fsx-csi-driver/Chart.yaml · tag v1.9.0",
    ),
    "inferencepool": HelmChartVersion(
        chart="inferencepool",
        repository="oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool",
        version="v1.5.0",
        source="kubernetes-sigs/gateway-api-inference-extension · config/charts/inferencepool · tag v1.5.0",
    ),
}

#: EKS-optimized AMI release Karpenter node classes pin (``amiSelectorTerms: [{alias: ...}]``); the AL2023 alias
#: resolves the standard, NVIDIA and Neuron variant per instance type. Source: awslabs/amazon-eks-ami CHANGELOG
#: (release v20260714). Managed node groups take the latest release of their AMI type for the cluster version.
KARPENTER_AMI_ALIASES: dict[str, str] = {
    "al2023": "al2023@v20260714",
}

#: The Neuron scheduler extension's second kube-scheduler, matched to the cluster's minor version (the chart's
#: default, public.ecr.aws/eks-distro kube-scheduler v1.31, is five minors older than a 1.36 API server; the
#: version-skew policy allows one). Upstream's image ``registry.k8s.io/kube-scheduler:v<minor>.0``; the tag's
#: presence for 1.35/1.36 could not be checked offline (?).
KUBE_SCHEDULER_IMAGE = "registry.k8s.io/kube-scheduler"


def kube_scheduler_tag(kubernetes_version: str) -> str:
    """``v1.36.0`` for ``"1.36"``: the first patch release of the cluster's minor version."""
    return f"v{kubernetes_version}.0"


#: Container images inferstack runs itself, pinned.
IMAGES: dict[str, str] = {
    # Log shipping DaemonSet: AWS for Fluent Bit 2.32.5 (Fluent Bit 1.9.10 with AWS's patches), the release that adds
    # EKS Pod Identity to the C cloudwatch_logs output (aws/aws-for-fluent-bit PR 888, 2025-01-07). The build tag
    # 2.32.5.20250327 is the one a user's log prints in aws-for-fluent-bit issue 784; newer builds may exist (?).
    "fluent-bit": "public.ecr.aws/aws-observability/aws-for-fluent-bit:2.32.5.20250327",
    # Base of the model-sync image inferstack builds (inferstack/images/model-sync: this Python plus the hash-locked
    # wheels of MODEL_SYNC_PACKAGES, installed at build time — the Job installs nothing at start). Its digest could
    # not be read offline (?).
    "model-sync-base": "public.ecr.aws/docker/library/python:3.12.8-slim-bookworm",
    # kube-prometheus-stack's CRD upgrade Job copies its CRDs with busybox (chart default tag "latest"; pinned).
    # docker.io/library/busybox:1.37.0 — release 1.37.0 (2024-09); the tag's digest could not be checked offline.
    "busybox": "docker.io/library/busybox:1.37.0",
    # The LeaderWorkerSet controller, at the chart's release (values.yaml in git says tag "main", pullPolicy Always;
    # hack/push-chart.sh sets the release tag when it packages — pinned here so nothing depends on that step).
    "lws-controller": "registry.k8s.io/lws/lws:v0.10.0",
    # The KubeRay operator, at the chart's release (kuberay-operator 1.7.0 values.yaml image).
    "kuberay-operator": "quay.io/kuberay/operator:v1.7.0",
    # The NIM operator, at the chart's release: chart 3.0.0's values.yaml says ghcr.io/nvidia/k8s-nim-operator
    # release-3.0 with pullPolicy Always — a branch tag that moves. Tagged releases are published to NGC
    # (.nvidia-ci.yml release:ngc, OUT_IMAGE_VERSION=<git tag>); the v3.0.0 tag on nvcr.io could not be checked
    # offline (?).
    "nim-operator": "nvcr.io/nvidia/cloud-native/k8s-nim-operator:v3.0.0",
    # The LiteLLM proxy with Prisma for Postgres (the image the Helm chart defaults to). v1.83.10 is the newest stable
    # release whose notes were read (release_notes/v1.83.10, 2026-04-27; the old main-v…-stable tag scheme ended
    # at 1.84.0); this litellm-database tag is inferred from that scheme (?). Avoid 1.82.7/1.82.8 (compromised PyPI
    # releases, BerriAI/litellm#24537). USER root (Dockerfile.database), which inferstack keeps: the proxy runs as
    # root because this image generates Prisma's client into a root-owned cache at start. The non-root variant is
    # ghcr.io/berriai/litellm-non_root (docker/Dockerfile.non_root: USER nobody, HOME=/app, Prisma generated at build
    # time; migrations still write site-packages at start unless DISABLE_SCHEMA_UPDATE); the 2026 ghcr_deploy.yml
    # seen (in forks) tags it main-<tag> like litellm-database, the docs show v1.83.0-stable, and from v1.83.0
    # releases are built in another repository — which tag v1.83.10 has could not be checked offline (?), so it is
    # not switched to a guessed one (an ImagePullBackOff serves nothing).
    "litellm": "ghcr.io/berriai/litellm-database:main-v1.83.10-stable",
    # The gateway's own Postgres (kind litellm, database mode deploy): the official image, uid 999.
    "postgres": "docker.io/library/postgres:17.6-bookworm",
    # The Knative Operator and its webhook, at the chart's release (values.yaml "{{ tag }}" → v1.21.1 at packaging).
    "knative-operator": "gcr.io/knative-releases/knative.dev/operator/cmd/operator:v1.21.1",
    "knative-operator-webhook": "gcr.io/knative-releases/knative.dev/operator/cmd/webhook:v1.21.1",
    # The Dynamo operator, at the platform chart's release (operator values tag "" → Chart appVersion 1.4.0).
    "dynamo-operator": "nvcr.io/nvidia/ai-dynamo/kubernetes-operator:1.4.0",
    # The Gateway API inference extension's endpoint picker (``workloads[].routing``), v1.5.0: the last release with
    # the full picker in kubernetes-sigs/gateway-api-inference-extension (v1.6.0 keeps only a conformance "lwepp";
    # the picker moved to llm-d/llm-d-router) and the release of the pinned ``inferencepool`` chart
    # (``config/charts/epplib`` values at tag v1.5.0). Built FROM gcr.io/distroless/static:nonroot (uid 65532;
    # Dockerfile at the tag), entrypoint /epp.
    "endpoint-picker": "registry.k8s.io/gateway-api-inference-extension/epp:v1.5.0",
    # The Envoy proxy beside the endpoint picker (its ext_proc client), the image the v1.5.0 ``standalone`` chart
    # runs (``config/charts/standalone/values.yaml``). The distroless Envoy images run as uid 65532 (their
    # Dockerfile's distroless ``nonroot`` base); not confirmed offline (?) — inferstack sets the uid itself.
    "envoy-router": "docker.io/envoyproxy/envoy:distroless-v1.33.2",
}

#: Python packages of the model-sync image (exact pins). Their wheels, and every dependency's, are locked with
#: sha256 in inferstack/images/model-sync/requirements.txt (``make images``). huggingface_hub 2.4.0 downloads
#: through hf_xet, its own dependency (constants.py: "hf_transfer is not used anymore"; HF_XET_HIGH_PERFORMANCE
#: replaces HF_HUB_ENABLE_HF_TRANSFER), so hf_transfer is not installed.
MODEL_SYNC_PACKAGES: tuple[str, ...] = ("huggingface_hub==2.4.0", "boto3==1.44.5")
#: The CPython minor version of ``IMAGES["model-sync-base"]`` (the wheels are locked for it).
MODEL_SYNC_PYTHON = "3.12"

#: EKS add-ons for model storage (versions: the EKS default for the cluster version, like the core add-ons).
STORAGE_ADDONS: dict[str, str | None] = {
    "aws-mountpoint-s3-csi-driver": None,
    "aws-fsx-csi-driver": None,
    # EFS caches (storage.efs). The add-on's versions for Kubernetes 1.33+ could not be listed offline (?); upstream's
    # newest release read is kubernetes-sigs/aws-efs-csi-driver v3.4.1.
    "aws-efs-csi-driver": None,
    # Prometheus' persistent volume (gp3).
    "aws-ebs-csi-driver": None,
    # KServe's webhook certificates: cert-manager as an EKS community add-on (AWS-built, default version for the
    # cluster; its availability per region and Kubernetes version could not be checked offline (?)).
    "cert-manager": None,
    # A gateway's CPU HPA: metrics-server as an EKS community add-on (?).
    "metrics-server": None,
}
#: Service accounts of those add-ons that take a Pod Identity role.
STORAGE_ADDON_SERVICE_ACCOUNTS: dict[str, str] = {
    "aws-mountpoint-s3-csi-driver": "s3-csi-driver-sa",
    "aws-fsx-csi-driver": "fsx-csi-controller-sa",
    # The controller creates the access points (chart values.yaml: efs-csi-controller-sa; the node's efs-csi-node-sa
    # needs IAM only for the ``iam`` mount option, which inferstack does not use).
    "aws-efs-csi-driver": "efs-csi-controller-sa",
}

#: vLLM release inside each engine image (the flag list and engine behaviour follow from it).
ENGINE_VLLM_VERSIONS: dict[str, str] = {
    "vllm-gpu": "0.31.0",
    "vllm-neuron": "0.16.0",
    # Read from each image's build files (see ENGINE_IMAGES). Dynamo's and Ray's 0.26.0 has a vendored flag list (its
    # worker flags and Serve engine_kwargs are checked against it); KServe's and Triton's set only the sizing model's
    # release line. Triton's is unconfirmed (?).
    "dynamo-vllm": "0.26.0",
    "dynamo-vllm-efa": "0.26.0",
    # rayproject/ray-llm:2.58.0 and the AWS Ray LLM DLC: Ray 2.58.0 requires vllm[audio]==0.26.0 (its wheel's METADATA)
    "ray-llm": "0.26.0",
    "ray-llm-efa": "0.26.0",
    "kserve-huggingface": "0.24.0",
    "triton-vllm": "0.31.0",
}
#: Ray release inside each Ray image (its Serve LLM config fields are checked against it).
ENGINE_RAY_VERSIONS: dict[str, str] = {"ray-llm": "2.58.0", "ray-llm-efa": "2.58.0"}
#: Neuron device families the ``vllm-neuron`` image serves (vllm-neuron 0.5 / NxD Inference).
NEURON_SERVING_DEVICES: frozenset[str] = frozenset({"Inferentia2", "Trainium"})

#: Serving engine images (pinned), each with the engine release it carries (ENGINE_VLLM_VERSIONS,
#: ENGINE_RAY_VERSIONS): the flag lists and the sizing profile follow from it.
ENGINE_IMAGES: dict[str, str] = {
    # The AWS Deep Learning Container for vLLM on EC2/EKS (seed 000 deploys vLLM from it), Ubuntu line, the newest
    # release confirmed: vLLM 0.31.0 (aws/deep-learning-containers docs/src/data/vllm/0.31.0-gpu-ec2.yml @ c6e3ca18;
    # the line is built FROM vllm/vllm-openai:v<ver>, ec2-ubuntu.yml). CUDA 13.0.2 (needs NVIDIA driver ≥ 580: the
    # EKS AL2023 NVIDIA AMI v20260714 has 580.159.03), Python 3.12, EFA 1.47.0 with aws-ofi-nccl, the Run:ai
    # streamer and NIXL. No USER (root, HOME /root), WORKDIR /; its ENTRYPOINT dockerd_entrypoint.sh runs a telemetry
    # script, then ``vllm serve "$@"`` — inferstack sets ``command: [vllm, serve]``, so the telemetry call never
    # runs. No vLLM 0.32/0.33 image (DLC or vllm/vllm-openai) could be confirmed offline (?); the 0.33.0 flag list is
    # vendored for users who pin one. The same image is in 763104351884.dkr.ecr.<region>.amazonaws.com/vllm.
    "vllm-gpu": "public.ecr.aws/deep-learning-containers/vllm:0.31.0-gpu-py312-cu130-ubuntu24.04-ec2",
    # AWS Neuron DLC for Inferentia2 / Trainium1: vLLM 0.16.0 + the vllm-neuron plugin (branch release-0.5.3, NxD
    # Inference), Neuron SDK 2.31.1, Python 3.12 (aws-neuron/deep-learning-containers tag 2.31.1, 8d2d8380:
    # vllm/inference/0.16.0/Dockerfile.neuronx — no USER (root), WORKDIR /workspace/vllm, ENTRYPOINT runs its
    # arguments). The last DLC for inf2/trn1: SDK 2.32.0's release notes say it is no longer published, and the
    # 2.32+ plugin (vllm-neuron 0.24) serves Trn2/Trn3 only. vLLM 0.16 has no --shutdown-timeout (added in 0.18).
    "vllm-neuron": "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.16.0-neuronx-py312-sdk2.31.1-ubuntu24.04",
    # Ray Serve LLM (kind ray_serve): Ray 2.58.0, the newest rayproject/ray-llm tag confirmed (Ray 2.60 has no
    # confirmed ray-llm image); ray[llm]==2.58.0 pins vllm[audio]==0.26.0 (wheel metadata), CUDA 13.0 (driver ≥ 580,
    # see vllm-gpu), Python 3.12. Its Serve LLM fields are vendored (engine_flag_data/ray-serve-llm-2.58.0.json).
    # rayproject images run as user ray (uid 1000). The AWS Ray LLM DLC (ray:serve-llm-cuda-v1.0: Ray 2.58, vLLM
    # 0.26, EFA + aws-ofi-nccl, Python 3.13) is not the default: its USER is not confirmed (no USER in its
    # Dockerfile; the base image's not read) and inferstack runs Ray pods as uid 1000.
    "ray-llm": "rayproject/ray-llm:2.58.0-py312-cu130",
    # The AWS Ray LLM Deep Learning Container, for prefill/decode over EFA: the same Ray 2.58.0 / vLLM 0.26.0 with
    # the EFA installer 1.49.0 (libfabric in /opt/amazon/efa) and aws-ofi-nccl, which NIXL's LIBFABRIC plugin and
    # NCCL over EFA need (rayproject/ray-llm has neither). Python 3.13, no USER (root); inferstack runs it as uid
    # 1000 with HOME on a volume. Facts and sources: catalog/images.py.
    "ray-llm-efa": "public.ecr.aws/deep-learning-containers/ray:serve-llm-cuda-v1.0",
    # NVIDIA Dynamo 1.4.0 (GA 2026-08-14; ../shared/facts/serving-apis.md §2.1): the vLLM runtime (vLLM 0.26.0 with
    # the Run:ai streamer: pyproject.toml vllm[flashinfer,runai,otel]==0.26.0; user dynamo, uid 1000, gid 0;
    # ENTRYPOINT []), its EFA build (libfabric + aws-ofi-nccl; sets no FI_* variables) and the frontend. Public on
    # nvcr.io (examples/backends/vllm/deploy/README.md). Tags are semantic versions, so the operator's admission
    # needs no runtimeVersionOverride (webhook/validation/shared_v1beta1.go).
    # NVIDIA Triton Inference Server with the vLLM backend (kind triton), release 26.10 (the newest release notes
    # seen; CUDA 13.4.3, compute capability ≥ 7.5). Its vLLM version is not in the notes seen; NVIDIA's vLLM
    # container of the same month carries vLLM 0.31.0 (?). The image's tritonserver runs as any user.
    "triton-vllm": "nvcr.io/nvidia/tritonserver:26.10-vllm-python-py3",
    # KServe's Hugging Face runtime (kserve-runtime-configs v0.20.0: kserve/huggingfaceserver, tag the chart's version);
    # the controller appends -gpu to the tag when the predictor's limits hold nvidia.com/gpu (pkg/utils). vLLM 0.24.0
    # (python/huggingface_server.Dockerfile, uv.lock), USER 1000. Not set on the InferenceService: the runtime's.
    "kserve-huggingface": "kserve/huggingfaceserver:v0.20.0-gpu",
    # SGLang 0.5.19, the last release with a CUDA 12 image (PR #38404 "Retire the CUDA 12 lane"; later images are CUDA
    # 13 only and need a CUDA-13 driver on the node). The tag's digest could not be resolved offline (?). No USER
    # (root) in the stored Dockerfiles; inferstack runs it as uid 1000 with a writable HOME for its caches.
    "sglang": "docker.io/lmsysorg/sglang:v0.5.19-cu129",
    # Hugging Face TGI 3.3.7 (tag v3.3.7 = dfb3fbe7, 2025-12-18; build.yaml publishes type=semver {{version}}), the
    # last release: TGI is in maintenance mode since 2025-12-11. Runs as root (its Python is under /root/.local).
    "tgi": "ghcr.io/huggingface/text-generation-inference:3.3.7",
    # Ollama 0.32.15 (tag b7871fc0, release.yaml tags {{version}} without v). No USER; runs as uid 1000 here with
    # HOME on a writable volume (serve writes ~/.ollama/id_ed25519 at start and exits if it cannot).
    "ollama": "docker.io/ollama/ollama:0.32.15",
    "dynamo-vllm": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0",
    "dynamo-vllm-efa": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0-efa",
    "dynamo-frontend": "nvcr.io/nvidia/ai-dynamo/dynamo-frontend:1.4.0",
    # Copies pre-compiled Neuron artifacts from S3 before the server starts.
    "aws-cli": "public.ecr.aws/aws-cli/aws-cli:2.27.50",
}

#: The account of Amazon EKS's image registry (``<account>.dkr.ecr.<region>.<url suffix>``) per region, for the images
#: EKS publishes (the EFA device plugin among them): awsdocs/amazon-eks-user-guide
#: ``latest/ug/workloads/add-ons-images.adoc`` @ 1cc6ebb4. China regions use ``amazonaws.com.cn`` (the stack's
#: ``AWS::URLSuffix``). ap-southeast-5 (151610086707) is on the Chinese-language copy only, not at that commit (?).
EKS_REGISTRY_DEFAULT_ACCOUNT = "602401143452"
_EKS_REGISTRY_DEFAULT_REGIONS = (
    "ap-south-1", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3", "ap-southeast-1", "ap-southeast-2",
    "ca-central-1", "eu-central-1", "eu-west-1", "eu-west-2", "eu-west-3", "eu-north-1", "sa-east-1",
    "us-east-1", "us-east-2", "us-west-1", "us-west-2",
)  # fmt: skip
EKS_REGISTRY_ACCOUNTS: dict[str, str] = {
    **{region: EKS_REGISTRY_DEFAULT_ACCOUNT for region in _EKS_REGISTRY_DEFAULT_REGIONS},
    "af-south-1": "877085696533",
    "ap-east-1": "800184023465",
    "ap-east-2": "533267051163",
    "ap-southeast-3": "296578399912",
    "ap-south-2": "900889452093",
    "ap-southeast-4": "491585149902",
    "ap-southeast-6": "333609536671",
    "ap-southeast-7": "121268973566",
    "eu-south-1": "590381155156",
    "eu-south-2": "455263428931",
    "eu-central-2": "900612956339",
    "il-central-1": "066635153087",
    "mx-central-1": "730335286997",
    "me-south-1": "558608220178",
    "me-central-1": "759879836304",
    "ca-west-1": "761377655185",
    "us-gov-east-1": "151742754352",
    "us-gov-west-1": "013241004608",
    "cn-north-1": "918309763551",
    "cn-northwest-1": "961992271922",
    "eusc-de-east-1": "877088126301",
}
