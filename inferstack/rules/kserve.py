"""Rules of the ``kserve`` kind: scale to zero only where the mode does it, Knative Serving present (with the pod-spec
features GPU predictors need) before a Knative-mode service, the cold start within the stated tolerance and within
Knative's request timeout, and the model-sync wait a Knative predictor cannot have."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.kserve import DeploymentMode, KServeWorkloadConfig
from inferstack.config.model import InferstackConfig
from inferstack.plan import resolve
from inferstack.plan.kserve import cold_start, knative_serving
from inferstack.rules.base import Finding, Rule, Severity

SCALE_ZERO = "KSERVE-SCALE-ZERO"
KNATIVE = "KSERVE-KNATIVE"
COLD_START = "KSERVE-COLD-START"
REQUEST_TIMEOUT = "KSERVE-REQUEST-TIMEOUT"
SYNC_WAIT = "KSERVE-SYNC-WAIT"
#: Knative Serving's largest request timeout (config-defaults max-revision-timeout-seconds), seconds.
KNATIVE_MAX_TIMEOUT_SECONDS = 600


def _workloads(config: InferstackConfig) -> Iterator[tuple[str, KServeWorkloadConfig]]:
    for index, workload in enumerate(config.workloads):
        if isinstance(workload, KServeWorkloadConfig):
            yield f"workloads[{index}]", workload


def check_scale_zero(config: InferstackConfig) -> Iterator[Finding]:
    """``min_replicas: 0`` in Standard mode: KServe's HPA raises it to 1 without a word, so a GPU stays held."""
    for path, workload in _workloads(config):
        if workload.deployment_mode is DeploymentMode.STANDARD and workload.scaling.min_replicas == 0:
            yield Finding(
                rule=SCALE_ZERO,
                path=f"{path}.scaling.min_replicas",
                message="0 in Standard mode: KServe's HPA keeps at least 1 replica (hpa_reconciler.go clamps it), "
                "so nothing scales to zero",
                fix="use deployment_mode: Knative (with cluster.knative_serving) to scale to zero, or min_replicas: 1",
                suggestions=({f"{path}.scaling.min_replicas": 1},),
            )


def check_knative(config: InferstackConfig) -> Iterator[Finding]:
    """Knative mode needs Knative Serving (the cluster's, or the one inferstack installs) with the pod-spec
    features that let a predictor carry a node selector and tolerations."""
    knative = knative_serving(config)
    for path, workload in _workloads(config):
        if workload.deployment_mode is not DeploymentMode.KNATIVE:
            continue
        if knative is None:
            yield Finding(
                rule=KNATIVE,
                path=f"{path}.deployment_mode",
                message="Knative mode needs Knative Serving, and observability.install_knative_serving is off while "
                "cluster.knative_serving does not declare one: KServe rejects the InferenceService "
                "(ServerlessModeRejected) without it",
                fix="set observability.install_knative_serving: true (inferstack installs Knative Serving 1.21 with "
                "Kourier), declare the cluster's own in cluster.knative_serving, or use deployment_mode: Standard",
            )
        elif not knative.podspec_features_enabled:
            yield Finding(
                rule=KNATIVE,
                path="cluster.knative_serving.podspec_features_enabled",
                message="Knative refuses a predictor with a node selector and tolerations unless config-features "
                "enables kubernetes.podspec-nodeselector and kubernetes.podspec-tolerations (disabled by default)",
                fix="enable both in the knative-serving config-features ConfigMap (KnativeServing spec.config.features)"
                " and set podspec_features_enabled: true",
            )


def check_cold_start(config: InferstackConfig) -> Iterator[Finding]:
    """A predictor at zero replicas makes its first request wait for a node, the image and the model load: that
    must fit the latency the config says clients accept."""
    plan = resolve(config)
    for path, workload in _workloads(config):
        tolerance = workload.cold_start_tolerance_seconds
        if tolerance is None or workload.scaling.min_replicas > 0:
            continue
        cold = cold_start(plan.workload(workload))
        if cold.total > tolerance:
            yield Finding(
                rule=COLD_START,
                path=f"{path}.cold_start_tolerance_seconds",
                message=f"a cold start takes ~{cold.total}s (node {cold.node}s, image {cold.image}s, loading "
                f"{workload.model.arch.weights_gib:.0f} GiB {cold.model}s), more than the {tolerance}s clients accept",
                fix="keep one replica warm (scaling.min_replicas: 1), load from a faster source (fsx), or accept "
                f"≥ {cold.total}s",
                suggestions=({f"{path}.scaling.min_replicas": 1},),
            )


def check_request_timeout(config: InferstackConfig) -> Iterator[Finding]:
    """Knative holds the first request of a cold start at most its largest request timeout (600 s): a longer cold
    start answers that request with an error."""
    plan = resolve(config)
    for path, workload in _workloads(config):
        if workload.deployment_mode is not DeploymentMode.KNATIVE or workload.scaling.min_replicas > 0:
            continue
        cold = cold_start(plan.workload(workload))
        if cold.total > KNATIVE_MAX_TIMEOUT_SECONDS:
            yield Finding(
                rule=REQUEST_TIMEOUT,
                path=f"{path}.scaling.min_replicas",
                message=f"a cold start takes ~{cold.total}s; Knative times the first request out after at most "
                f"{KNATIVE_MAX_TIMEOUT_SECONDS}s, so it fails (later ones succeed)",
                fix="keep one replica warm (min_replicas: 1), or raise max-revision-timeout-seconds in Knative's "
                "config-defaults",
                severity=Severity.WARNING,
            )


def check_sync_wait(config: InferstackConfig) -> Iterator[Finding]:
    """A Knative predictor cannot wait for the model-sync Job (no init containers without Knative's flag): it
    restarts until the model is in the bucket."""
    plan = resolve(config)
    for path, workload in _workloads(config):
        if workload.deployment_mode is DeploymentMode.KNATIVE and plan.workload(workload).sync:
            yield Finding(
                rule=SYNC_WAIT,
                path=f"{path}.sync_model",
                message="the predictor starts before the model-sync Job finished and restarts until it has",
                fix="sync the model first (sync_model: false once it is in the bucket), or use Standard mode",
                severity=Severity.WARNING,
            )


RULES = (
    Rule(id=SCALE_ZERO, title="Scale to zero only in Knative mode", check=check_scale_zero),
    Rule(id=KNATIVE, title="Knative mode has Knative Serving", check=check_knative, acknowledgeable=False),
    Rule(id=COLD_START, title="The cold start fits the stated tolerance", check=check_cold_start),
    Rule(id=REQUEST_TIMEOUT, title="The cold start fits Knative's request timeout", check=check_request_timeout),
    Rule(id=SYNC_WAIT, title="A Knative predictor cannot wait for the model sync", check=check_sync_wait),
)
