"""The workload-kind registry's store: ``kind`` → everything about it (:class:`WorkloadKind`).

Each kind is declared in its own module of :mod:`inferstack.kinds`, above the layers it names: that module imports
its config model, plan function, rules, chart factory and runtime paths for real (so the import graph shows every
dependency) and registers them here with :func:`register_kinds`. The layers below — ``config``, ``plan``, ``rules``,
``charts``, ``stacks`` — look a workload's parts up here by its ``kind`` and import no kind module. Importing
``inferstack`` registers the built-in kinds (:data:`inferstack.kinds.BUILT_IN_KINDS`); a kind of one's own is one
:class:`WorkloadKind` and one :func:`register_kind` call (``tests/test_kind_extension.py``).

``workloads[]`` of :class:`~inferstack.config.model.InferstackConfig` is the union of the registered config models,
discriminated on ``kind`` (default ``vllm``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Union

from pydantic import Discriminator, Tag

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.kubernetes import WORKLOAD_OPERATORS
from inferstack.catalog.metrics import EngineMetrics
from inferstack.catalog.routing import ENGINE_METRICS
from inferstack.catalog.versions import ENGINE_IMAGES, IMAGES
from inferstack.config.workloads import DEFAULT_KIND, WorkloadBase

#: ``kind`` of a workload that does not say.


@dataclass(frozen=True, kw_only=True)
class KindEndpoint:
    """Where a kind's workload answers OpenAI-compatible requests (what a LiteLLM gateway routes to): the Service
    ``<workload name><suffix>.<namespace>.svc.cluster.local`` at ``port`` and ``path``."""

    port: int | None
    """The Service port; None: the Service's default port 80 (the URL names none)."""
    path: str
    """The API's base path, e.g. ``/v1`` ("" for Ollama's own API)."""
    provider: str
    """LiteLLM's provider prefix: ``hosted_vllm``, ``openai`` (any OpenAI-compatible server), ``ollama_chat``."""
    suffix: str = ""
    """Appended to the workload's name to give the Service's (``-serve-svc`` for KubeRay's). Default none."""


@dataclass(frozen=True, kw_only=True)
class WorkloadKind:
    """One way of serving a model: every part inferstack needs of it, in one value."""

    name: str
    """The ``kind`` value in the config, e.g. ``vllm_multinode``."""
    config: type[WorkloadBase]
    """Its config model (``kind`` a ``Literal`` of :attr:`name`)."""
    plan: Callable[..., Any]
    """:data:`inferstack.plan.Planner`: ``(config, pools, index, workload) -> ResolvedWorkload``."""
    chart: Callable[..., Any]
    """``(scope, id, resolved: ResolvedWorkload, refs: StorageRefs, *, kubernetes_version: str) -> cdk8s.Chart``;
    a subclass of :class:`inferstack.charts.workload.WorkloadChart` has that signature."""
    paths: Callable[..., Any]
    """``(platform, resolved) -> inferstack.plan.runtime_paths.RuntimePaths``: the network paths its pods use at
    run time, with ports (the NetworkPolicies are generated from them and admit nothing else)."""
    rules: tuple[tuple[Any, ...], ...] = ()
    """Rule tuples (:class:`inferstack.rules.base.Rule`) that judge this kind; shared ones may repeat. Default none."""
    operators: tuple[str, ...] = ()
    """Operators its objects need, from :data:`inferstack.catalog.kubernetes.WORKLOAD_OPERATORS` (e.g. ``lws``).
    Default none."""
    summary: str = ""
    """One line for ``inferstack kinds`` and the docs."""
    endpoint: KindEndpoint | None = None
    """Its OpenAI-compatible endpoint; None with :attr:`no_endpoint` saying what it serves instead."""
    no_endpoint: str = ""
    """Why a kind without :attr:`endpoint` cannot sit behind a gateway (e.g. Triton's KServe v2 protocol)."""
    served_models: Callable[[Any], tuple[str, ...]] | None = None
    """``(workload config) -> names`` clients put in ``model``, the primary first. Default: the model's name
    (``model.name`` of a single-model workload)."""
    operator_service_ports: tuple[int, ...] = ()
    """Set when an operator, not inferstack, makes its Service (KubeRay, KServe, NIM, Dynamo): the Service's port
    and the pods' port. A client's egress then admits the namespace on these ports (the policy controller resolves
    only Services whose selector its rule's selector is a subset of). Default: inferstack makes the Service."""
    metrics: EngineMetrics | None = None
    """The catalogued series its pods export (:mod:`inferstack.catalog.metrics`): dashboards and alerts follow from
    it. None: not catalogued, no dashboard row or alerts (monitoring still scrapes the pods)."""
    scrapeable: bool = True
    """False when its server exports no Prometheus metrics at all (Ollama): ``monitoring`` has nothing to scrape."""
    unchecked_flags: str | None = None
    """The engine release whose ``extra_args`` inferstack has no flag list of (``SGLang 0.5.19``): they pass
    unchecked with a warning. None: checked (vLLM) or no ``extra_args``."""
    engine_image: Callable[[Any, AcceleratorKind], str] | None = None
    """``(workload config, the pool's accelerator) -> image`` its server runs — what the plan renders, and whose
    vLLM release (image facts, else the tag) sizes its engines. None: no image of its own to size by (the pinned GPU
    vLLM's release sizes it)."""
    images: tuple[str, ...] = ()
    """The pinned images its pods may run: keys of :data:`~inferstack.catalog.versions.ENGINE_IMAGES` (each with
    image facts, :mod:`inferstack.catalog.images`) or :data:`~inferstack.catalog.versions.IMAGES`. Default none: the
    image is the workload's own (a NIM image is named per model)."""
    examples: tuple[str, ...] = ()
    """Files under ``examples/`` that show it. Default none."""
    compile_cache: str | None = None
    """The directory of its serving container under which the engine keeps every compile cache (``caches.compile``
    is mounted there): a directory whose parent is a volume's root (the pod's writable HOME), so the runtime creates
    no root-owned directory on the way. None: ``caches.compile`` is refused for it. Default None."""
    routing_engine: str | None = None
    """The engine whose ``/metrics`` the endpoint picker reads for its pods (a key of
    :data:`inferstack.catalog.routing.ENGINE_METRICS`: ``vllm``, ``sglang``). None: ``routing`` is refused for it.
    Default None."""
    hub_cache: bool = False
    """Its serving container reads an ``hf`` model from the model source's ``HF_HOME`` (``caches.huggingface``
    replaces that emptyDir). Default False: ``caches.huggingface`` is refused for it."""

    def models_served(self, workload: WorkloadBase) -> tuple[str, ...]:
        """What clients put in ``model`` for ``workload`` (see :attr:`served_models`)."""
        if self.served_models is not None:
            return self.served_models(workload)
        model = getattr(workload, "model", None)
        return (model.name,) if model is not None else ()


