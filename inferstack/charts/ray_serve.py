"""RayServeChart: the ``ray_serve`` kind — a RayService running Ray Serve LLM (:class:`~inferstack.constructs.
rayservice.RayServiceServer`): the Serve config built from the typed models (``LLMConfig`` per model, or the
prefill/decode pair over NIXL), checked against the pinned Ray release's config fields and vLLM's engine
arguments before it is rendered."""

from __future__ import annotations

from typing import Any

from inferstack.catalog.engine_flags import vllm_flags
from inferstack.catalog.images import image_facts
from inferstack.catalog.ray import config_problems
from inferstack.catalog.versions import ENGINE_RAY_VERSIONS, ENGINE_VLLM_VERSIONS
from inferstack.charts.vllm import engine_args_for, engine_env_for
from inferstack.charts.workload import StorageRefs, WorkloadChart, pod_placement
from inferstack.config.engine import VllmEngineConfig
from inferstack.config.ray_serve import RayAutoscaling, RayServeWorkloadConfig
from inferstack.config.workloads import ModelConfig, ModelSourceType
from inferstack.constructs.model_source import ModelLoading
from inferstack.constructs.rayservice import RAY_UID, RayServiceProps, RayServiceServer, RayWorkerGroupProps
from inferstack.constructs.validation import PropError
from inferstack.constructs.vllm import SERVING_PRIORITY_CLASS
from inferstack.plan import ResolvedWorkload
from inferstack.plan.ray_serve import gpus_per_pod, max_pods, ranks, spans_pods

BUILD_OPENAI_APP = "ray.serve.llm:build_openai_app"
BUILD_PD_OPENAI_APP = "ray.serve.llm:build_pd_openai_app"
#: libfabric settings for NIXL over EFA (../shared/facts/ray-serve-llm.md §3.3: the Dynamo EFA guide and the AWS Ray
#: LLM DLC set both).
EFA_ENV = {"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1"}
# No IPC_LOCK for NIXL: the Dynamo/llm-d recipes that add it run as root; the ray-llm image runs as uid 1000, whose
# processes drop an added capability at exec (no ambient capabilities in Kubernetes), so it would change nothing.
# libfabric's memory registration then depends on the node's memlock limit (unlimited on the EKS AMIs' containerd,
# not verified offline: run `ulimit -l` in a worker pod).
#: Serve's ingress (and the P/D proxy) take 1 CPU by default and the head has none, so they would hold a GPU pod:
#: give them none, so they run on the head (and a model at min_replicas 0 releases its GPU nodes).
CPU_FREE_ACTOR = {"ray_actor_options": {"num_cpus": 0}}
#: The vLLM flag list engine_kwargs are checked against: the pinned Ray image's vLLM (Ray 2.58.0 requires
#: vllm[audio]==0.26.0), whose list is vendored.
ENGINE_KWARGS_FLAGS = ENGINE_VLLM_VERSIONS["ray-llm"]


def placement(engine: VllmEngineConfig, pod: int, resource: str | None = None) -> dict[str, Any]:
    """A replica's placement group: one ``{GPU: 1}`` bundle per rank (and ``resource``, a P/D side's custom resource,
    so its replicas land on its own worker group). Kept inside one worker pod (``STRICT_PACK``) when a pod holds
    the replica — ``PACK`` would spill it across pods once GPUs fragment, its tensor-parallel traffic then crossing
    the pod network; ``PACK`` when the replica spans pods (``workers.gpus_per_pod`` below its TP × PP): Ray fills
    a node, then the next (Serve LLM's default; vLLM's Ray executor orders its workers by node, so each TP group
    of consecutive ranks lands on one pod and the pipeline stages cross pods)."""
    bundle: dict[str, int] = {"GPU": 1} | ({resource: 1} if resource else {})
    strategy = "PACK" if spans_pods(engine, pod) else "STRICT_PACK"
    return {"bundles": [dict(bundle) for _ in range(ranks(engine))], "strategy": strategy}


class RayServeConfigError(PropError):
    """The rendered Serve config has keys the pinned Ray or vLLM release does not know (a PropError, so ``check``
    and synth report it as one line, not a traceback)."""


