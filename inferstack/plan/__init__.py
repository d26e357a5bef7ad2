"""The resolved plan: config → :class:`ResolvedPlatform`, computed once. Pools with their instances, labels and
taints; per workload its roles (``server``; ``leader``/``worker``; …) with the pod each runs as, its identities, its
storage access, the engine image and the operators it needs. Rules, charts, stacks and the CLI read this same
object, so a check and the manifest it judges cannot disagree.

Each workload kind plans itself (its :mod:`inferstack.kinds` module registers its plan function);
:func:`workload_plan` is what those functions share.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from inferstack.catalog.instances import AcceleratorKind, InstanceType
from inferstack.catalog.kubernetes import EFS_STORAGE_CLASS, GP3_STORAGE_CLASS, MODEL_CACHE_STORAGE_CLASS
from inferstack.config.alerts import AlertTargets
from inferstack.config.compute import AcceleratedNodeGroupConfig, KarpenterPoolConfig, Taint
from inferstack.config.kinds import kind_of
from inferstack.config.model import InferstackConfig
from inferstack.config.workloads import BUCKET_SOURCES, ModelConfig, WorkloadBase
from inferstack.plan.bench import BenchError, ResolvedBench, resolve_bench
from inferstack.plan.caches import compile_cache, hub_cache
from inferstack.plan.context import with_context_defaults
from inferstack.plan.names import (
    needs_reader,
    needs_sync,
    server_service_account,
    sync_excludes,
    sync_service_account,
)
from inferstack.plan.placement import PodPlan, pod_plan, pool_instances, pool_labels, pool_node_taints, pool_taints
from inferstack.plan.routing import ResolvedRouting, resolve_routing, routed

__all__ = [
    "Planner",
    "ResolvedModel",
    "ResolvedPlatform",
    "ResolvedPool",
    "ResolvedWorkload",
    "Role",
    "resolve",
    "workload_plan",
]


@dataclass(frozen=True)
class ResolvedPool:
    """A node group or Karpenter pool as the scheduler sees it."""

    path: str
    """Config path, e.g. ``compute.karpenter_pools[0]``."""
    config: AcceleratedNodeGroupConfig | KarpenterPoolConfig
    instances: tuple[InstanceType, ...]
    labels: dict[str, str]
    """The labels its nodes carry (:func:`~inferstack.plan.placement.pool_labels`)."""
    node_taints: tuple[Taint, ...]
    """The taints its nodes carry, accelerator taint first (:func:`~inferstack.plan.placement.pool_node_taints`)."""
    taints: frozenset[tuple[str, str]]
    """``(key, effect)`` a pod must tolerate (``PreferNoSchedule`` left out)."""

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def accelerator(self) -> AcceleratorKind:
        return self.config.accelerator


@dataclass(frozen=True)
class Role:
    """One kind of pod a workload runs (``server``; later leader/worker, head/worker, prefill/decode…)."""

    name: str
    pod: PodPlan
    service_account: str
    reads_bucket: bool
    """Its pods read the model prefix from S3 themselves (Run:ai streamer, Neuron artifact fetch)."""
    serves: bool = True
    """Its pods serve the workload's API (the Service selects them); a multi-node worker does not."""
    pods_per_replica: int = 1
    pool: str | None = None
    """The pool its pods run on when not the workload's (e.g. ``system`` for a Ray head). Default: the workload's."""
    creates_service_account: bool = True
    """inferstack creates its ServiceAccount (False: the operator does, e.g. the NIM operator's ``<name>``)."""


@dataclass(frozen=True)
class ResolvedModel:
    """One model of a workload, with its storage plumbing decided."""

    path: str
    """Config path, e.g. ``workloads[0].model`` or ``workloads[0].models[1].model``."""
    config: ModelConfig
    suffix: str
    """Appended to the names of its objects (model volume, sync Job): ``""`` for the first model, ``-2``…"""
    sync: bool
    """A model-sync Job fills its bucket prefix."""
    sync_excludes: tuple[str, ...]


