"""The metric names a PromQL expression reads — enough of PromQL's grammar to check dashboards and alerts against an
engine's series list (no Python PromQL parser is on PyPI for this toolchain).

Removed before looking for names: string literals, label matchers (``{…}``), range and subquery selectors
(``[5m]``, ``[1h:1m]``), grouping clauses (``by (…)``, ``without (…)``, ``on (…)``, ``ignoring (…)``,
``group_left (…)``, ``group_right (…)``) and numbers. What remains are functions (an identifier before ``(``),
keywords and operators, and metric names. Unbalanced brackets or quotes raise ValueError.
"""

from __future__ import annotations

import re

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGE = re.compile(r"\[[^\[\]]*\]")
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
_NUMBER = re.compile(r"(?<![A-Za-z_:])\d+(\.\d+)?([eE][+-]?\d+)?")
_IDENTIFIER = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
#: Words that are not metric names: aggregation operators and binary/set keywords, bare (``sum by (x) (…)`` has
#: its grouping removed first, leaving ``sum (…)``).
KEYWORDS = frozenset(
    {
        "and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right",
        "inf", "nan", "atan2",
    }
)  # fmt: skip


def _balanced(expr: str) -> None:
    depth = {"(": 0, "[": 0, "{": 0}
    closing = {")": "(", "]": "[", "}": "{"}
    for char in expr:
        if char in depth:
            depth[char] += 1
        elif char in closing:
            depth[closing[char]] -= 1
            if depth[closing[char]] < 0:
                raise ValueError(f"unbalanced {char!r} in {expr!r}")
    if any(depth.values()):
        raise ValueError(f"unbalanced brackets in {expr!r}")


def metric_names(expr: str) -> frozenset[str]:
    """The metric names ``expr`` selects."""
    if expr.count('"') % 2:
        raise ValueError(f"unterminated string in {expr!r}")
    text = _STRING.sub('""', expr)
    _balanced(text)
    text = _MATCHERS.sub(" ", text)
    text = _RANGE.sub(" ", text)
    text = _GROUPING.sub(" ", text)
    text = _NUMBER.sub(" ", text)
    names = set()
    for match in _IDENTIFIER.finditer(text):
        word = match.group(0)
        rest = text[match.end() :].lstrip()
        if rest.startswith("(") or word.lower() in KEYWORDS:
            continue  # a function or an aggregation operator
        names.add(word)
    return frozenset(names)
