"""RayServeChart: the ``ray_serve`` kind — a RayService running Ray Serve LLM (:class:`~inferstack.constructs.
rayservice.RayServiceServer`): the Serve config built from the typed models (``LLMConfig`` per model, or the
prefill/decode pair over NIXL), checked against the pinned Ray release's config fields and vLLM's engine
arguments before it is rendered."""

from __future__ import annotations

from typing import Any

from inferstack.catalog.engine_flags import vllm_flags
from inferstack.catalog.ray import RAY_ACCELERATOR_TYPE, config_problems
from inferstack.catalog.versions import ENGINE_IMAGES, ENGINE_RAY_VERSIONS, ENGINE_VLLM_VERSIONS
from inferstack.charts.vllm import engine_args_for, engine_env_for
from inferstack.charts.workload import StorageRefs, WorkloadChart
from inferstack.config.engine import VllmEngineConfig
from inferstack.config.ray_serve import RayAutoscaling, RayServeWorkloadConfig
from inferstack.config.workloads import ModelConfig, ModelSourceType
from inferstack.constructs.model_source import ModelLoading
from inferstack.constructs.rayservice import RayServiceProps, RayServiceServer, RayWorkerGroupProps
from inferstack.constructs.vllm import SERVING_PRIORITY_CLASS
from inferstack.plan import ResolvedWorkload
from inferstack.plan.ray_serve import max_pods, ranks

BUILD_OPENAI_APP = "ray.serve.llm:build_openai_app"
BUILD_PD_OPENAI_APP = "ray.serve.llm:build_pd_openai_app"
#: libfabric settings for NIXL over EFA (../shared/facts/ray-serve-llm.md §3.3: the Dynamo EFA guide and the AWS Ray
#: LLM DLC set both).
EFA_ENV = {"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1"}
#: NIXL registers GPU memory for RDMA: the P/D recipes that work on EKS (Dynamo disagg-p5, llm-d AWS) add IPC_LOCK.
NIXL_CAPABILITIES = ("IPC_LOCK",)
#: The vLLM flag list engine_kwargs are checked against: the image's vLLM is >= 0.11 and unread (?), the nearest
#: vendored list is 0.19.0 — every typed option inferstack renders exists in both.
ENGINE_KWARGS_FLAGS = ENGINE_VLLM_VERSIONS["vllm-gpu"]


class RayServeConfigError(ValueError):
    """The rendered Serve config has keys the pinned Ray or vLLM release does not know."""


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


def detected_accelerator_type(resolved: ResolvedWorkload) -> str | None:
    """What Ray detects on the pool's GPUs (one type across the pool), else None (no constraint)."""
    types = {RAY_ACCELERATOR_TYPE.get(str(t.accelerator_model)) for t in resolved.pool.instances}
    return types.pop() if len(types) == 1 else None


class RayServeChart(WorkloadChart):
    """The ``ray_serve`` kind: the workload's storage plumbing plus its RayService."""

    server: RayServiceServer

    def serve(self, resolved: ResolvedWorkload, refs: StorageRefs) -> None:
        workload = resolved.config
        assert isinstance(workload, RayServeWorkloadConfig)
        image = resolved.image
        ray_version = ENGINE_RAY_VERSIONS["ray-llm"] if image == ENGINE_IMAGES["ray-llm"] else None
        detected = detected_accelerator_type(resolved)
        efa = any(role.pod.efa for role in resolved.roles.values())
        app = self._application(workload, detected)
        self._check(app, ray_version or ENGINE_RAY_VERSIONS["ray-llm"])
        env: dict[str, str] = {}
        for (_, model), loading in zip(workload.model_entries, self.loadings, strict=True):
            env |= engine_env_for(VllmEngineConfig(), model)
            env |= {e.name: e.value for e in loading.env if e.value is not None}
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
            groups.append(
                RayWorkerGroupProps(
                    name=name,
                    requests=pod.requests,
                    limits=pod.limits,
                    node_selector=pod.node_selector,
                    tolerations=sorted(pod.tolerations),
                    min_replicas=workload.workers.min_pods,
                    max_replicas=max(workload.workers.min_pods, max_pods(workload, name)),
                    ray_resources=ray_resources,
                    env=EFA_ENV if efa else {},
                    add_capabilities=NIXL_CAPABILITIES if workload.prefill_decode is not None and efa else (),
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
                ray_version=ray_version or ENGINE_RAY_VERSIONS["ray-llm"],
                service_account=resolved.server.service_account,
                serve_config={"applications": [app]},
                head_requests=head.requests,
                head_limits=head.limits,
                head_node_selector=head.node_selector,
                head_tolerations=sorted(head.tolerations),
                workers=groups,
                env=env,
                env_from_secrets=secrets,
                volumes=[v for loading in self.loadings for v in loading.volumes],
                mounts=[m for loading in self.loadings for m in loading.mounts],
                init_containers=init,
                upgrade_strategy=workload.upgrade_strategy.value,
                idle_timeout_seconds=workload.workers.idle_timeout_seconds,
                monitoring=workload.monitoring,
                priority_class=SERVING_PRIORITY_CLASS,
            ),
        )

    def _application(self, workload: RayServeWorkloadConfig, detected: str | None) -> dict[str, Any]:
        app: dict[str, Any] = {"name": workload.name, "route_prefix": workload.route_prefix}
        pd = workload.prefill_decode
        if pd is None:
            app["import_path"] = BUILD_OPENAI_APP
            app["args"] = {
                "llm_configs": [
                    llm_config(
                        m.model,
                        m.engine,
                        m.autoscaling,
                        loading,
                        max_ongoing_requests=m.max_ongoing_requests,
                        accelerator_type=m.accelerator_type or detected,
                    )
                    for m, loading in zip(workload.models, self.loadings, strict=True)
                ]
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
            # Every bundle asks for the side's custom resource: its replicas land on its own worker group.
            bundles = [{"GPU": 1, side: 1} for _ in range(ranks(role.engine))]
            sides[f"{side}_config"] = llm_config(
                model.model,
                role.engine,
                role.autoscaling,
                self.loading,
                max_ongoing_requests=model.max_ongoing_requests,
                accelerator_type=model.accelerator_type or detected,
                extra_kwargs=transfer,
                placement={"bundles": bundles, "strategy": "PACK"},
            )
        app["import_path"] = BUILD_PD_OPENAI_APP
        app["args"] = sides
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
