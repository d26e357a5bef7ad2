"""Build the docs site from the docstrings: the API reference and one page per workload kind.

``OUT_DIR`` receives

* ``api/`` — the API reference of every public module of :mod:`inferstack` (no ``_`` in its dotted name), rendered
  by pdoc from the docstrings (reStructuredText roles such as ``:class:`~inferstack.config.kinds.WorkloadKind```
  become links);
* ``kinds/<kind>.html`` — one page per kind of the registry (:data:`inferstack.config.kinds.KINDS`, never a list of
  our own): the fields of its config model and of every model nested in it (type, default, description: the
  field docstrings), the rules of the kind (id and title) and the platform rules that judge every config;
* ``index.html`` — the kinds, the platform rules and a link to the API reference.

The pages are deterministic (no dates, registry order). pdoc's warnings (a module that does not import, an
``__all__`` entry that does not resolve) are printed and fail the build.

Usage: ``python scripts/build_docs.py OUT_DIR`` (``make docs`` writes ``docs/_build``).
"""

from __future__ import annotations

import html
import importlib
import inspect
import json
import pkgutil
import re
import shutil
import sys
import types
import typing
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python

import inferstack
from inferstack.config.base import require_field_descriptions
from inferstack.config.kinds import KINDS, WorkloadKind
from inferstack.rules import PLATFORM_RULES
from inferstack.rules.base import Rule

API = "api"
KINDS_DIR = "kinds"