@dataclass(frozen=True)
class ResolvedWorkload:
    """A workload with everything decided: its pool, roles, identities, storage access and image."""

    index: int
    config: WorkloadBase
    pool: ResolvedPool
    roles: Mapping[str, Role]
    image: str
    models: tuple[ResolvedModel, ...]
    """Every model it serves; the first is the primary one."""
    writes_bucket: bool
    """A Job (model sync, Neuron compile) writes a prefix: the writer role exists."""
    writer_service_account: str
    operators: frozenset[str] = frozenset()
    """Operators whose custom resources its objects are (``prometheus``, ``keda``, ``lws``…)."""
    details: Any = None
    """What the kind's plan decided beyond roles (e.g. a gateway's resolved backends). Default none."""
    alerts: AlertTargets = field(default_factory=AlertTargets)
    """Its alert targets: its own ``alerts``, else ``observability.alerts``."""
    bench: ResolvedBench | None = None
    """Its benchmark Job (None without ``bench``, or when BENCH-TARGET refuses it)."""
    router: ResolvedRouting | None = None
    """Its request router (``routing``), when it has one."""

    @property
    def kind(self) -> str:
        return self.config.kind

    @property
    def sync(self) -> bool:
        """A model-sync Job fills a prefix of one of its models."""
        return any(model.sync for model in self.models)

    @property
    def prefixes(self) -> list[str]:
        """Bucket prefixes of its bucket-backed models (``s3``, ``s3_mount``, ``fsx``), each once, in order: the
        prefixes its roles read and write (an ``hf``, ``image`` or ``efs`` model has a default prefix nothing
        reads)."""
        models = [model.config for model in self.models if model.config.source.type in BUCKET_SOURCES]
        return list(dict.fromkeys(model.bucket_prefix for model in models))

    @property
    def path(self) -> str:
        return f"workloads[{self.index}]"

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def namespace(self) -> str:
        return self.config.namespace

    @property
    def server(self) -> Role:
        """The role whose pods serve the API (``server``, or a multi-node group's ``leader``)."""
        return next(role for role in self.roles.values() if role.serves)

    @property
    def readers(self) -> list[str]:
        """Service accounts of the roles that read the model prefix themselves (each once)."""
        return sorted({role.service_account for role in self.roles.values() if role.reads_bucket})


@dataclass(frozen=True)
class ResolvedPlatform:
    config: InferstackConfig
    pools: dict[str, ResolvedPool]
    workloads: tuple[ResolvedWorkload, ...]

    @cached_property
    def by_name(self) -> dict[tuple[str, str], ResolvedWorkload]:
        """Workloads by ``(namespace, name)``."""
        return {(w.namespace, w.name): w for w in self.workloads}

    def workload(self, config: WorkloadBase) -> ResolvedWorkload:
        return self.by_name[(config.namespace, config.name)]


def _pools(config: InferstackConfig) -> dict[str, ResolvedPool]:
    pools: dict[str, ResolvedPool] = {}
    groups = [(f"compute.node_groups[{i}]", g) for i, g in enumerate(config.compute.node_groups)]
    groups += [(f"compute.karpenter_pools[{i}]", p) for i, p in enumerate(config.compute.karpenter_pools)]
    for path, pool in groups:
        pools[pool.name] = ResolvedPool(
            path=path,
            config=pool,
            instances=tuple(pool_instances(pool)),
            labels=pool_labels(pool),
            node_taints=pool_node_taints(pool),
            taints=frozenset(pool_taints(pool)),
        )
    return pools


Planner = Callable[[InferstackConfig, Mapping[str, ResolvedPool], int, WorkloadBase], ResolvedWorkload]
"""A kind's plan function: ``(config, pools, index, workload) -> ResolvedWorkload``."""


