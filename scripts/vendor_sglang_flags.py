"""Vendor SGLang's ``launch_server`` flag list from a release wheel into compact catalog data.

SGLang's parser cannot be imported without torch and the CUDA kernels, so the list is read from the source, the way
the parser builds it (sglang 0.5.19, ``sglang/srt/server_args.py`` and ``sglang/srt/arg_groups/arg_utils.py``; from
0.5.20 the fields live in the ``sglang/srt/arg_groups/fields/`` classes that ``server_args.py``'s
``_INPUT_NAMESPACES`` lists and ``collect_input_fields`` assembles into ``ServerArgs``, read the same way — read in
the 0.5.20 to 0.5.23 wheels):

* every ``ServerArgs`` field annotated ``A[T, Arg(...)]`` or ``A[T, "help"]`` (``add_cli_args_from_dataclass``): the
  flag ``Arg.cli_name`` or ``--<field-name>`` with ``_`` → ``-``, plus ``Arg.aliases``; ``no_cli`` fields are left
  out. ``nargs``: a custom ``action`` decides (``argparse.BooleanOptionalAction``: none, with ``--no-<flag>``; other
  actions: their ``action_kwargs``'s ``nargs``); a ``Literal`` takes one value of its choices; a ``List`` without a
  ``type_parser`` takes ``Arg.nargs`` or ``+``; ``bool`` is ``store_true``; anything else one value (``Arg.nargs``
  when set). ``choices`` are kept when written as literals;
* every ``parser.add_argument`` call of ``ServerArgs.add_cli_args`` (deprecated spellings, dynamic choices,
  ``--config``): a ``DeprecatedAction`` with an ``error_message`` stops the server (``parser.error``), so it is left
  out; the other ``Deprecated…`` actions still work and are marked ``deprecated``; their ``nargs`` as the action
  classes define them (``sglang/srt/arg_groups/argparse_actions.py``: 0 for ``DeprecatedAction``,
  ``DeprecatedStoreTrueAction`` and ``DeprecatedStoreConstAction``, the call's own for ``DeprecatedAliasStoreAction``),
  unless the call passes ``nargs`` itself (which the action takes over its class's).

SGLang's parser is a plain ``argparse.ArgumentParser``: ``_`` and ``-`` are not interchangeable (``"argparse":
"plain"`` in the data). Output: ``inferstack/catalog/engine_flag_data/sglang-<version>.json``, in the vLLM lists'
format, with ``provenance`` (the wheel's name and sha256, the source file's sha256).

Usage: ``python scripts/vendor_sglang_flags.py WHEEL [--out DIR] [--check]`` (the wheel: ``pip download
sglang==0.5.19 --no-deps``).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

from flag_data import flag_data_text, write_or_check

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "inferstack" / "catalog" / "engine_flag_data"
SOURCE = "sglang/srt/server_args.py"
#: Flags inferstack renders for every SGLang workload (a subset of inferstack.config.sglang.SGLANG_MANAGED_FLAGS): a
#: list without them was read from a parser laid out otherwise.
_RENDERED = {"--model-path", "--served-model-name", "--host", "--port", "--tp-size", "--enable-metrics", "--revision"}
#: Actions of argparse_actions.py that take no value (their ``nargs=0`` default).
NO_VALUE_ACTIONS = {"DeprecatedAction", "DeprecatedStoreTrueAction", "DeprecatedStoreConstAction"}


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def _keywords(call: ast.Call) -> dict[str, ast.AST]:
    return {kw.arg: kw.value for kw in call.keywords if kw.arg is not None}


def _dict_value(node: ast.AST | None, key: str) -> Any:
    """The literal value under ``key`` of a dict display (``{"type": str, "nargs": "*"}`` → ``"*"``), or None."""
    if not isinstance(node, ast.Dict):
        return None
    for k, v in zip(node.keys, node.values, strict=True):
        if isinstance(k, ast.Constant) and k.value == key:
            return _literal(v)
    return None


def _unwrap_optional(node: ast.AST) -> ast.AST:
    """``Optional[X]`` / ``Union[X, None]`` / ``X | None`` → X (when one non-None member)."""
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("Optional", "typing.Optional"):
        return node.slice
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("Union", "typing.Union"):
        members = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        rest = [m for m in members if ast.unparse(m) != "None"]
        return rest[0] if len(rest) == 1 else node
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        rest = [m for m in (node.left, node.right) if ast.unparse(m) != "None"]
        return rest[0] if len(rest) == 1 else node
    return node


def _field_flag(name: str, annotation: ast.Subscript) -> tuple[str, dict[str, Any]] | None:
    """The flag of one ``ServerArgs`` field (``add_cli_args_from_dataclass``), or None when it has no CLI."""
    elements = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    kind, meta = elements[0], None
    for element in elements[1:]:
        if isinstance(element, ast.Call) and ast.unparse(element.func) == "Arg":
            meta = _keywords(element)
            break
        if isinstance(element, ast.Constant) and isinstance(element.value, str):
            meta = {}
            break
    if meta is None or _literal(meta.get("no_cli", ast.Constant(False))):
        return None
    flag = _literal(meta["cli_name"]) if "cli_name" in meta else "--" + name.replace("_", "-")
    spec: dict[str, Any] = {}
    aliases = _literal(meta["aliases"]) if "aliases" in meta else None
    if aliases:
        spec["aliases"] = list(aliases)
    arg_nargs = _literal(meta["nargs"]) if "nargs" in meta else None
    choices = _literal(meta["choices"]) if "choices" in meta else None
    if "action" in meta:
        action = ast.unparse(meta["action"])
        if action == "argparse.BooleanOptionalAction":
            spec["negatives"] = ["--no-" + flag.removeprefix("--")]
            spec["nargs"] = 0
        else:
            spec["nargs"] = _dict_value(meta.get("action_kwargs"), "nargs")
        return flag, spec
    inner = _unwrap_optional(kind)
    head = ast.unparse(inner.value) if isinstance(inner, ast.Subscript) else ast.unparse(inner)
    if head in ("Literal", "typing.Literal"):
        values = _literal(inner.slice)  # type: ignore[union-attr]
        spec["choices"] = list(choices or (values if isinstance(values, tuple) else (values,)))
        spec["nargs"] = None
    elif head in ("List", "list", "typing.List") and "type_parser" not in meta:
        spec["nargs"] = arg_nargs or "+"
    elif head == "bool":
        spec["nargs"] = 0
    else:
        spec["nargs"] = arg_nargs
    if choices and "choices" not in spec and spec["nargs"] != 0:
        spec["choices"] = list(choices)
    return flag, spec


def _manual_flags(function: ast.FunctionDef) -> dict[str, dict[str, Any]]:
    """The ``parser.add_argument`` calls of ``add_cli_args`` (beside the dataclass-derived ones)."""
    flags: dict[str, dict[str, Any]] = {}
    for node in ast.walk(function):
        if not (isinstance(node, ast.Call) and ast.unparse(node.func) == "parser.add_argument"):
            continue
        names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        keywords = _keywords(node)
        action = ast.unparse(keywords["action"]) if "action" in keywords else None
        if action == "DeprecatedAction" and "error_message" in keywords:
            continue  # parser.error: the server stops
        spec: dict[str, Any] = {}
        if len(names) > 1:
            spec["aliases"] = names[1:]
        if "nargs" in keywords:  # an explicit nargs overrides the action class's (0.5.23's --monokernel-backend:
            spec["nargs"] = _literal(keywords["nargs"])  # DeprecatedStoreConstAction with nargs=None, choices=["amd"])
        elif action in NO_VALUE_ACTIONS or action in ("'store_true'", "'store_false'"):
            spec["nargs"] = 0
        else:
            spec["nargs"] = None
        choices = _literal(keywords["choices"]) if "choices" in keywords else None
        if choices and spec["nargs"] != 0:
            spec["choices"] = list(choices)
        if action is not None and action.startswith("Deprecated"):
            spec["deprecated"] = True
        flags[names[0]] = spec
    return flags


def _class_flags(body: list[ast.stmt]) -> dict[str, dict[str, Any]]:
    """The flags of the ``A[T, …]`` fields declared in a class body."""
    flags: dict[str, dict[str, Any]] = {}
    for node in body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            annotation = node.annotation
            if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) in ("A", "Annotated"):
                found = _field_flag(node.target.id, annotation)
                if found is not None:
                    flags[found[0]] = found[1]
    return flags


def input_namespaces(tree: ast.Module) -> list[tuple[str, str]]:
    """``(class, module path in the wheel)`` of each class of ``_INPUT_NAMESPACES`` (from 0.5.20 the fields live in
    ``sglang/srt/arg_groups/fields/`` classes that ``collect_input_fields`` assembles into ``ServerArgs``), from
    the ``from sglang.srt.arg_groups.fields.<m> import …`` lines; none in a release that declares them in
    ``ServerArgs`` itself (0.5.19)."""
    listed: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(ast.unparse(t) == "_INPUT_NAMESPACES" for t in node.targets):
            assert isinstance(node.value, ast.List | ast.Tuple)
            listed = [ast.unparse(element) for element in node.value.elts]
    modules: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sglang.srt.arg_groups.fields."):
            for alias in node.names:
                modules[alias.asname or alias.name] = node.module.replace(".", "/") + ".py"  # type: ignore[union-attr]
    missing = [name for name in listed if name not in modules]
    if missing:
        raise SystemExit(f"_INPUT_NAMESPACES names {missing}, imported from no arg_groups.fields module")
    return [(name, modules[name]) for name in listed]


def extract(source: str, modules: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """Every flag ``ServerArgs.add_cli_args`` registers, keyed by its primary spelling: the fields of ``ServerArgs``
    and of its input namespaces (``modules``: path → source of each namespace class's module), then its manual
    ``add_argument`` calls (which win, as argparse would refuse a second registration)."""
    tree = ast.parse(source)
    (server_args,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ServerArgs"]
    flags: dict[str, dict[str, Any]] = {}
    for name, path in input_namespaces(tree):
        if modules is None or path not in modules:
            raise SystemExit(f"namespace {name}: its module {path} was not read")
        module = ast.parse(modules[path])
        (cls,) = [n for n in module.body if isinstance(n, ast.ClassDef) and n.name == name]
        flags.update(_class_flags(cls.body))
    flags.update(_class_flags(server_args.body))
    (add_cli_args,) = [n for n in server_args.body if isinstance(n, ast.FunctionDef) and n.name == "add_cli_args"]
    flags.update(_manual_flags(add_cli_args))
    return dict(sorted(flags.items()))


def _namespace_provenance(modules: dict[str, bytes]) -> dict[str, Any]:
    """``namespace_sources`` (each namespace module's sha256) for a release that has them (0.5.20+)."""
    return {"namespace_sources": {p: hashlib.sha256(t).hexdigest() for p, t in modules.items()}} if modules else {}


def render(wheel: Path) -> tuple[str, str]:
    """``(file name, JSON text)`` of the wheel's flag list."""
    match = re.match(r"^sglang-(\d+\.\d+\.\d+)-", wheel.name)
    if match is None:
        raise SystemExit(f"{wheel.name}: not an sglang release wheel (sglang-<version>-….whl)")
    version = match.group(1)
    with zipfile.ZipFile(wheel) as archive:
        source = archive.read(SOURCE)
        paths = sorted({path for _, path in input_namespaces(ast.parse(source))})
        modules = {path: archive.read(path) for path in paths}
    flags = extract(source.decode("utf-8"), {path: text.decode("utf-8") for path, text in modules.items()})
    missing = sorted(_RENDERED - {s for name, spec in flags.items() for s in (name, *spec.get("aliases", ()))})
    if missing:
        raise SystemExit(
            f"{wheel.name}: the flags inferstack renders are not all found ({', '.join(missing)}): this release's "
            "parser is laid out otherwise than those this script reads (0.5.19's ServerArgs fields, 0.5.20's "
            "arg_groups/fields namespaces) — nothing written"
        )
    data = {
        "argparse": "plain",
        "engine": "sglang",
        "provenance": {
            "method": "scripts/vendor_sglang_flags.py: read from the source (the parser needs torch to import)",
            "source": SOURCE,
            "source_sha256": hashlib.sha256(source).hexdigest(),
            **_namespace_provenance(modules),
            "wheel": wheel.name,
            "wheel_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        },
    }
    return f"sglang-{version}.json", flag_data_text(data, flags, version)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the data differs")
    args = parser.parse_args()
    name, text = render(args.wheel)
    return write_or_check(args.out / name, text, args.check)


if __name__ == "__main__":
    sys.exit(main())