_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.45; }
table { border-collapse: collapse; width: 100%; margin-bottom: 1.5rem; }
th, td { border: 1px solid #ddd; padding: .3rem .5rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
code { background: #f4f4f4; padding: 0 .2rem; font-size: .92em; overflow-wrap: anywhere; }
td:first-child { white-space: nowrap; }
td p { margin: 0 0 .4rem; }
td p:last-child { margin-bottom: 0; }
"""


@cache
def public_modules() -> tuple[str, ...]:
    """Every module of the package whose dotted name has no part starting with ``_``, sorted."""
    found = pkgutil.walk_packages(inferstack.__path__, "inferstack.")
    names = [m.name for m in found if not any(part.startswith("_") for part in m.name.split("."))]
    return ("inferstack", *sorted(names))


# --- the API reference (pdoc) -----------------------------------------------------------------------------------

#: A reST role, its target possibly wrapped over lines: ``:class:`~inferstack.constructs.\n    litellm.X```.
_ROLE = re.compile(r"(?P<role>(?::py)?:(?:mod|func|data|const|class|meth|attr|exc|obj):)`~?(?P<target>[^`]+)`")


def _target(match: re.Match[str]) -> str:
    return re.sub(r"\s+", "", match["target"])


def _plain_roles(docstring: str) -> str:
    """Targets of reST roles without Sphinx's ``~`` and without line breaks, so pdoc links them."""
    return _ROLE.sub(lambda m: f"{m['role']}`{_target(m)}`", docstring)


@contextmanager
def _sphinx_roles() -> Iterator[None]:
    """pdoc's reST conversion, with :func:`_plain_roles` first (restored after)."""
    import pdoc.docstrings

    convert = pdoc.docstrings.convert

    def patched(docstring: str, docformat: str, source_file: Path | None) -> str:
        return convert(_plain_roles(docstring), docformat, source_file)

    pdoc.docstrings.convert = patched
    try:
        yield
    finally:
        pdoc.docstrings.convert = convert


def _import_all(names: tuple[str, ...]) -> None:
    """Import every module before pdoc does: pdoc imports with ``subprocess.Popen`` disarmed, which would keep jsii
    (aws-cdk-lib, cdk8s) from starting its Node process. Names of an ``__all__`` that a module resolves lazily
    (PEP 562 ``__getattr__``: ``inferstack.build_platform``) are set on it, since pdoc reads the module's
    ``__dict__``."""
    for name in names:
        module = importlib.import_module(name)
        for member in getattr(module, "__all__", ()):
            if member not in vars(module):
                setattr(module, member, getattr(module, member))


def api_reference(out: Path) -> list[str]:
    """Render the API reference of :func:`public_modules` into ``out``; return pdoc's warnings."""
    import pdoc.doc
    import pdoc.render

    names = public_modules()
    _import_all(names)
    with warnings.catch_warnings(record=True) as caught, _sphinx_roles():
        warnings.simplefilter("always")
        pdoc.render.configure(docformat="restructuredtext", show_source=False, search=False)
        modules = {name: pdoc.doc.Module.from_name(name) for name in names}
        for module in modules.values():
            path = out / f"{module.fullname.replace('.', '/')}.html"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(pdoc.render.html_module(module, modules), encoding="utf-8")
        (out / "index.html").write_text(pdoc.render.html_index(modules), encoding="utf-8")
    return [f"{w.category.__name__}: {w.message}" for w in caught]


# --- the kind pages ---------------------------------------------------------------------------------------------


def _models(annotation: Any) -> Iterator[type[BaseModel]]:
    """The config models ``annotation`` names (``X | None``, ``list[X]``, ``dict[str, X]``, ``Annotated[X, …]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in typing.get_args(annotation):
        yield from _models(arg)


def nested_models(model: type[BaseModel]) -> list[type[BaseModel]]:
    """``model`` and every config model its fields hold, depth first in field order, each once."""
    found: list[type[BaseModel]] = []

    def visit(current: type[BaseModel]) -> None:
        if current in found:
            return
        found.append(current)
        for field in current.model_fields.values():
            for inner in _models(field.annotation):
                visit(inner)

    visit(model)
    return found


def _anchor(model: type[BaseModel]) -> str:
    return f"model-{model.__name__}"


def type_html(annotation: Any) -> str:
    """A field's type as a reader writes it (``int | None``, ``tuple[LoraAdapter, ...]``, an enum as its values),
    models linked to their table."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is type(None) or annotation is None:
        return "None"
    if annotation is Any:
        return "Any"
    if origin is typing.Annotated:
        return type_html(args[0])
    if origin is typing.Literal:
        return " | ".join(html.escape(json.dumps(to_jsonable_python(arg))) for arg in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_html(arg) for arg in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        inner = ", ".join("..." if arg is Ellipsis else type_html(arg) for arg in args)
        return f"{html.escape(name)}[{inner}]" if args else html.escape(name)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return " | ".join(html.escape(json.dumps(to_jsonable_python(member))) for member in annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f'<a href="#{_anchor(annotation)}">{html.escape(annotation.__name__)}</a>'
    if isinstance(annotation, type):
        return html.escape(annotation.__name__)
    return html.escape(str(annotation).replace("typing.", ""))


def schema_required(model: type[BaseModel]) -> frozenset[str]:
    """The keys ``model``'s JSON Schema requires: the required fields, and ``kind`` of every kind but the default
    one (an editor matches one branch of ``workloads[]``; :func:`inferstack.config.workloads._kind_in_schema`)."""
    return frozenset(model.model_json_schema(by_alias=True).get("required", ()))


def default_text(field: FieldInfo, *, required: bool = False) -> str | None:
    """A field's default as JSON, keys sorted (as ``inferstack schema`` gives it); None for a field the config
    must set."""
    if required or field.is_required():
        return None
    value = field.get_default(call_default_factory=True)
    return json.dumps(to_jsonable_python(value, by_alias=True), sort_keys=True)


def text_html(text: str) -> str:
    """A docstring as HTML: ``literals``, reST roles and `x` as code, blank lines as paragraphs."""
    escaped = html.escape(inspect.cleandoc(text))
    escaped = _ROLE.sub(lambda m: f"<code>{_target(m)}</code>", escaped)
    escaped = re.sub(r"``(.+?)``", r"<code>\1</code>", escaped, flags=re.DOTALL)
    escaped = re.sub(r"(?<![\w`])`([^`]+?)`(?![\w`])", r"<code>\1</code>", escaped)
    return "".join(f"<p>{para.strip()}</p>" for para in re.split(r"\n\s*\n", escaped) if para.strip())


def _api_link(obj: Any, depth: int) -> str | None:
    """The API reference's page (and anchor) of a class or function, from a page ``depth`` folders deep."""
    module = getattr(obj, "__module__", "")
    if module not in public_modules():
        return None
    return f"{'../' * depth}{API}/{module.replace('.', '/')}.html#{obj.__qualname__}"


def _page(title: str, body: str) -> str:
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)} — inferstack</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"{body}\n</body>\n</html>\n"
    )


def kind_rules(kind: WorkloadKind) -> list[Rule]:
    """The rules of ``kind`` (its groups flattened), each id once, in order."""
    rules: dict[str, Rule] = {}
    for group in kind.rules:
        for rule in group:
            rules.setdefault(rule.id, rule)
    return list(rules.values())


def _rules_table(rules: list[Rule]) -> str:
    rows = [
        f'<tr id="rule-{html.escape(rule.id)}"><td><code>{html.escape(rule.id)}</code></td>'
        f"<td>{text_html(rule.title)}</td>"
        f"<td>{'yes' if rule.acknowledgeable else 'no: the platform cannot be built while it fails'}</td></tr>"
        for rule in rules
    ]
    return (
        "<table>\n<tr><th>Rule</th><th>What it checks</th><th>Acknowledgeable</th></tr>\n"
        + "\n".join(rows)
        + "\n</table>"
    )


def _fields_table(model: type[BaseModel]) -> str:
    rows = []
    required = schema_required(model)
    for name, field in model.model_fields.items():
        key = field.alias or name
        shown = f"<code>{html.escape(key)}</code>"
        if key != name:
            shown += f" (Python: <code>{html.escape(name)}</code>)"
        default = default_text(field, required=key in required)
        default_cell = "<em>required</em>" if default is None else f"<code>{html.escape(default)}</code>"
        rows.append(
            f'<tr id="{html.escape(model.__name__)}.{html.escape(key)}"><td>{shown}</td>'
            f"<td><code>{type_html(field.annotation)}</code></td><td>{default_cell}</td>"
            f"<td>{text_html(field.description or '')}</td></tr>"
        )
    return (
        "<table>\n<tr><th>Field</th><th>Type</th><th>Default</th><th>Description</th></tr>\n"
        + "\n".join(rows)
        + "\n</table>"
    )


def kind_page(kind: WorkloadKind) -> str:
    """The page of one kind: what it is, its rules, the fields of its config model and of the models nested in it."""
    model = kind.config
    link = _api_link(model, 1)
    model_ref = f"<code>{html.escape(model.__name__)}</code>"
    if link:
        model_ref = f'<a href="{link}">{model_ref}</a>'
    if kind.endpoint is not None:
        port = kind.endpoint.port or 80
        endpoint = (
            f"port {port}, path <code>{html.escape(kind.endpoint.path or '/')}</code>, LiteLLM provider "
            f"<code>{html.escape(kind.endpoint.provider)}</code>"
        )
    else:
        endpoint = f"none — {html.escape(kind.no_endpoint)}"
    facts = [
        ("Config model", model_ref),
        ("Operators", ", ".join(f"<code>{html.escape(o)}</code>" for o in kind.operators) or "none"),
        ("OpenAI-compatible endpoint", endpoint),
        ("Examples", ", ".join(f"<code>examples/{html.escape(e)}</code>" for e in kind.examples) or "none"),
    ]
    platform = ", ".join(
        f'<a href="../index.html#rule-{html.escape(r.id)}"><code>{html.escape(r.id)}</code></a>' for r in PLATFORM_RULES
    )
    sections = []
    for nested in nested_models(model):
        doc = inspect.getdoc(nested) if nested.__doc__ else ""
        first = doc.split("\n\n")[0] if doc else ""
        sections.append(
            f'<h3 id="{_anchor(nested)}"><code>{html.escape(nested.__name__)}</code></h3>\n'
            f"{text_html(first)}\n{_fields_table(nested)}"
        )
    return _page(
        f"kind {kind.name}",
        f'<p><a href="../index.html">inferstack docs</a> › kinds</p>\n'
        f"<h1>Kind <code>{html.escape(kind.name)}</code></h1>\n"
        f"{text_html(kind.summary)}\n"
        "<dl>\n" + "\n".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts) + "\n</dl>\n"
        "<h2>Rules</h2>\n"
        f"<p>Checked by <code>inferstack check</code> and before every synth, on each <code>{html.escape(kind.name)}"
        "</code> workload:</p>\n"
        f"{_rules_table(kind_rules(kind))}\n"
        f"<p>Every config is also judged by the platform rules: {platform}.</p>\n"
        "<h2>Fields</h2>\n"
        f"<p>One entry of <code>workloads[]</code> with <code>kind: {html.escape(kind.name)}</code>, then each model "
        "nested in it.</p>\n" + "\n".join(sections),
    )