def workload_plan(
    config: InferstackConfig,
    pools: Mapping[str, ResolvedPool],
    index: int,
    workload: WorkloadBase,
    *,
    roles: Mapping[str, Role],
    image: str,
    operators: frozenset[str] = frozenset(),
    compiles: bool = False,
    details: Any = None,
) -> ResolvedWorkload:
    """What every kind's plan shares: the pool, the model-sync Job and writer identity, and the operators the
    workload's objects need — its kind's (registry) and ``operators``, plus Prometheus for ``monitoring`` and the
    StorageClasses its caches name (``inferstack-model-cache``, ``inferstack-gp3``, ``inferstack-efs``).
    ``compiles``: a Job writes compiled artifacts to the prefix (the writer role exists). Default False."""
    needed = {*kind_of(workload).operators, *operators}
    if workload.monitoring:
        needed.add("prometheus")
    if routed(workload):
        needed.add("inference-pool")  # the InferencePool CRD its router's picker watches
    used = (compile_cache(workload, pools[workload.pool].accelerator), hub_cache(workload))
    classes = {volume.storage_class for volume in used if volume is not None}
    if MODEL_CACHE_STORAGE_CLASS in classes:
        needed.add("model-cache")  # the classes its cache claims name
    if GP3_STORAGE_CLASS in classes:
        needed.add("gp3-storage")
    if EFS_STORAGE_CLASS in classes:
        needed.add("efs-storage")
    models: list[ResolvedModel] = []
    synced: set[str] = set()  # one sync Job per prefix: the same model listed twice is copied once
    for position, (relative, model) in enumerate(workload.model_entries):
        sync = needs_sync(workload, model) and model.bucket_prefix not in synced
        if sync:
            synced.add(model.bucket_prefix)
        models.append(
            ResolvedModel(
                path=f"workloads[{index}].{relative}",
                config=model,
                suffix="" if position == 0 else f"-{position + 1}",
                sync=sync,
                sync_excludes=sync_excludes(model),
            )
        )
    return ResolvedWorkload(
        index=index,
        config=workload,
        pool=pools[workload.pool],
        roles=roles,
        image=image,
        models=tuple(models),
        writes_bucket=any(m.sync for m in models) or compiles,
        writer_service_account=sync_service_account(workload),
        operators=frozenset(needed),
        details=details,
        alerts=workload.alerts or config.observability.alerts,
        bench=_bench(workload),
        router=resolve_routing(config, workload),
    )


def _bench(workload: WorkloadBase) -> ResolvedBench | None:
    try:
        return resolve_bench(workload)
    except BenchError:
        return None  # BENCH-TARGET reports it


def server_role(
    config: InferstackConfig,
    pools: Mapping[str, ResolvedPool],
    workload: WorkloadBase,
    *,
    ranks: int,
    min_memory_gib: float = 0,
) -> Role:
    """The ``server`` role of a single-node engine: one pod per replica holding ``ranks`` ranks."""
    pool = pools[workload.pool]
    return Role(
        name="server",
        pod=pod_plan(config, workload, ranks=ranks, min_memory_gib=min_memory_gib),
        service_account=server_service_account(workload),
        reads_bucket=needs_reader(workload, pool.accelerator),
    )


def _resolve(config: InferstackConfig) -> ResolvedPlatform:
    pools = _pools(config)
    workloads = []
    for index, workload in enumerate(config.workloads):
        planner: Planner = kind_of(workload).plan
        workloads.append(planner(config, pools, index, workload))
    return ResolvedPlatform(config=config, pools=pools, workloads=tuple(workloads))


#: Plans of the configs seen (config kept alive beside its plan, so an ``id`` is never reused while cached).
_CACHE: dict[int, tuple[InferstackConfig, ResolvedPlatform]] = {}
_CACHE_SIZE = 64


def resolve(config: InferstackConfig) -> ResolvedPlatform:
    """The plan of ``config`` (a frozen, validated config), computed once per config object. Its ``config`` is
    ``config`` with the defaults that need sizing filled in (:func:`~inferstack.plan.context.with_context_defaults`:
    ``max_model_len``)."""
    cached = _CACHE.get(id(config))
    if cached is not None and cached[0] is config:
        return cached[1]
    plan = _resolve(with_context_defaults(config))
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[id(config)] = (config, plan)
    return plan
