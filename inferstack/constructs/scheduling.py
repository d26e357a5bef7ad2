"""Tolerations as constructs take them: a taint key (tolerated for ``NoSchedule``) or a ``(key, effect)`` pair."""

from __future__ import annotations

from collections.abc import Iterable

from cdk8s_plus_36 import k8s

#: A taint a pod tolerates: ``"nvidia.com/gpu"`` (its ``NoSchedule`` taint) or ``("dedicated", "NoExecute")``.
TolerationSpec = str | tuple[str, str]


def toleration_pairs(items: Iterable[TolerationSpec]) -> list[tuple[str, str]]:
    """``(key, effect)`` of each item, sorted, without repeats."""
    return sorted({(item, "NoSchedule") if isinstance(item, str) else (item[0], item[1]) for item in items})


def tolerations(items: Iterable[TolerationSpec]) -> list[k8s.Toleration] | None:
    """``operator: Exists`` tolerations of ``items`` (None when there are none)."""
    pairs = toleration_pairs(items)
    return [k8s.Toleration(key=key, operator="Exists", effect=effect) for key, effect in pairs] or None
