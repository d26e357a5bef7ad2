"""The metric names a PromQL expression reads, from its syntax tree (``promql-parser``, the Python binding of the
Rust ``promql-parser`` crate that GreptimeDB maintains): what the dashboards and alerts are checked against an
engine's series list with at synth."""

from __future__ import annotations

import promql_parser


def metric_names(expr: str) -> frozenset[str]:
    """The metric names ``expr`` selects (every vector selector's name; ``{__name__="…"}`` matchers included).

    :raises ValueError: ``expr`` is not PromQL, with the parser's reason.
    """
    try:
        tree = promql_parser.parse(expr)
    except ValueError as exc:
        raise ValueError(f"not PromQL ({exc}): {expr!r}") from None
    names: set[str] = set()

    def visit(node: object) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            if node.name:
                names.add(node.name)
            for matcher in node.matchers.matchers:
                if matcher.name == "__name__" and matcher.op == promql_parser.MatchOp.Equal:
                    names.add(matcher.value)

    promql_parser.walk(tree, pre_visit=visit)
    return frozenset(names)
