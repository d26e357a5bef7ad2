"""The docs site (``make docs``, ``scripts/build_docs.py``): built once here, as CI runs it — GIVEN the registry and
the docstrings, THEN there is a page per registered kind listing every field of its config (and of the models
nested in it) with the default ``inferstack schema`` gives, and the rules that judge the kind; the API reference
holds the docstrings (``build_platform``'s among them); and pdoc warns of nothing (a module that does not import,
an ``__all__`` entry that does not resolve)."""

from __future__ import annotations

import html
import importlib.util
import inspect
import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import pytest

from inferstack.config import InferstackConfig
from inferstack.config.kinds import KINDS, WorkloadKind, register_kind, unregister_kind
from inferstack.config.workloads import WorkloadBase
from inferstack.kinds import BUILT_IN_KINDS
from inferstack.rules import PLATFORM_RULES, Finding, Rule
from inferstack.stacks import build_platform

ROOT = Path(__file__).resolve().parents[1]
KIND_IDS = [kind.name for kind in BUILT_IN_KINDS]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_docs", ROOT / "scripts" / "build_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_docs = _script()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The whole site, built once: its folder and pdoc's warnings."""
    out = tmp_path_factory.mktemp("docs")
    return out, build_docs.build(out)


def _text(fragment: str) -> str:
    """What a reader sees of an HTML fragment: no tags, entities decoded, whitespace collapsed."""
    spaced = re.sub(r"</?(p|td|tr|th|h\d|div|dd|dt|li|br)\b[^>]*>", " ", fragment)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", spaced)).split())


def _plain(docstring: str) -> str:
    """A docstring as its rendered text: reST roles and literals as their bare text."""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", lambda m: re.sub(r"\s+", "", m[1]), docstring)
    return " ".join(text.replace("``", "").split())


def _rows(page: str) -> dict[str, list[str]]:
    """``id`` of each table row → the text of its cells."""
    return {
        html.unescape(m["id"]): [_text(cell) for cell in re.findall(r"<td>(.*?)</td>", m["row"], re.DOTALL)]
        for m in re.finditer(r'<tr id="(?P<id>[^"]+)">(?P<row>.*?)</tr>', page, re.DOTALL)
    }


def _schema_models(defs: dict[str, Any], name: str) -> Iterator[str]:
    """``name`` and every model definition its properties reach through ``$ref`` (the JSON Schema's view)."""
    seen: list[str] = []

    def refs(node: Any) -> Iterator[str]:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                yield node["$ref"].rsplit("/", 1)[-1]
            for value in node.values():
                yield from refs(value)
        elif isinstance(node, list):
            for item in node:
                yield from refs(item)

    def visit(current: str) -> None:
        if current in seen or "properties" not in defs[current]:
            return  # enums are definitions without properties
        seen.append(current)
        for ref in refs(defs[current]["properties"]):
            visit(ref)

    visit(name)
    yield from seen


@pytest.fixture(scope="module")
def schema_defs() -> dict[str, Any]:
    """The model definitions of ``inferstack schema``, by class name."""
    return InferstackConfig.model_json_schema(by_alias=True)["$defs"]


def test_the_build_warns_of_nothing(site):
    _, problems = site
    assert problems == []


def test_there_is_a_page_for_every_registered_kind_and_the_index_links_each(site):
    out, _ = site
    index = (out / "index.html").read_text()
    assert sorted(p.stem for p in (out / "kinds").glob("*.html")) == sorted(KINDS)
    for name in KINDS:
        assert f'href="kinds/{name}.html"' in index
    assert 'href="api/inferstack.html"' in index and (out / "api" / "inferstack.html").is_file()