def index_page() -> str:
    rows = "\n".join(
        f'<tr><td><a href="{KINDS_DIR}/{html.escape(kind.name)}.html"><code>{html.escape(kind.name)}</code></a></td>'
        f"<td>{text_html(kind.summary)}</td></tr>"
        for kind in KINDS.values()
    )
    return _page(
        "docs",
        "<h1>inferstack</h1>\n"
        f'<p>The <a href="{API}/inferstack.html">API reference</a> (from the docstrings) and, per workload kind, '
        "the fields of its config and the rules that judge it.</p>\n"
        f"<h2>Workload kinds</h2>\n<table>\n<tr><th>Kind</th><th>What it serves</th></tr>\n{rows}\n</table>\n"
        "<h2>Platform rules</h2>\n<p>They judge every config, whatever its kinds.</p>\n"
        f"{_rules_table(list(PLATFORM_RULES))}",
    )


def kind_pages(out: Path) -> list[Path]:
    """Write ``index.html`` and one ``kinds/<kind>.html`` per registered kind into ``out``; return the kind pages."""
    (out / KINDS_DIR).mkdir(parents=True, exist_ok=True)
    pages = []
    for kind in KINDS.values():
        page = out / KINDS_DIR / f"{kind.name}.html"
        page.write_text(kind_page(kind), encoding="utf-8")
        pages.append(page)
    (out / "index.html").write_text(index_page(), encoding="utf-8")
    return pages


def build(out: Path) -> list[str]:
    """The whole site into ``out`` (what an earlier build wrote there replaced); return pdoc's warnings."""
    for old in (out / API, out / KINDS_DIR):
        if old.is_dir():
            shutil.rmtree(old)
    out.mkdir(parents=True, exist_ok=True)
    problems = api_reference(out / API)
    kind_pages(out)
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out = Path(argv[0])
    require_field_descriptions("the docs")
    problems = build(out)
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    print(f"{out}: {len(KINDS)} kind pages, API reference of {len(public_modules())} modules")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
