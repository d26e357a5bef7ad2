"""The workload-kind registry: ``kind`` → its config model, plan function, rules, chart factory and the operators it
needs — registered in one place.

The config model is a class; the plan function, rules and chart factory live in the layers above ``config``
(``plan``, ``rules``, ``charts``), so the registry names them ``"module:attribute"`` (like a Python entry point) and
each layer loads its part when it needs it. Imports keep pointing one way, and adding a kind touches no other
kind's files: one config module, one plan function, its rules, one chart factory and one :func:`register_kind`
call (built-in kinds: :data:`BUILT_IN_KINDS`). ``workloads[]`` of :class:`~inferstack.config.model.InferstackConfig`
is the union of the registered config models, discriminated on ``kind`` (default ``vllm``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Union

from pydantic import Discriminator, Tag

from inferstack.catalog.kubernetes import WORKLOAD_OPERATORS
from inferstack.config.dynamo import DynamoWorkloadConfig
from inferstack.config.kserve import KServeWorkloadConfig
from inferstack.config.litellm import LiteLLMWorkloadConfig
from inferstack.config.nim import NimWorkloadConfig
from inferstack.config.ollama import OllamaWorkloadConfig
from inferstack.config.ray_serve import RayServeWorkloadConfig
from inferstack.config.sglang import SglangWorkloadConfig
from inferstack.config.tgi import TgiWorkloadConfig
from inferstack.config.triton import TritonWorkloadConfig
from inferstack.config.vllm_multinode import VllmMultinodeWorkloadConfig
from inferstack.config.workloads import VllmWorkloadConfig, WorkloadBase

#: ``kind`` of a workload that does not say.
DEFAULT_KIND = "vllm"

Ref = str | Callable[..., Any] | tuple[Any, ...]
"""A registry entry's part: the object itself, or ``"module:attribute"`` loaded on first use."""


@dataclass(frozen=True)
class WorkloadKind:
    """One way of serving a model."""

    name: str
    """The ``kind`` value in the config, e.g. ``vllm_multinode``."""
    config: type[WorkloadBase]
    """Its config model (``kind`` a ``Literal`` of :attr:`name`)."""
    plan: Ref
    """:data:`inferstack.plan.Planner`: ``(config, pools, index, workload) -> ResolvedWorkload``."""
    chart: Ref
    """``(scope, id, resolved: ResolvedWorkload, refs: StorageRefs, *, kubernetes_version: str) -> cdk8s.Chart``;
    a subclass of :class:`inferstack.charts.workload.WorkloadChart` has that signature."""
    rules: tuple[Ref, ...] = ()
    """Rule tuples (:class:`inferstack.rules.base.Rule`) that judge this kind; shared ones may repeat."""
    operators: tuple[str, ...] = ()
    """Operators its objects need, from :data:`inferstack.catalog.kubernetes.WORKLOAD_OPERATORS` (e.g. ``lws``)."""
    summary: str = ""
    paths: Ref | None = None
    """``(platform, resolved) -> inferstack.plan.runtime_paths.RuntimePaths``: the network paths its pods use at
    run time, with ports (the NetworkPolicies are generated from them). Required: :func:`register_kind` refuses a
    kind without them."""


