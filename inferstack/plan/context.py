"""The ``max_model_len`` default: the model's full context, as vLLM itself would use, when the plan finds that it
fits; otherwise :data:`~inferstack.config.engine.DEFAULT_MAX_MODEL_LEN`.

vLLM without ``--max-model-len`` takes the model's ``max_position_embeddings`` and refuses to start when the KV cache
cannot hold one sequence of it (vLLM ``v1/core/kv_cache_utils.py`` ``check_enough_kv_cache_memory``). The plan
makes the same test with the sizing model, on every instance of the pool that holds the replica's ranks (Karpenter
may launch any of them), and writes the chosen length into the config, so every rendered engine gets an explicit
``--max-model-len`` and every rule judges the value that runs. The sides of a prefill/decode split, and the roles of
a Dynamo graph, serve the same requests and get one length: the shortest any of them would get."""

from __future__ import annotations

from inferstack.config.edit import with_changes
from inferstack.config.engine import DEFAULT_MAX_MODEL_LEN
from inferstack.config.model import InferstackConfig
from inferstack.plan.placement import pool_instances
from inferstack.plan.served import ServedEngine, engines, ranks_per_node, sizing_for

#: Configs already filled in (the config kept beside its result, so an ``id`` is never reused while cached).
_CACHE: dict[int, tuple[InferstackConfig, InferstackConfig]] = {}
_CACHE_SIZE = 64


def default_max_model_len(config: InferstackConfig, served: ServedEngine) -> int:
    """The ``max_model_len`` an engine without one gets: the model's context when one sequence of it fits the KV
    cache on *every* instance of the pool that holds the replica's ranks (Karpenter may launch any of them) — and,
    with chunked prefill off, ``max_num_batched_tokens``; else the shorter of 8192 and the model's context (with
    chunked prefill off, at most ``max_num_batched_tokens``)."""
    context = served.model.arch.max_context
    engine = served.engine
    budget = engine.max_num_batched_tokens if engine.enable_chunked_prefill is False else context
    fallback = min(DEFAULT_MAX_MODEL_LEN, context, budget)
    hosts = [t for t in pool_instances(config.pool(served.pool)) if ranks_per_node(t) >= served.ranks_per_pod]
    if not hosts or budget < context:
        return fallback
    fits = all(sizing_for(served, host, max_model_len=context).fits for host in hosts)
    return context if fits else fallback


def _one_sequence(served: ServedEngine) -> bool:
    """Whether the engine is one side of a prefill/decode split or one role of a Dynamo graph: its sides serve the
    same requests, so they share one length (the shortest any side gets)."""
    workload = served.workload
    return getattr(workload, "prefill_decode", None) is not None or workload.kind == "dynamo"


def with_context_defaults(config: InferstackConfig) -> InferstackConfig:
    """``config`` with every unset ``max_model_len`` of a vLLM engine on an accelerated pool set to
    :func:`default_max_model_len`; ``config`` itself when none is unset. Engines on CPU pools keep theirs unset
    (nothing is sized there; the charts render them with the fallback)."""
    cached = _CACHE.get(id(config))
    if cached is not None and cached[0] is config:
        return cached[1]
    unset = [(path, served) for path, served in engines(config) if served.engine.max_model_len is None]
    changes = {f"{path}.engine.max_model_len": default_max_model_len(config, served) for path, served in unset}
    shared: dict[int, int] = {}
    for path, served in unset:
        if _one_sequence(served):
            length = changes[f"{path}.engine.max_model_len"]
            shared[served.index] = min(shared.get(served.index, length), length)
    for path, served in unset:
        if served.index in shared:
            changes[f"{path}.engine.max_model_len"] = shared[served.index]
    filled = with_changes(config, changes) if changes else config
    if filled is None:
        raise RuntimeError(f"inferstack: the max_model_len defaults {changes} do not validate (an inferstack bug)")
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[id(config)] = (config, filled)
    return filled
