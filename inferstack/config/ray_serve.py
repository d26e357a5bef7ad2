"""Kind ``ray_serve``: Ray Serve LLM on a KubeRay RayService — one or more models as one OpenAI-compatible app
(``ray.serve.llm:build_openai_app``), or one model with prefill and decode disaggregated
(``build_pd_openai_app``, KV cache moved by NIXL, over EFA on EFA pools). The Ray head runs on the CPU system nodes;
GPU worker pods on the workload's pool scale with the Ray autoscaler."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.ray import ray_versions
from inferstack.config.base import StrictModel
from inferstack.config.engine import VllmEngineConfig
from inferstack.config.workloads import ModelConfig, ModelSourceType, WorkloadBase

_IMAGE = re.compile(r"^[a-z0-9.-]+(:[0-9]+)?/[a-z0-9._/-]+(:[A-Za-z0-9._-]+|@sha256:[a-f0-9]{64})$")
#: A RayService name is at most 47 characters: KubeRay names its RayCluster ``<name>-<5 random>`` within 53
#: (ray-operator/controllers/ray/utils/constant.go MaxRayServiceNameLength, KubeRay v1.7.0).
MAX_NAME_LENGTH = 47


class RayAutoscaling(StrictModel):
    """Ray Serve deployment autoscaling of one model (``deployment_config.autoscaling_config``)."""

    min_replicas: int = Field(default=1, ge=0)
    """Replicas kept running. Default 1 (0 scales the model to zero; its first request waits for a model load)."""
    max_replicas: int = Field(default=1, ge=1)
    """Default 1."""
    target_ongoing_requests: int = Field(default=64, ge=1)
    """Requests in flight per replica the autoscaler aims at. Default 64 (KubeRay's LLM sample)."""

    @model_validator(mode="after")
    def _range(self) -> RayAutoscaling:
        if self.min_replicas > self.max_replicas:
            raise PydanticCustomError("replicas", "min_replicas must be ≤ max_replicas", {"field": "min_replicas"})
        return self


def _no_extra_args(engine: VllmEngineConfig) -> VllmEngineConfig:
    """What a Ray model's engine cannot have: a command line, its own image (the RayService has one), LMCache (not
    wired into Ray's engine_kwargs)."""
    if engine.extra_args:
        raise PydanticCustomError(
            "ray_extra_args",
            "Ray Serve LLM takes engine_kwargs, not a command line — use the typed engine fields",
            {"field": "extra_args"},
        )
    for field, why in (("image", "the workload's image (and ray_version) runs every model"), ("lmcache", "")):
        if getattr(engine, field) is not None:
            raise PydanticCustomError(
                "ray_engine_field",
                "not available for ray_serve models{why} — remove it",
                {
                    "why": f": {why}" if why else " (inferstack does not wire LMCache into Ray Serve LLM)",
                    "field": field,
                },
            )
    return engine


class RayModel(StrictModel):
    """One model of the Serve LLM app (one ``LLMConfig``)."""

    model: ModelConfig
    """The model (its ``served_name`` is the ``model_id`` clients send) and where its weights come from."""
    engine: VllmEngineConfig = VllmEngineConfig()
    """vLLM settings, rendered as ``engine_kwargs``. ``extra_args`` are not available (no command line)."""
    autoscaling: RayAutoscaling = RayAutoscaling()
    """Replicas of this model. Default: exactly one."""
    max_ongoing_requests: int = Field(default=128, ge=1)
    """Requests one replica takes at once before Serve queues (``deployment_config``). Default 128."""
    accelerator_type: str | None = None
    """The GPU type Ray must place replicas on (Ray's names: ``L40S``, ``H100``, ``A100``…; the worker groups then
    declare it, so the autoscaler can start them). Default: none — the pool's nodes decide."""

    @field_validator("engine")
    @classmethod
    def _engine(cls, value: VllmEngineConfig) -> VllmEngineConfig:
        return _no_extra_args(value)


class PrefillDecodeRole(StrictModel):
    """The prefill or the decode side of a disaggregated model."""

    engine: VllmEngineConfig = VllmEngineConfig()
    """vLLM settings of this side (TP, memory, lengths). ``kv_transfer_config`` is set by inferstack."""
    autoscaling: RayAutoscaling = RayAutoscaling()
    """Replicas of this side. Default: exactly one."""

    @field_validator("engine")
    @classmethod
    def _engine(cls, value: VllmEngineConfig) -> VllmEngineConfig:
        return _no_extra_args(value)


class NixlBackend(StrEnum):
    """NIXL transport plugins (vLLM NixlConnector ``kv_connector_extra_config.backends``)."""

    LIBFABRIC = "LIBFABRIC"
    """libfabric: the only one that drives EFA. Default."""
    UCX = "UCX"
    """UCX: vLLM's default; on EFA it falls back to TCP without an error."""


class PrefillDecodeConfig(StrictModel):
    """Prefill/decode disaggregation: separate prefill and decode replicas of the one model, on separate GPU
    nodes of one zone, the KV cache moved by NIXL."""

    prefill: PrefillDecodeRole = PrefillDecodeRole()
    """The prefill side: processes prompts, hands their KV cache to decode. Default: TP 1, one replica."""
    decode: PrefillDecodeRole = PrefillDecodeRole()
    """The decode side: generates tokens from the prefilled KV cache. Default: TP 1, one replica."""
    kv_backends: tuple[NixlBackend, ...] = (NixlBackend.LIBFABRIC,)
    """NIXL backends. Default ``[LIBFABRIC]`` (EFA)."""


class RayHeadConfig(StrictModel):
    """The Ray head: GCS and dashboard only (``num-cpus: 0``: no replicas run on it)."""

    pool: str | None = None
    """Pool of the head. Default: the CPU system nodes. An accelerated pool needs ``allow_accelerated_pool``."""
    allow_accelerated_pool: bool = False
    """Let the head run on an accelerated pool (development only: it would hold a GPU node). Default off."""
    cpu: float = Field(default=2, gt=0)
    """vCPUs of the head pod. Default 2."""
    memory_gib: float = Field(default=8, gt=0)
    """Memory of the head pod, GiB (requests = limits). Default 8."""


class RayWorkersConfig(StrictModel):
    """The GPU worker pods Ray places replicas on (one worker group per role)."""

    gpus_per_pod: int | None = Field(default=None, ge=1)
    """GPUs per worker pod. Default: the largest replica's TP × PP (one replica per pod). Below a replica's TP × PP,
    the replica spans TP × PP / ``gpus_per_pod`` pods: its pipeline stages spread over them (Ray places its
    placement group with ``PACK``, which spills to the next node), its tensor-parallel ranks stay in one pod — so
    each such engine's TP divides ``gpus_per_pod``, ``gpus_per_pod`` divides its TP × PP, and every model of the
    worker group has the same TP × PP (pods of whole stages, none left half-used)."""
    min_pods: int = Field(default=0, ge=0)
    """Worker pods kept even when idle. Default 0 (the autoscaler adds them for the replicas)."""
    max_pods: int | None = Field(default=None, ge=1)
    """Most worker pods per group. Default: enough for every model at ``max_replicas``."""
    idle_timeout_seconds: int = Field(default=600, ge=0)
    """How long an idle worker pod stays before the autoscaler removes it. Default 600."""


class UpgradeStrategy(StrEnum):
    """What KubeRay does when ``rayClusterConfig`` changes (image, resources, env…; serve config changes apply in
    place)."""

    NEW_CLUSTER = "NewCluster"
    """Blue/green: a second full RayCluster, then switch — zero downtime, but briefly twice the GPUs. Default."""
    NONE = "None"
    """Never a new cluster: cluster changes are not rolled out (change the serve config only, or recreate). A
    mounted model's new revision or source is a cluster change (a new claim): the running cluster keeps the old
    claim, which the apply removes, so its new workers stay Pending until you recreate it."""


class RayServeWorkloadConfig(WorkloadBase):
    """Models served by Ray Serve LLM on a KubeRay RayService."""

    kind: Literal["ray_serve"] = "ray_serve"  # type: ignore[assignment]
    """``ray_serve``: a RayService (Ray head on CPU system nodes, GPU worker groups, Ray Serve LLM)."""
    models: tuple[RayModel, ...] = Field(min_length=1)
    """The models of the app (each ``model.served_name`` unique). With ``prefill_decode``: exactly one."""
    prefill_decode: PrefillDecodeConfig | None = None
    """Disaggregate prefill and decode (``build_pd_openai_app``). Default off."""
    route_prefix: str = Field(default="/", pattern=r"^/[A-Za-z0-9._/-]*$")
    """Where the app is served. Default ``/`` (``/v1/chat/completions``…)."""
    head: RayHeadConfig = RayHeadConfig()
    """The Ray head. Default: 2 vCPU / 8 GiB on the system nodes."""
    workers: RayWorkersConfig = RayWorkersConfig()
    """The GPU worker pods. Default: one replica's GPUs per pod, 0 to enough for every ``max_replicas``."""
    upgrade_strategy: UpgradeStrategy = UpgradeStrategy.NEW_CLUSTER
    """Default ``NewCluster`` (zero downtime, briefly doubles the GPUs on cluster changes)."""
    image: str | None = None
    """Ray image, pinned. Default: the catalog's ``rayproject/ray-llm`` (Ray 2.58.0)."""
    ray_version: str | None = None
    """The Ray release in ``image`` (KubeRay's ``rayVersion``; the Serve config is checked against its fields).
    Required with ``image``; one of the vendored releases."""

    @property
    def model_entries(self) -> tuple[tuple[str, ModelConfig], ...]:
        return tuple((f"models[{i}].model", m.model) for i, m in enumerate(self.models))

    @field_validator("name")
    @classmethod
    def _name_length(cls, value: str) -> str:
        if len(value) > MAX_NAME_LENGTH:
            raise PydanticCustomError(
                "rayservice_name",
                "{length} characters — a RayService name has at most {max} (KubeRay adds a 6-character suffix "
                "to its RayCluster, a DNS label of ≤ 53)",
                {"length": len(value), "max": MAX_NAME_LENGTH},
            )
        return value

    @field_validator("image")
    @classmethod
    def _image(cls, value: str | None) -> str | None:
        if value is not None and not _IMAGE.match(value):
            raise PydanticCustomError("image", "not a pinned image reference — registry/repo:tag or @sha256:digest")
        return value

    @model_validator(mode="after")
    def _shape(self) -> RayServeWorkloadConfig:
        names = [m.model.name for m in self.models]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise PydanticCustomError(
                "ray_model_ids",
                "{names} appear twice — model ids (served names) are unique in one app; set model.served_name",
                {"names": ", ".join(duplicates), "field": "models"},
            )
        if self.prefill_decode is not None and len(self.models) != 1:
            raise PydanticCustomError(
                "pd_one_model",
                "prefill_decode serves one model (build_pd_openai_app) — list exactly one, or serve the others in "
                "another ray_serve workload",
                {"field": "models"},
            )
        self._sources()
        self._image_version()
        self._pd_pipeline()
        if self.workers.gpus_per_pod is not None:
            self._spanning_replicas(self.workers.gpus_per_pod)
        if not self.probes.empty:
            raise PydanticCustomError(
                "ray_probes",
                "KubeRay probes Ray pods itself (ray health-check); a ray_serve workload renders no probe to tune — "
                "remove it",
                {"field": "probes"},
            )
        if self.startup_timeout_seconds is not None:
            raise PydanticCustomError(
                "ray_startup",
                "KubeRay probes Ray pods itself; a ray_serve workload has no startup probe of inferstack's — remove it",
                {"field": "startup_timeout_seconds"},
            )
        if self.autoscaling is not None:
            raise PydanticCustomError(
                "ray_autoscaling",
                "a ray_serve workload scales each model (models[].autoscaling) and its worker pods (workers) — "
                "remove autoscaling",
                {"field": "autoscaling"},
            )
        if self.replicas != 1:
            raise PydanticCustomError(
                "ray_replicas",
                "a ray_serve workload is one RayService — set models[].autoscaling instead of replicas",
                {"field": "replicas"},
            )
        return self

    @property
    def engines(self) -> list[VllmEngineConfig]:
        """Every engine of the app: each model's, or the prefill and decode sides."""
        if self.prefill_decode is not None:
            return [self.prefill_decode.prefill.engine, self.prefill_decode.decode.engine]
        return [m.engine for m in self.models]

    @property
    def pod_gpus(self) -> int:
        """GPUs of one worker pod: ``workers.gpus_per_pod``, else the largest replica's TP × PP."""
        largest = max(e.tensor_parallel_size * e.pipeline_parallel_size for e in self.engines)
        return self.workers.gpus_per_pod or largest

    def replica_pods(self, engine: VllmEngineConfig) -> int:
        """Worker pods one replica of ``engine`` spans: TP × PP / :attr:`pod_gpus` when the replica is larger than a
        pod (``workers.gpus_per_pod``), else 1."""
        replica = engine.tensor_parallel_size * engine.pipeline_parallel_size
        return replica // self.pod_gpus if replica > self.pod_gpus else 1

    def _sources(self) -> None:
        """Sources one Ray pod can load together: mounted (``s3_mount``, ``fsx``, ``efs``), ``image``, at most one
        ``hf`` download, one Hugging Face token."""
        for index, served in enumerate(self.models):
            if served.model.source.type is ModelSourceType.S3:
                raise PydanticCustomError(
                    "ray_s3",
                    "s3 streams with the Run:ai streamer, which the ray-llm image does not carry (ray[llm] 2.58 "
                    "requires vllm[audio], without the runai extra) — use s3_mount (Mountpoint), fsx or efs",
                    {"field": f"models[{index}].model.source.type"},
                )
        downloads = [i for i, m in enumerate(self.models) if m.model.source.type is ModelSourceType.HF]
        if len(downloads) > 1:
            raise PydanticCustomError(
                "ray_hf",
                "one Ray pod has one Hugging Face cache (HF_HOME): at most one model downloads from hf — load the "
                "others from the bucket (s3_mount)",
                {"field": f"models[{downloads[1]}].model.source.type"},
            )
        tokens = {m.model.hf_token_secret for m in self.models if m.model.hf_token_secret is not None}
        if len(tokens) > 1:
            raise PydanticCustomError(
                "ray_tokens",
                "the models name different Hugging Face token Secrets; a Ray pod has one HF_TOKEN — use one Secret",
                {"field": "models"},
            )

    def _pd_pipeline(self) -> None:
        """Prefill/decode without pipeline parallelism: the KV transfer (NixlConnector, ``kv_both``) is vLLM 0.26.0's
        pull mode, whose PP support is not there — prefill sends its ``tp_size`` and no ``pp_size``
        (``nixl/pull_scheduler.py:277``), PP > 1 being the push mode's (``nixl/base_worker.py:425-440``); decode
        would reach only stage 0's agents."""
        if self.prefill_decode is None:
            return
        for side in ("prefill", "decode"):
            engine = getattr(self.prefill_decode, side).engine
            if engine.pipeline_parallel_size > 1:
                raise PydanticCustomError(
                    "ray_pd_pipeline",
                    "{stages} pipeline stages on the {side} side: NixlConnector's pull mode (vLLM 0.26.0) moves the "
                    "KV cache of one pipeline stage only — use tensor parallelism (pipeline_parallel_size 1)",
                    {
                        "stages": engine.pipeline_parallel_size,
                        "side": side,
                        "field": f"prefill_decode.{side}.engine.pipeline_parallel_size",
                    },
                )

    def _spanning_replicas(self, pod: int) -> None:
        """Replicas larger than a worker pod span whole pods of whole pipeline stages (see ``gpus_per_pod``)."""
        for path, engine in self._engine_paths():
            tp, stages = engine.tensor_parallel_size, engine.pipeline_parallel_size
            if tp * stages <= pod:
                continue
            if tp > pod or pod % tp:
                raise PydanticCustomError(
                    "ray_replica_pod",
                    "{gpus} GPUs per worker pod split a tensor-parallel group of {tp} across pods (its all-reduce of "
                    "every layer would cross the pod network) — keep TP inside a pod: gpus_per_pod a multiple of "
                    "{tp}, and span pods with pipeline_parallel_size",
                    {"gpus": pod, "tp": tp, "field": "workers.gpus_per_pod"},
                )
            if (tp * stages) % pod:
                raise PydanticCustomError(
                    "ray_replica_pod",
                    "{gpus} GPUs per worker pod do not divide a replica of {ranks} ranks ({where}): its last pod "
                    "would be part-used — use a gpus_per_pod that divides {ranks} (e.g. {tp} × a divisor of "
                    "{stages})",
                    {
                        "gpus": pod,
                        "ranks": tp * stages,
                        "where": path,
                        "tp": tp,
                        "stages": stages,
                        "field": "workers.gpus_per_pod",
                    },
                )
        largest = max(e.tensor_parallel_size * e.pipeline_parallel_size for _, e in self._engine_paths())
        pods = -(-largest // pod)
        if self.workers.max_pods is not None and self.workers.max_pods < pods:
            raise PydanticCustomError(
                "ray_max_pods",
                "{max} worker pods cannot hold one replica of {ranks} ranks at {gpus} GPUs per pod: its placement "
                "group would stay pending — at least {pods}",
                {
                    "max": self.workers.max_pods,
                    "ranks": largest,
                    "gpus": pod,
                    "pods": pods,
                    "field": "workers.max_pods",
                },
            )
        for role, engines in self._role_engine_paths().items():
            sizes = {e.tensor_parallel_size * e.pipeline_parallel_size for _, e in engines}
            if len(sizes) > 1 and max(sizes) > pod:
                raise PydanticCustomError(
                    "ray_replica_shapes",
                    "the {role} worker group serves replicas of {sizes} ranks and some span pods: Ray's PACK would "
                    "fill the pods the smaller ones leave and split a larger replica's stages unevenly — give its "
                    "models one TP × PP, or serve the spanning model in a ray_serve workload of its own",
                    {"role": role, "sizes": " and ".join(map(str, sorted(sizes))), "field": "workers.gpus_per_pod"},
                )

    def _engine_paths(self) -> list[tuple[str, VllmEngineConfig]]:
        """``(config path, engine)`` of every engine of the app."""
        return [(p, e) for engines in self._role_engine_paths().values() for p, e in engines]

    def _role_engine_paths(self) -> dict[str, list[tuple[str, VllmEngineConfig]]]:
        """Per worker group, ``(config path, engine)`` of the engines whose replicas it holds."""
        if self.prefill_decode is not None:
            pd = self.prefill_decode
            return {
                "prefill": [("prefill_decode.prefill.engine", pd.prefill.engine)],
                "decode": [("prefill_decode.decode.engine", pd.decode.engine)],
            }
        return {"worker": [(f"models[{i}].engine", m.engine) for i, m in enumerate(self.models)]}

    def _image_version(self) -> None:
        if self.image is not None and self.ray_version is None:
            raise PydanticCustomError(
                "ray_version",
                "required with image: KubeRay's probes and the Serve config's fields follow the image's Ray release",
                {"field": "ray_version"},
            )
        if self.ray_version is not None and self.ray_version not in ray_versions():
            raise PydanticCustomError(
                "ray_version_unknown",
                "{version} — inferstack has the Serve LLM fields of Ray {valid} only",
                {"version": self.ray_version, "valid": ", ".join(ray_versions()), "field": "ray_version"},
            )

    def check_in(self, index: int, accelerator: AcceleratorKind) -> None:
        if accelerator is AcceleratorKind.NEURON:
            raise PydanticCustomError(
                "ray_neuron",
                "Ray Serve LLM has no Neuron backend (Ray 2.52 and 2.60 place vLLM on GPUs only) — serve Neuron "
                "models with kind vllm",
                {"field": f"workloads[{index}].pool"},
            )