KINDS: dict[str, WorkloadKind] = {}
"""The registered kinds, in registration order (the built-in ones first)."""
_BUILT_IN: set[str] = set()
#: Bumped on every registration, so caches of loaded parts know when to reload.
_generation = [0]


def generation() -> int:
    return _generation[0]


def _kind_of(value: Any) -> str | None:
    kind = value.get("kind", DEFAULT_KIND) if isinstance(value, dict) else getattr(value, "kind", DEFAULT_KIND)
    return kind if isinstance(kind, str) else None


def workload_union() -> Any:
    """The type of one ``workloads[]`` entry: the registered config models, discriminated on ``kind`` (the base
    model while the built-in kinds are being registered, during ``import inferstack``)."""
    if not KINDS:
        return WorkloadBase
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


def _problems(kind: WorkloadKind) -> list[str]:
    problems = []
    if kind.config.model_fields["kind"].default != kind.name:
        problems.append(f"{kind.config.__name__}.kind must default to {kind.name!r} (a Literal of the kind name)")
    for part in ("plan", "chart", "paths"):
        if not callable(getattr(kind, part)):
            problems.append(f"{part} must be callable, not {getattr(kind, part)!r}")
    unknown = sorted(set(kind.operators) - WORKLOAD_OPERATORS)
    if unknown:
        problems.append(f"operators {unknown} — inferstack installs {', '.join(sorted(WORKLOAD_OPERATORS))}")
    if (kind.endpoint is None) == (not kind.no_endpoint):
        problems.append("endpoint — give its OpenAI-compatible endpoint, or no_endpoint saying why it has none")
    if kind.routing_engine is not None and kind.routing_engine not in ENGINE_METRICS:
        problems.append(f"routing_engine {kind.routing_engine!r} — the picker knows {', '.join(ENGINE_METRICS)}")
    images = sorted(set(kind.images) - set(ENGINE_IMAGES) - set(IMAGES))
    if images:
        problems.append(f"images {images} — pinned images: {', '.join([*ENGINE_IMAGES, *IMAGES])}")
    return problems


def register_kinds(*kinds: WorkloadKind, built_in: bool = False) -> None:
    """Add (or replace) ``kinds``; the config model accepts them from now on. :raises ValueError: naming each part
    a kind lacks."""
    for kind in kinds:
        problems = _problems(kind)
        if problems:
            raise ValueError(f"kind {kind.name!r}: " + "; ".join(problems))
    for kind in kinds:
        KINDS[kind.name] = kind
        if built_in:
            _BUILT_IN.add(kind.name)
    _rebuild()


def register_kind(kind: WorkloadKind) -> None:
    """Add (or replace) one kind (see :func:`register_kinds`)."""
    register_kinds(kind)


def unregister_kind(name: str) -> None:
    """Remove a kind registered with :func:`register_kind` (built-in kinds stay)."""
    if name in _BUILT_IN:
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


def pinned_image(key: str) -> Callable[[Any, AcceleratorKind], str]:
    """An :attr:`WorkloadKind.engine_image` that is always the pinned image ``key`` (of ``ENGINE_IMAGES`` or
    ``IMAGES``)."""
    image = ENGINE_IMAGES.get(key) or IMAGES[key]
    return lambda workload, accelerator: image


def kind_of(workload: WorkloadBase | str) -> WorkloadKind:
    """The registered kind of ``workload`` (or of the kind name)."""
    return KINDS[workload if isinstance(workload, str) else workload.kind]
