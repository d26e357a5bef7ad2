"""The ``max_model_len`` default: the model's full context, as vLLM itself would use, when the plan finds that it
fits; otherwise :data:`~inferstack.config.engine.DEFAULT_MAX_MODEL_LEN`.

vLLM without ``--max-model-len`` takes the model's ``max_position_embeddings`` and refuses to start when the KV cache
cannot hold one sequence of it (vLLM ``v1/core/kv_cache_utils.py`` ``check_enough_kv_cache_memory``). The plan
makes the same test with the sizing model, on the smallest instance of the pool that holds the replica's ranks
(:func:`~inferstack.plan.served.smallest_host`), and writes the chosen length into the config, so every rendered
engine gets an explicit ``--max-model-len`` and every rule judges the value that runs."""

from __future__ import annotations

from inferstack.config.edit import with_changes
from inferstack.config.engine import DEFAULT_MAX_MODEL_LEN
from inferstack.config.model import InferstackConfig
from inferstack.plan.served import ServedEngine, engines, sizing_for, smallest_host

#: Configs already filled in (the config kept beside its result, so an ``id`` is never reused while cached).
_CACHE: dict[int, tuple[InferstackConfig, InferstackConfig]] = {}
_CACHE_SIZE = 64


def default_max_model_len(config: InferstackConfig, served: ServedEngine) -> int:
    """The ``max_model_len`` an engine without one gets: the model's context when one sequence of it fits the KV
    cache of :func:`smallest_host` (and, with chunked prefill off, ``max_num_batched_tokens``); else the shorter of
    8192 and the model's context (with chunked prefill off, at most ``max_num_batched_tokens``)."""
    context = served.model.arch.max_context
    engine = served.engine
    budget = engine.max_num_batched_tokens if engine.enable_chunked_prefill is False else context
    fallback = min(DEFAULT_MAX_MODEL_LEN, context, budget)
    host = smallest_host(config, served)
    if host is None or budget < context:
        return fallback
    return context if sizing_for(served, host, max_model_len=context).fits else fallback


def with_context_defaults(config: InferstackConfig) -> InferstackConfig:
    """``config`` with every unset ``max_model_len`` of a vLLM engine on an accelerated pool set to
    :func:`default_max_model_len`; ``config`` itself when none is unset. Engines on CPU pools keep theirs unset
    (nothing is sized there; the charts render them with the fallback)."""
    cached = _CACHE.get(id(config))
    if cached is not None and cached[0] is config:
        return cached[1]
    changes = {
        f"{path}.engine.max_model_len": default_max_model_len(config, served)
        for path, served in engines(config)
        if served.engine.max_model_len is None
    }
    filled = with_changes(config, changes) if changes else config
    if filled is None:
        raise RuntimeError(f"inferstack: the max_model_len defaults {changes} do not validate (an inferstack bug)")
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[id(config)] = (config, filled)
    return filled