BUILT_IN_KINDS: tuple[WorkloadKind, ...] = (
    WorkloadKind(
        name="vllm",
        paths="inferstack.plan.runtime_paths:vllm_paths",
        config=VllmWorkloadConfig,
        plan="inferstack.plan.vllm:plan_vllm",
        chart="inferstack.charts.vllm:VllmChart",
        rules=(
            "inferstack.rules.serving:RULES",
            "inferstack.rules.engine_flags:RULES",
            "inferstack.rules.aibrix:RULES",
        ),
        summary="vLLM, one server pod per replica (Deployment); optionally AIBrix LoRA adapters",
    ),
    WorkloadKind(
        name="vllm_multinode",
        paths="inferstack.plan.runtime_paths:vllm_multinode_paths",
        config=VllmMultinodeWorkloadConfig,
        plan="inferstack.plan.vllm:plan_vllm_multinode",
        chart="inferstack.charts.vllm_multinode:VllmMultinodeChart",
        rules=(
            "inferstack.rules.serving:RULES",
            "inferstack.rules.engine_flags:RULES",
            "inferstack.rules.multinode:RULES",
        ),
        operators=("lws",),
        summary="vLLM across nodes: a LeaderWorkerSet group per replica, the leader serves",
    ),
    WorkloadKind(
        name="ray_serve",
        paths="inferstack.plan.runtime_paths:ray_serve_paths",
        config=RayServeWorkloadConfig,
        plan="inferstack.plan.ray_serve:plan_ray_serve",
        chart="inferstack.charts.ray_serve:RayServeChart",
        rules=("inferstack.rules.ray_serve:RULES",),
        operators=("kuberay",),
        summary="Ray Serve LLM on a KubeRay RayService: several models, or prefill/decode over NIXL",
    ),
    WorkloadKind(
        name="triton",
        paths="inferstack.plan.runtime_paths:triton_paths",
        config=TritonWorkloadConfig,
        plan="inferstack.plan.triton:plan_triton",
        chart="inferstack.charts.triton:TritonChart",
        rules=("inferstack.rules.serving:RULES",),
        summary="NVIDIA Triton with its vLLM backend (a generated model repository), one pod per replica",
    ),
    WorkloadKind(
        name="sglang",
        paths="inferstack.plan.runtime_paths:sglang_paths",
        config=SglangWorkloadConfig,
        plan="inferstack.plan.engines:plan_sglang",
        chart="inferstack.charts.sglang:SglangChart",
        rules=("inferstack.rules.engines:RULES",),
        summary="SGLang (RadixAttention, structured output), one pod per replica",
    ),
    WorkloadKind(
        name="tgi",
        paths="inferstack.plan.runtime_paths:tgi_paths",
        config=TgiWorkloadConfig,
        plan="inferstack.plan.engines:plan_tgi",
        chart="inferstack.charts.tgi:TgiChart",
        rules=("inferstack.rules.engines:RULES",),
        summary="Hugging Face TGI 3.3.7 (maintenance mode upstream), one pod per replica",
    ),
    WorkloadKind(
        name="ollama",
        paths="inferstack.plan.runtime_paths:ollama_paths",
        config=OllamaWorkloadConfig,
        plan="inferstack.plan.engines:plan_ollama",
        chart="inferstack.charts.ollama:OllamaChart",
        rules=("inferstack.rules.engines:RULES",),
        operators=("model-cache",),
        summary="Ollama (GGUF, dev/test, CPU or GPU) with its models on a persistent volume",
    ),
    WorkloadKind(
        name="litellm",
        paths="inferstack.plan.runtime_paths:litellm_paths",
        config=LiteLLMWorkloadConfig,
        plan="inferstack.plan.litellm:plan_litellm",
        chart="inferstack.charts.litellm:LiteLLMChart",
        rules=("inferstack.rules.litellm:RULES",),
        summary="LiteLLM proxy: one OpenAI-compatible gateway over the app's workloads and external providers",
    ),
    WorkloadKind(
        name="kserve",
        paths="inferstack.plan.runtime_paths:kserve_paths",
        config=KServeWorkloadConfig,
        plan="inferstack.plan.kserve:plan_kserve",
        chart="inferstack.charts.kserve:KServeChart",
        rules=("inferstack.rules.serving:RULES", "inferstack.rules.kserve:RULES"),
        operators=("kserve",),
        summary="KServe InferenceService (Hugging Face runtime, vLLM backend): Standard, or Knative scale to zero",
    ),
    WorkloadKind(
        name="nim",
        paths="inferstack.plan.runtime_paths:nim_paths",
        config=NimWorkloadConfig,
        plan="inferstack.plan.nim:plan_nim",
        chart="inferstack.charts.nim:NimChart",
        rules=("inferstack.rules.nim:RULES",),
        operators=("nim", "model-cache"),
        summary="NVIDIA NIM through the NIM operator: a NIMCache of the model's profiles and a NIMService",
    ),
    WorkloadKind(
        name="dynamo",
        paths="inferstack.plan.runtime_paths:dynamo_paths",
        config=DynamoWorkloadConfig,
        plan="inferstack.plan.dynamo:plan_dynamo",
        chart="inferstack.charts.dynamo:DynamoChart",
        rules=("inferstack.rules.serving:RULES", "inferstack.rules.dynamo:RULES"),
        operators=("dynamo",),
        summary="NVIDIA Dynamo: a DynamoGraphDeployment of a frontend and vLLM workers, aggregated or prefill/decode",
    ),
)

