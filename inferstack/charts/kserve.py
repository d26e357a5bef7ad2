"""KServeChart: the ``kserve`` kind — the workload's storage plumbing plus an InferenceService
(:class:`~inferstack.constructs.kserve.KServeService`): the model claim as a ``pvc://`` storage URI (or a Hugging Face
download), the typed vLLM settings as server arguments, the plan's GPUs and placement, the scaling of its mode."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdk8s_plus_36 import k8s

from inferstack.charts.vllm import engine_args_for, engine_env_for
from inferstack.charts.workload import StorageRefs, WorkloadChart, fsx_model_path, pod_placement
from inferstack.config.kserve import DeploymentMode, KServeWorkloadConfig, ScaleMetric
from inferstack.config.workloads import ModelSourceType
from inferstack.constructs.kserve import KServeService, KServeServiceProps
from inferstack.constructs.pod import template_json
from inferstack.constructs.vllm import SERVING_PRIORITY_CLASS
from inferstack.plan import ResolvedWorkload
from inferstack.plan.kserve import IMAGE_PULL_SECONDS, NODE_START_SECONDS, cold_start

#: Knative's default and largest request timeouts (config-defaults, Serving 1.21), seconds.
KNATIVE_TIMEOUT_SECONDS, KNATIVE_MAX_TIMEOUT_SECONDS = 300, 600
#: Where the server downloads an ``hf`` model (the image's user has no other writable home of ours).
HF_HOME = "/tmp/huggingface"  # noqa: S108 - the container's own /tmp


def storage_uri(workload: KServeWorkloadConfig, refs: StorageRefs, claim: str | None) -> str | None:
    """``pvc://<claim>[/<path>]`` of a mounted source (the claim is the model prefix for ``s3_mount`` and the
    model's directory for ``efs``; the model's directory inside the file system for ``fsx``); None for ``hf`` (the
    server downloads it)."""
    source = workload.model.source.type
    if source in (ModelSourceType.S3_MOUNT, ModelSourceType.EFS):
        return f"pvc://{claim}"
    if source is ModelSourceType.FSX:
        return f"pvc://{claim}/{fsx_model_path(workload.model, refs).lstrip('/')}"
    return None


#: What the ``kserve-huggingfaceserver`` runtime limits (cpu "1", memory 2Gi; kserve-runtime-configs v0.20.0
#: ``files/runtimes/clusterservingruntimes-patch.yaml:402-408``). KServe merges our container over the runtime's
#: key by key (``pkg/utils/container_merge.go:32-63``), so any of these we do not limit keeps the runtime's value.
RUNTIME_LIMITED = ("cpu", "memory")


def predictor_limits(requests: Mapping[str, str], limits: Mapping[str, str]) -> dict[str, str]:
    """``limits`` with every :data:`RUNTIME_LIMITED` resource we request and do not limit set to the request: the
    runtime's 1 CPU limit would otherwise stay under our 7-CPU request, and the API server refuses the pod."""
    return {**{r: requests[r] for r in RUNTIME_LIMITED if r in requests and r not in limits}, **limits}


class KServeChart(WorkloadChart):
    """The ``kserve`` kind: storage plumbing, then the InferenceService and its PodMonitor."""

    server: KServeService

    def serve(self, resolved: ResolvedWorkload, refs: StorageRefs) -> None:
        workload = resolved.config
        assert isinstance(workload, KServeWorkloadConfig)
        loading = self.loading
        assert loading is not None
        pod, model = resolved.server.pod, workload.model
        claims = [v.persistent_volume_claim for v in loading.volumes if v.persistent_volume_claim is not None]
        claim = claims[0].claim_name if claims else None
        served = model.served_name or workload.name
        args = ["--backend=vllm", f"--model_name={served}"]
        env: list[dict[str, Any]] = [{"name": k, "value": v} for k, v in engine_env_for(workload.engine, model).items()]
        if model.source.type is ModelSourceType.HF:
            args += [f"--model_id={model.id}", f"--model_revision={model.revision}"]
            env.append({"name": "HF_HOME", "value": HF_HOME})
            if model.hf_token_secret is not None:
                ref = {"name": model.hf_token_secret.name, "key": model.hf_token_secret.key}
                env.append({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": ref}})
        args += engine_args_for(workload.engine, model).render(port=False)
        scaling = workload.scaling
        knative = workload.deployment_mode is DeploymentMode.KNATIVE
        metric = scaling.metric or (ScaleMetric.CONCURRENCY if knative else None)
        cold = cold_start(resolved)
        timeout = None
        if knative and scaling.min_replicas == 0 and cold.total > KNATIVE_TIMEOUT_SECONDS:
            timeout = min(KNATIVE_MAX_TIMEOUT_SECONDS, cold.total)  # the first request waits for the cold start
        self.server = KServeService(
            self,
            "kserve",
            KServeServiceProps(
                name=workload.name,
                namespace=workload.namespace,
                mode=workload.deployment_mode.value,
                service_account=resolved.server.service_account,
                storage_uri=storage_uri(workload, refs, claim),
                args=args,
                env=env,
                requests=pod.requests,
                limits=predictor_limits(pod.requests, pod.limits),
                placement=pod_placement(pod, priority_class=SERVING_PRIORITY_CLASS),
                min_replicas=scaling.min_replicas,
                max_replicas=scaling.max_replicas,
                scale_metric=metric.value if metric else None,
                scale_target=scaling.target,
                startup_seconds=pod.startup_seconds,
                progress_deadline_seconds=pod.startup_seconds + NODE_START_SECONDS + IMAGE_PULL_SECONDS,
                request_timeout_seconds=timeout,
                monitoring=workload.monitoring,
                **({} if knative else self._wait_for_sync(resolved, refs)),
            ),
        )

    def _wait_for_sync(self, resolved: ResolvedWorkload, refs: StorageRefs) -> dict[str, Any]:
        """Standard mode: the init container that holds the server until the model-sync Job finished, with the
        volumes it mounts (the model claim, a /tmp). Knative admits neither without its podspec-init-containers and
        -persistent-volume-claim flags (rule KSERVE-SYNC-WAIT warns)."""
        init = self.wait_for_model(resolved, refs)
        if not init:
            return {}
        volumes = [*self.loadings[0].volumes, k8s.Volume(name="tmp", empty_dir=k8s.EmptyDirVolumeSource())]
        spec = template_json(k8s.PodTemplateSpec(spec=k8s.PodSpec(containers=init, volumes=volumes)))["spec"]
        return {"init_containers": spec["containers"], "volumes": spec["volumes"]}