@pytest.mark.parametrize("kind", BUILT_IN_KINDS, ids=KIND_IDS)
def test_each_kind_page_lists_every_field_with_its_type_default_and_description(site, schema_defs, kind):
    """Every property of the kind's schema definition, and of every definition nested in it, is a row: the default
    is the schema's (JSON), a required field says so, and the description is the field docstring."""
    out, _ = site
    rows = _rows((out / "kinds" / f"{kind.name}.html").read_text())
    models = list(_schema_models(schema_defs, kind.config.__name__))
    assert models[0] == kind.config.__name__ and len(models) > 1
    for model in models:
        definition = schema_defs[model]
        for key, prop in definition["properties"].items():
            row = rows.get(f"{model}.{key}")
            assert row is not None, f"{kind.name}: {model}.{key} is missing"
            _, type_, default, description = row
            assert type_, f"{model}.{key} has no type"
            if key in definition.get("required", ()):
                assert default == "required", f"{model}.{key}"
            elif "default" in prop:
                assert default == json.dumps(prop["default"], sort_keys=True), f"{model}.{key}"
            else:
                assert default, f"{model}.{key} (a default_factory) shows no default"
            assert description == _plain(prop["description"]), f"{model}.{key}"
    assert {rid.split(".", 1)[0] for rid in rows if not rid.startswith("rule-")} == set(models)


@pytest.mark.parametrize("kind", BUILT_IN_KINDS, ids=KIND_IDS)
def test_each_kind_page_lists_the_rules_that_judge_it(site, kind):
    out, _ = site
    page = (out / "kinds" / f"{kind.name}.html").read_text()
    rows = _rows(page)
    rules = {rule.id: rule for group in kind.rules for rule in group}
    assert rules
    for rule_id, rule in rules.items():
        assert rows[f"rule-{rule_id}"][:2] == [rule_id, _plain(rule.title)]
    for rule in PLATFORM_RULES:
        assert f'href="../index.html#rule-{rule.id}"' in page
    index = _rows((out / "index.html").read_text())
    assert {rid for rid in index if rid.startswith("rule-")} == {f"rule-{r.id}" for r in PLATFORM_RULES}


def test_the_api_reference_holds_the_docstrings(site):
    out, _ = site
    page = (out / "api" / "inferstack" / "stacks.html").read_text()
    assert 'id="build_platform"' in page
    doc = inspect.getdoc(build_platform)
    assert doc
    assert _plain(doc.split("\n\n")[0]) in _text(page)
    # a reST role of the docstrings becomes a link, not literal ``:class:`` text
    assert ":class:" not in page and re.search(r'href="[^"]*\.html#RuleViolationError"', page)


class ToyWorkloadConfig(WorkloadBase):
    """A toy kind, registered by this test alone."""

    kind: Literal["toy"] = "toy"
    pool: str
    """The pool it runs on."""
    greeting: str = "hello"
    """What it says. Default ``hello``."""


def check_greeting(config: InferstackConfig) -> Iterator[Finding]:
    yield from ()


TOY = WorkloadKind(
    name="toy",
    summary="A toy kind of the docs test",
    config=ToyWorkloadConfig,
    plan=lambda *args: None,
    chart=lambda *args, **kwargs: None,
    paths=lambda *args: None,
    rules=((Rule(id="TOY-GREETING", title="A toy greets politely", check=check_greeting),),),
    no_endpoint="a toy serves nothing",
)


def test_a_kind_registered_by_anyone_gets_its_page(tmp_path):
    """The pages follow the registry: a kind registered here, in the test alone, gets its page (fields, default,
    rule) and its index row; unregistered, it is gone from the next build."""
    register_kind(TOY)
    try:
        pages = build_docs.kind_pages(tmp_path)
        page = (tmp_path / "kinds" / "toy.html").read_text()
    finally:
        unregister_kind("toy")
    assert tmp_path / "kinds" / "toy.html" in pages
    rows = _rows(page)
    assert rows["ToyWorkloadConfig.greeting"][2:] == ['"hello"', "What it says. Default hello."]
    assert rows["ToyWorkloadConfig.pool"][2] == "required"
    assert rows["rule-TOY-GREETING"][:2] == ["TOY-GREETING", "A toy greets politely"]
    assert 'href="kinds/toy.html"' in (tmp_path / "index.html").read_text()
    assert "toy" not in {p.stem for p in build_docs.kind_pages(tmp_path / "after")}
