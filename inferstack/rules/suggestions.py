"""Checking a suggested fix before it is offered: :func:`viable` applies the change and runs the checks that judge
parallelism, memory, scheduling and multi-node capacity, so a suggestion is never rejected by the next rule.

The rule modules register those checks here (:func:`register_viability_checks`, at import); this module imports
none of them, so the rules that suggest and the rules that judge a suggestion need no import of each other."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from typing import Any

from inferstack.config.edit import with_changes
from inferstack.config.model import InferstackConfig
from inferstack.rules.base import Finding

Check = Callable[[InferstackConfig], Iterable[Finding]]

#: False while a suggested fix is being checked (its checks must not suggest in turn).
_SUGGEST: ContextVar[bool] = ContextVar("inferstack_rules_suggest", default=True)
_CHECKS: list[Check] = []


def register_viability_checks(*checks: Check) -> None:
    """Add ``checks`` to those a suggested change must pass (once each)."""
    _CHECKS.extend(c for c in checks if c not in _CHECKS)


def suggesting() -> bool:
    """False while a suggested fix is being checked (its checks must not suggest in turn)."""
    return _SUGGEST.get()


def viable(config: InferstackConfig, changes: Mapping[str, Any]) -> bool:
    """Whether ``config`` with ``changes`` is valid and passes every registered check (a suggested fix must not be
    rejected by the next rule). Those checks suggest nothing meanwhile."""
    changed = with_changes(config, changes)
    if changed is None:
        return False
    token = _SUGGEST.set(False)
    try:
        return not any(list(check(changed)) for check in _CHECKS)
    finally:
        _SUGGEST.reset(token)