def engine_kwargs(engine: VllmEngineConfig, model: ModelConfig, loading: ModelLoading) -> dict[str, Any]:
    """The typed vLLM settings as ``engine_kwargs`` (vLLM AsyncEngineArgs / FrontendArgs names), with the model
    source's loader settings (Run:ai streamer for an ``s3`` source)."""
    args = engine_args_for(engine, model)
    kwargs = args.kwargs()
    if args.tool_call_parser:
        kwargs |= {"enable_auto_tool_choice": True, "tool_call_parser": args.tool_call_parser}
    if model.source.type is ModelSourceType.S3:
        kwargs |= {
            "load_format": "runai_streamer",
            "model_loader_extra_config": {"concurrency": model.source.streamer_concurrency},
        }
    if model.source.type is ModelSourceType.HF:
        kwargs["revision"] = model.revision
    return kwargs


def llm_config(
    model: ModelConfig,
    engine: VllmEngineConfig,
    scaling: RayAutoscaling,
    loading: ModelLoading,
    *,
    max_ongoing_requests: int,
    accelerator_type: str | None,
    extra_kwargs: dict[str, Any] | None = None,
    placement: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One ``LLMConfig``: ``model_id`` (the served name), the source Ray loads (a mounted path, the bucket URI the
    Run:ai streamer reads, or the Hugging Face id), engine kwargs, accelerator type and deployment autoscaling."""
    config: dict[str, Any] = {
        "model_loading_config": {"model_id": model.name, "model_source": loading.model},
        "engine_kwargs": {**engine_kwargs(engine, model, loading), **(extra_kwargs or {})},
        "deployment_config": {
            "autoscaling_config": {
                "min_replicas": scaling.min_replicas,
                "max_replicas": scaling.max_replicas,
                "target_ongoing_requests": scaling.target_ongoing_requests,
            },
            "max_ongoing_requests": max_ongoing_requests,
        },
    }
    if accelerator_type:
        config["accelerator_type"] = accelerator_type
    if placement:
        config["placement_group_config"] = placement
    return config


#: HOME of the Ray containers for images whose own HOME uid 1000 cannot write (an emptyDir).
RAY_HOME = "/home/ray"


class RayServeChart(WorkloadChart):
    """The ``ray_serve`` kind: the workload's storage plumbing plus its RayService."""

    server: RayServiceServer

    def serve(self, resolved: ResolvedWorkload, refs: StorageRefs) -> None:
        workload = resolved.config
        assert isinstance(workload, RayServeWorkloadConfig)
        image = resolved.image
        facts = image_facts(image)
        ray_version = workload.ray_version or (facts.engine_version if facts and facts.engine == "ray" else None)
        ray_version = ray_version or ENGINE_RAY_VERSIONS["ray-llm"]
        # An accelerator_type adds "accelerator_type:<X>" to every placement bundle; the autoscaler knows a group's
        # resources from its spec only (Ray 2.52 autoscaling_config.py), so each group declares the types asked for
        # — or no replica could scale a group up from zero (kuberay#863). Unset, the pool's nodeSelector decides.
        wanted = sorted({m.accelerator_type for m in workload.models if m.accelerator_type})
        efa = any(role.pod.efa for role in resolved.roles.values())
        app = self._application(workload)
        self._check(app, ray_version)
        env: dict[str, str] = {}
        for loading in self.loadings:
            env |= {e.name: e.value for e in loading.env if e.value is not None}
        if all(model.source.type is not ModelSourceType.HF for _, model in workload.model_entries):
            env |= engine_env_for(VllmEngineConfig(), workload.models[0].model)  # offline hub: nothing downloads
        secrets = {}
        tokens = [m.hf_token_secret for _, m in workload.model_entries if m.hf_token_secret]
        if tokens:
            secrets["HF_TOKEN"] = (tokens[0].name, tokens[0].key)
        groups = []
        for name, role in resolved.roles.items():
            if name == "head":
                continue
            pod = role.pod
            ray_resources = {name: str(pod.accelerators)} if workload.prefill_decode is not None else {}
            ray_resources |= {f"accelerator_type:{t}": "1" for t in wanted}
            groups.append(
                RayWorkerGroupProps(
                    name=name,
                    requests=pod.requests,
                    limits=pod.limits,
                    placement=pod_placement(pod, priority_class=SERVING_PRIORITY_CLASS),
                    min_replicas=workload.workers.min_pods,
                    max_replicas=max(workload.workers.min_pods, max_pods(workload, name)),
                    ray_resources=ray_resources,
                    env=EFA_ENV if efa else {},
                    shm_gib=workload.resources.shm_gib,
                )
            )
        head = resolved.roles["head"].pod
        init = [c for index in range(len(resolved.models)) for c in self.wait_for_model(resolved, refs, index)]
        self.server = RayServiceServer(
            self,
            "server",
            RayServiceProps(
                name=workload.name,
                namespace=workload.namespace,
                image=image,
                ray_version=ray_version,
                # an image that runs as another user (the AWS DLC: root, HOME /root) gets a HOME uid 1000 can write
                home=RAY_HOME if facts is not None and facts.uid != RAY_UID else None,
                service_account=resolved.server.service_account,
                serve_config={"applications": [app]},
                head_requests=head.requests,
                head_limits=head.limits,
                head_placement=pod_placement(head, priority_class=SERVING_PRIORITY_CLASS),
                workers=groups,
                env=env,
                env_from_secrets=secrets,
                mounts=[m for loading in self.loadings for m in loading.mounts],
                init_containers=init,
                upgrade_strategy=workload.upgrade_strategy.value,
                idle_timeout_seconds=workload.workers.idle_timeout_seconds,
                monitoring=workload.monitoring,
            ),
        )

    def _application(self, workload: RayServeWorkloadConfig) -> dict[str, Any]:
        app: dict[str, Any] = {"name": workload.name, "route_prefix": workload.route_prefix}
        pd = workload.prefill_decode
        if pd is None:
            app["import_path"] = BUILD_OPENAI_APP
            app["args"] = {
                "ingress_deployment_config": CPU_FREE_ACTOR,
                "llm_configs": [
                    llm_config(
                        m.model,
                        m.engine,
                        m.autoscaling,
                        loading,
                        max_ongoing_requests=m.max_ongoing_requests,
                        accelerator_type=m.accelerator_type,
                        placement=placement(m.engine, gpus_per_pod(workload)),
                    )
                    for m, loading in zip(workload.models, self.loadings, strict=True)
                ],
            }
            return app
        (model,) = workload.models
        transfer = {
            "kv_transfer_config": {
                "kv_connector": "NixlConnector",
                "kv_role": "kv_both",
                "kv_connector_extra_config": {"backends": [b.value for b in pd.kv_backends]},
            }
        }
        sides = {}
        for side, role in (("prefill", pd.prefill), ("decode", pd.decode)):
            sides[f"{side}_config"] = llm_config(
                model.model,
                role.engine,
                role.autoscaling,
                self.loading,
                max_ongoing_requests=model.max_ongoing_requests,
                accelerator_type=model.accelerator_type,
                extra_kwargs=transfer,
                placement=placement(role.engine, gpus_per_pod(workload), resource=side),
            )
        app["import_path"] = BUILD_PD_OPENAI_APP
        app["args"] = {**sides, "proxy_deployment_config": CPU_FREE_ACTOR, "ingress_deployment_config": CPU_FREE_ACTOR}
        return app

    @staticmethod
    def _check(app: dict[str, Any], ray_version: str) -> None:
        """Ray's LLM config classes forbid unknown keys (DeploymentConfig drops them): check ours against the pinned
        Ray release, and every engine kwarg against vLLM's engine arguments."""
        args = app["args"]
        model = "PDServingArgs" if "prefill_config" in args else "LLMServingArgs"
        problems = config_problems(ray_version, model, args, "args")
        configs = args.get("llm_configs") or [args["prefill_config"], args["decode_config"]]
        flags = vllm_flags(ENGINE_KWARGS_FLAGS)
        for config in configs:
            for key in config["engine_kwargs"]:
                if not flags.knows("--" + key.replace("_", "-")):
                    problems.append(f"engine_kwargs.{key}: not an engine argument of vLLM {ENGINE_KWARGS_FLAGS}")
        if problems:
            raise RayServeConfigError("the Ray Serve config is not valid: " + "; ".join(problems))


__all__ = ["RayServeChart", "RayServeConfigError"]