KINDS: dict[str, WorkloadKind] = {kind.name: kind for kind in BUILT_IN_KINDS}
#: Bumped on every registration, so caches of loaded parts know when to reload.
_generation = [0]


def generation() -> int:
    return _generation[0]


def _kind_of(value: Any) -> str | None:
    kind = value.get("kind", DEFAULT_KIND) if isinstance(value, dict) else getattr(value, "kind", DEFAULT_KIND)
    return kind if isinstance(kind, str) else None


def workload_union() -> Any:
    """The type of one ``workloads[]`` entry: the registered config models, discriminated on ``kind``."""
    members = tuple(Annotated[kind.config, Tag(kind.name)] for kind in KINDS.values())
    valid = ", ".join(KINDS)
    return Annotated[
        Union[members],  # noqa: UP007 - a runtime-built union
        Discriminator(
            _kind_of,
            custom_error_type="workload_kind",
            custom_error_message=f"unknown workload kind — valid kinds: {valid}",
            custom_error_context={"field": "kind"},
        ),
    ]


def register_kind(kind: WorkloadKind) -> None:
    """Add (or replace) a kind; the config model accepts it from now on."""
    if kind.config.model_fields["kind"].default != kind.name:
        raise ValueError(f"{kind.config.__name__}.kind must default to {kind.name!r} (a Literal of the kind name)")
    if kind.paths is None:
        raise ValueError(
            f"kind {kind.name!r}: paths — declare the network paths its pods use at run time "
            "(a function returning inferstack.plan.runtime_paths.RuntimePaths: serving and metrics ports, calls, "
            "downloads); the NetworkPolicies admit nothing else"
        )
    unknown = sorted(set(kind.operators) - WORKLOAD_OPERATORS)
    if unknown:
        raise ValueError(
            f"kind {kind.name!r}: operators {unknown} — inferstack installs {', '.join(sorted(WORKLOAD_OPERATORS))}"
        )
    KINDS[kind.name] = kind
    _rebuild()


def unregister_kind(name: str) -> None:
    """Remove a kind registered with :func:`register_kind` (built-in kinds stay)."""
    if name in {k.name for k in BUILT_IN_KINDS}:
        raise ValueError(f"{name} is a built-in kind")
    KINDS.pop(name, None)
    _rebuild()


#: Called after every change of the registry: the config model (built on this module) registers its rebuild of the
#: ``workloads`` union here, so this module needs no import of it.
_REBUILD_HOOKS: list[Callable[[], None]] = []


def on_kinds_changed(hook: Callable[[], None]) -> None:
    """Call ``hook`` after each :func:`register_kind` / :func:`unregister_kind`."""
    _REBUILD_HOOKS.append(hook)


def _rebuild() -> None:
    _generation[0] += 1
    for hook in _REBUILD_HOOKS:
        hook()


def load(ref: Ref) -> Any:
    """A registry part: ``ref`` itself, or the attribute ``"module:attribute"`` names."""
    if not isinstance(ref, str):
        return ref
    module, _, attribute = ref.partition(":")
    return getattr(importlib.import_module(module), attribute)


def kind_of(workload: WorkloadBase) -> WorkloadKind:
    return KINDS[workload.kind]
