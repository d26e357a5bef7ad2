"""Dump every argparse action of vLLM's own `vllm serve` parser as JSON.

Usage: python dump_vllm_serve_flags.py OUT.json WHEEL_FILE WHEEL_SHA256 [TORCH_NOTE]

Run in a throwaway venv where the vLLM wheel was installed with --no-deps (plus its pure-Python
requirements and a CPU torch). Mirrors the format of shared/upstream/engines/vllm-*-serve-flags.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import inspect
import json
import sys

OUT, WHEEL_FILE, WHEEL_SHA = sys.argv[1], sys.argv[2], sys.argv[3]
# help text is only computed when "--help" is in sys.argv (vllm.engine.arg_utils.NEEDS_HELP)
sys.argv = ["vllm", "serve", "--help"]

import torch  # noqa: E402

import vllm  # noqa: E402
from vllm import platforms  # noqa: E402
from vllm.platforms.cpu import CpuPlatform  # noqa: E402

platforms.current_platform = CpuPlatform()  # same fallback `vllm bench` uses

import vllm._version as vv  # noqa: E402
import vllm.engine.arg_utils as au  # noqa: E402
import vllm.entrypoints.cli.serve as serve_mod  # noqa: E402
from vllm.utils.argparse_utils import FlexibleArgumentParser  # noqa: E402

assert au.NEEDS_HELP

# which module holds make_arg_parser / FrontendArgs in this version
mk = serve_mod.make_arg_parser
MK_MOD = mk.__module__
cli_args_mod = sys.modules[MK_MOD]
FrontendArgs = cli_args_mod.FrontendArgs
EngineArgs = au.EngineArgs
AsyncEngineArgs = au.AsyncEngineArgs

# ---- record which add_cli_args call registered each action ----
owner: dict[int, str] = {}
_stack: list[str] = []


def _wrap(cls, label):
    func = getattr(cls, "add_cli_args")  # function (staticmethod) or bound classmethod

    def wrapper(parser, *a, **k):
        before = {id(x) for x in parser._actions}
        _stack.append(label)
        try:
            res = func(parser, *a, **k)
        finally:
            _stack.pop()
        for act in parser._actions:
            if id(act) not in before and id(act) not in owner:
                owner[id(act)] = label
        return res

    setattr(cls, "add_cli_args", staticmethod(wrapper))


# inner call (EngineArgs) is wrapped first so its actions are attributed to it
_wrap(EngineArgs, "EngineArgs.add_cli_args")
_wrap(AsyncEngineArgs, "AsyncEngineArgs.add_cli_args")
_wrap(FrontendArgs, "FrontendArgs.add_cli_args")

top = FlexibleArgumentParser(description="vLLM CLI")
subparsers = top.add_subparsers(required=False, dest="subparser")
parser = serve_mod.ServeSubcommand().subparser_init(subparsers)

# ---- helpers ----
field_types: dict[str, dict[str, object]] = {}
for label, cls in (("frontend", FrontendArgs), ("engine", EngineArgs), ("async", AsyncEngineArgs)):
    field_types[label] = {f.name: f.type for f in dataclasses.fields(cls)}


def fmt_annotation(t):
    if t is None:
        return None
    if isinstance(t, str):
        return t
    if isinstance(t, type):
        return t.__name__
    return repr(t)


def qual(fn):
    if fn is None:
        return None
    if fn in (str, int, float, bool):
        return fn.__name__
    mod = getattr(fn, "__module__", None)
    q = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{mod}.{q}" if mod else q


def closure_vars(fn):
    try:
        return inspect.getclosurevars(fn).nonlocals
    except Exception:
        return {}


HR = "int (human-readable: 1k, 1K, 25.6k, 2M ...)"
HRA = "int (human-readable; -1 or 'auto' = auto)"


def value_type_of_callable(fn):
    if fn is None:
        return "str"
    if fn in (str, int, float):
        return fn.__name__
    if fn is json.loads:
        return "json"
    name = getattr(fn, "__name__", "")
    if name == "human_readable_int":
        return HR
    if name == "human_readable_int_or_auto":
        return HRA
    if name == "union_dict_and_str":
        return "json-object|str"
    if name == "parse_dataclass":
        # `cls` default argument (0.31: def parse_dataclass(val, cls=dataclass_cls))
        d = (fn.__defaults__ or ())
        cls = d[0] if d else closure_vars(fn).get("dataclass_cls")
        return f"json:{cls.__name__}"
    if name == "_optional_type":
        inner = closure_vars(fn).get("return_type")
        return f"optional[{value_type_of_callable(inner)}]"
    if name == "_parse_type":
        inner = closure_vars(fn).get("return_type")
        return value_type_of_callable(inner)
    if name == "<lambda>":
        return "str"
    return name


def jsonable(v, top_level=True):
    if v is argparse.SUPPRESS:
        return "==SUPPRESS=="
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        d = {}
        if top_level:
            d["__dataclass__"] = type(v).__name__
        for f in dataclasses.fields(v):
            d[f.name] = jsonable(getattr(v, f.name), False)
        return d
    if isinstance(v, enum.Enum):
        return jsonable(v.value, False)
    if isinstance(v, dict):
        return {str(k): jsonable(x, False) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x, False) for x in v]
    if isinstance(v, (set, frozenset)):
        items = [jsonable(x, False) for x in v]
        try:
            return sorted(items)
        except TypeError:
            return items
    if isinstance(v, torch.dtype):
        return str(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, type):
        return qual(v)
    if callable(v):
        return qual(v)
    return repr(v)


def action_kind(a):
    if isinstance(a, argparse._HelpAction):
        return "help"
    if isinstance(a, argparse.BooleanOptionalAction):
        return "boolean_optional"
    if isinstance(a, argparse._StoreTrueAction):
        return "store_true"
    if isinstance(a, argparse._StoreFalseAction):
        return "store_false"
    if isinstance(a, argparse._AppendAction):
        return "append"
    if type(a) is argparse._StoreAction:
        return "store"
    if isinstance(a, argparse._StoreConstAction):
        return "store_const"
    if isinstance(a, argparse._CountAction):
        return "count"
    return type(a).__name__


group_of = {}
for g in parser._action_groups:
    for a in g._group_actions:
        group_of[id(a)] = g.title

deprecated_set = set(getattr(FlexibleArgumentParser, "_deprecated", set()))
deprecated_set |= set(getattr(parser, "_deprecated", set()) or set())

registered: dict[int, list[str]] = {}
for opt, a in parser._option_string_actions.items():
    registered.setdefault(id(a), []).append(opt)

MK_LABEL = f"make_arg_parser ({MK_MOD})"
flags = []
for a in parser._actions:
    kind = action_kind(a)
    visible = list(a.option_strings)
    hidden = [o for o in registered.get(id(a), []) if o not in visible]
    is_bool_pair = isinstance(a, argparse.BooleanOptionalAction)
    negs = []
    if is_bool_pair:
        neg_set = getattr(a, "negative_option_strings", None)
        all_opts = visible + hidden
        if neg_set is not None:
            negs = [o for o in all_opts if o in neg_set]
        else:
            negs = [o for o in all_opts if o.startswith("--no-")]
    positives = [o for o in visible + hidden if o not in negs]
    longs = [o for o in positives if o.startswith("--")]
    if a.option_strings:
        name = longs[0] if longs else positives[0]
    else:
        name = a.dest
    aliases = [o for o in positives if o != name and o in visible]
    definer = owner.get(id(a))
    if kind == "help":
        defined_by, category = "argparse", "argparse"
    elif definer is None:
        defined_by, category = MK_LABEL, "frontend"
    else:
        defined_by = definer
        category = "frontend" if definer.startswith("FrontendArgs") else "engine"
    ann = None
    if definer == "FrontendArgs.add_cli_args":
        ann = field_types["frontend"].get(a.dest)
    elif definer in ("EngineArgs.add_cli_args", "AsyncEngineArgs.add_cli_args"):
        ann = field_types["async"].get(a.dest, field_types["engine"].get(a.dest))
    if kind == "help":
        vt = None
    elif is_bool_pair or kind in ("store_true", "store_false"):
        vt = "bool"
    else:
        vt = value_type_of_callable(a.type)
    entry = {
        "name": name,
        "option_strings": visible,
        "hidden_option_strings": hidden,
        "aliases": aliases,
        "negative_option": next((o for o in negs if o in visible), negs[0] if negs else None),
        "negative_options": negs,
        "boolean_pair": is_bool_pair,
        "positional": not a.option_strings,
        "dest": a.dest,
        "action": kind,
        "action_class": type(a).__name__,
        "value_type": vt,
        "argparse_type": qual(a.type),
        "nargs": a.nargs,
        "choices": jsonable(list(a.choices), False) if a.choices is not None else None,
        "metavar": a.metavar,
        "default": jsonable(a.default),
        "const": jsonable(a.const, False),
        "required": bool(a.required),
        "deprecated": bool(getattr(a, "deprecated", False)) or a in deprecated_set,
        "category": category,
        "argparse_group": group_of.get(id(a)),
        "defined_by": defined_by,
        "field_annotation": fmt_annotation(ann),
    }
    d = a.default
    if d is not None and d is not argparse.SUPPRESS and not isinstance(d, (bool, int, float, str, list, dict)):
        entry["default_python_type"] = type(d).__name__
        if dataclasses.is_dataclass(d):
            entry["default_is_config_object"] = True
            entry["default_note"] = (
                "Config object instantiated by vLLM at parser-build time on the CPU platform with torch "
                f"{torch.__version__}; values set in __post_init__ (e.g. CompilationConfig "
                "inductor_compile_config/custom_ops/backend) can differ on a CUDA host."
            )
    if getattr(a.type, "__name__", "") == "<lambda>":
        try:
            entry["argparse_type_source"] = inspect.getsource(a.type).strip()
        except Exception as e:  # pragma: no cover
            entry["argparse_type_source"] = f"<unavailable: {e}>"
    entry["help"] = a.help
    flags.append(entry)

counts = {
    "total": len(flags),
    "frontend": sum(f["category"] == "frontend" for f in flags),
    "engine": sum(f["category"] == "engine" for f in flags),
}
meta = {
    "vllm_version": vv.version,
    "commit_id": vv.commit_id,
    "torch": torch.__version__,
    "make_arg_parser_module": MK_MOD,
    "python": sys.version.split()[0],
}
doc = {"_meta": meta, "counts": counts, "flags": flags}
with open(OUT, "w") as fh:
    json.dump(doc, fh, indent=1, ensure_ascii=False)
    fh.write("\n")
print(json.dumps(meta), counts)
