"""No error or finding message keeps an unrendered placeholder (issue 24 §10): every ``{name}`` of a message is
filled in before anyone reads it.

pydantic-core fills a ``PydanticCustomError`` template by replacing ``{name}`` with ``str(context[name])`` — it knows
no ``!r`` conversion and no format spec, and leaves a placeholder whose name is not in the context as it is. A plain
string with ``{name}`` handed to ``Finding``, ``PropError`` or any other error (a missing ``f`` prefix) is never
filled in at all. Both are caught twice: statically, over the source of every message, and at run time, over what
the rules and the config loader say about non-compliant configs."""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path
from typing import Any

import pytest

from inferstack.config import ConfigError, parse_config
from inferstack.rules import evaluate
from tests.rules.test_registry import BASE, CASES, DYNAMO_PD, NIM, P5_EFA_GROUP, merge, only_workload

PACKAGE = Path(__file__).resolve().parents[1] / "inferstack"
#: A placeholder as str.format or pydantic-core would read it: ``{name}``, ``{name!r}``, ``{name:>4}``.
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(![rsa])?(:[^{}]*)?\}")
#: What a reader must never see in a rendered message: ``{name}`` or ``{name!r}``.
UNRENDERED = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*(![rsa])?\}")
#: Calls whose arguments are messages a person reads (besides PydanticCustomError, whose template is checked apart).
MESSAGE_CALLS = re.compile(r"^(Finding|Problem|BackendProblem|\w*Error|\w*Exception)$")


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _literal_text(node: ast.AST) -> list[tuple[str, bool]]:
    """The literal parts of a message expression, each with whether it is a plain string (not part of an f-string):
    string constants, ``+`` concatenations, f-strings (their literal parts: ``{{x}}`` there renders ``{x}``) and the
    branches of a conditional."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [(node.value, True)]
    if isinstance(node, ast.JoinedStr):
        return [(part.value, False) for part in node.values if isinstance(part, ast.Constant)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal_text(node.left) + _literal_text(node.right)
    if isinstance(node, ast.IfExp):
        return _literal_text(node.body) + _literal_text(node.orelse)
    return []


def _template(node: ast.AST) -> str:
    return "".join(text for text, _ in _literal_text(node))


def _problems_in(source: str, where: str) -> list[str]:
    """Each placeholder of ``source``'s messages that stays as written, as ``<where>:<line>: …``."""
    problems = []
    for call in (n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)):
        name = _callee(call)
        if name == "PydanticCustomError" and len(call.args) >= 2:
            context = call.args[2] if len(call.args) > 2 else None
            keys = None
            if context is None:
                keys = set()
            elif isinstance(context, ast.Dict) and all(isinstance(k, ast.Constant) for k in context.keys):
                keys = {k.value for k in context.keys}  # type: ignore[union-attr]
            for match in PLACEHOLDER.finditer(_template(call.args[1])):
                if match[2] or match[3]:
                    problems.append(f"{where}:{call.lineno}: {match[0]} — pydantic-core renders only {{name}}")
                elif keys is not None and match[1] not in keys:
                    problems.append(f"{where}:{call.lineno}: {match[0]} has no {match[1]!r} in the error's context")
        elif MESSAGE_CALLS.match(name):
            for argument in [*call.args, *(k.value for k in call.keywords)]:
                for text, _ in _literal_text(argument):
                    for match in UNRENDERED.finditer(text):
                        problems.append(f"{where}:{call.lineno}: {match[0]} in a message that is never formatted")
    return problems


def test_no_message_template_leaves_a_placeholder_unrendered():
    problems = [
        problem
        for path in sorted(PACKAGE.rglob("*.py"))
        for problem in _problems_in(path.read_text(), str(path.relative_to(PACKAGE.parent)))
    ]
    assert problems == []


def test_the_scan_sees_each_way_a_placeholder_stays():
    """The scan itself: each mistake it is there for is reported (a scan that reports nothing proves nothing)."""
    source = (
        "raise PydanticCustomError('t', '{value!r} is bad', {'value': 1})\n"
        "raise PydanticCustomError('t', '{missing} is bad', {'value': 1})\n"
        "raise PydanticCustomError('t', 'is bad: ' + '{value}')\n"
        "yield Finding(rule='R', path='p', message='{name} is bad', fix=f'set {{name}}')\n"
        "raise PropError('{owner}: bad')\n"
        "raise PydanticCustomError('t', '{value} is bad', {'value': 1})\n"  # rendered: not reported
        "yield Finding(rule='R', path='p', message=f'{name} is bad', fix='set {name: x}')\n"  # YAML text: not reported
    )
    problems = _problems_in(source, "probe")
    assert sorted(p.split(":")[1] for p in problems) == ["1", "2", "3", "4", "4", "5"], problems


def _rendered(text: str) -> bool:
    return UNRENDERED.search(text) is None


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_every_rule_renders_its_findings(rule_id):
    report = evaluate(parse_config(CASES[rule_id][0]))
    findings = [*report.errors, *report.warnings, *(f for f, _ in report.acknowledged)]
    assert findings
    for finding in findings:
        assert _rendered(finding.message), finding
        assert _rendered(finding.fix), finding


def _workload(**fields: Any) -> dict[str, Any]:
    return merge(BASE, {"workloads": {0: fields}})


#: Configs refused with a message that once kept a ``{name!r}`` placeholder, and others of each section.
BAD_CONFIGS: dict[str, dict[str, Any]] = {
    "addon version": merge(BASE, {"cluster": {"addon_versions": {"vpc-cni": "1.19"}}}),
    "aibrix served name": merge(
        BASE, {"cluster": {"aibrix": {}}, "workloads": {0: {"aibrix": {}, "model": {"served_name": "other"}}}}
    ),
    "dynamo namespace": merge(
        merge(BASE, {"compute": {"node_groups": [P5_EFA_GROUP]}}),
        only_workload(**{**DYNAMO_PD, "name": "d" * 40, "namespace": "n" * 30}),
    ),
    "litellm fallback": merge(
        BASE,
        {
            "workloads": [
                *BASE["workloads"],
                {
                    "kind": "litellm",
                    "name": "gateway",
                    "pool": "general",
                    "master_key_secret": {"name": "litellm"},
                    "routes": [{"name": "chat", "backends": [{"workload": "qwen"}], "fallbacks": ["chta"]}],
                },
            ]
        },
    ),
    "nim hf key": merge(
        BASE, only_workload(**{**NIM, "model": {"id": "Qwen/Qwen3-8B", "hf_token_secret": {"name": "hf"}}})
    ),
    "nim profile id": merge(BASE, only_workload(**NIM, cache={"profile": {"ids": ["abc"]}})),
    "nim device id": merge(
        BASE, only_workload(**NIM, cache={"profile": {"gpu_product": "l40s", "gpu_device_ids": ["x"]}})
    ),
    "ollama model": merge(BASE, only_workload(kind="ollama", pool="general", models=["Qwen3:8b"])),
    "pool": _workload(pool="gpus"),
    "kind": _workload(kind="vlm"),
    "unknown key": _workload(replcas=2),
    "extra_args": _workload(engine={"extra_args": ["--max-num-seqs", "4"]}),
    "tag": merge(BASE, {"tags": {"aws:team": "ml"}}),
    "zone": merge(BASE, {"compute": {"karpenter_pools": {1: {"availability_zone": 5}}}}),
}


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
def test_every_config_error_is_rendered(name):
    with pytest.raises(ConfigError) as raised:
        parse_config(copy.deepcopy(BAD_CONFIGS[name]))
    assert raised.value.problems
    assert _rendered(raised.value.report()), raised.value.report()
