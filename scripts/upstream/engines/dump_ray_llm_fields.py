"""Dump Ray Serve LLM config models' fields (format of shared/upstream/engines/ray-serve-llm-*-fields.json).

Usage: python dump_ray_llm_fields.py OUT.json WHEEL_FILE WHEEL_SHA256 VLLM_VERSION
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import json
import sys
import types
import typing

OUT, WHEEL_FILE, WHEEL_SHA, VLLM_FOR_IMPORT = sys.argv[1:5]

import pydantic  # noqa: E402
import ray  # noqa: E402
import torch  # noqa: E402
from pydantic.fields import FieldInfo  # noqa: E402

try:
    import pydantic.v1 as pv1
except Exception:  # pragma: no cover
    pv1 = None

REQUESTED = [
    ("LLMConfig", ["ray.llm._internal.serve.core.configs.llm_config"]),
    ("ModelLoadingConfig", ["ray.llm._internal.serve.core.configs.llm_config"]),
    ("LoraConfig", ["ray.llm._internal.serve.core.configs.llm_config"]),
    ("CloudMirrorConfig", ["ray.llm._internal.common.utils.cloud_utils"]),
    ("LLMServingArgs", ["ray.llm._internal.serve.core.ingress.builder"]),
    ("IngressClsConfig", ["ray.llm._internal.serve.core.ingress.builder"]),
    ("PDServingArgs", ["ray.llm._internal.serve.serving_patterns.prefill_decode.builder"]),
    ("ProxyClsConfig", ["ray.llm._internal.serve.serving_patterns.prefill_decode.builder"]),
    ("PlacementGroupConfig", ["ray.llm._internal.common.placement", "ray.llm._internal.serve.engines.vllm.vllm_models"]),
    ("BundleConfig", ["ray.llm._internal.common.placement", "ray.llm._internal.serve.engines.vllm.vllm_models"]),
    ("CPUConfig", ["ray.llm._internal.serve.core.configs.accelerators"]),
    ("GPUConfig", ["ray.llm._internal.serve.core.configs.accelerators"]),
    ("TPUConfig", ["ray.llm._internal.serve.core.configs.accelerators"]),
    ("DeploymentConfig", ["ray.serve._private.config"]),
    ("AutoscalingConfig", ["ray.serve.config"]),
]
PUBLIC_MODULES = ["ray.serve.llm", "ray.serve.config"]


def try_get(mod, name):
    try:
        m = importlib.import_module(mod)
    except ModuleNotFoundError as e:
        if e.name and (mod == e.name or mod.startswith(e.name + ".")):
            return None  # the module itself does not exist in this version
        raise
    return getattr(m, name, None)


def model_kind(cls):
    if isinstance(cls, type) and issubclass(cls, pydantic.BaseModel):
        return "v2"
    if pv1 is not None and isinstance(cls, type) and issubclass(cls, pv1.BaseModel):
        return "v1 (pydantic.v1 compatibility API)"
    if dataclasses.is_dataclass(cls):
        return "stdlib dataclass (validated by pydantic when used as a field type)"
    return None


def is_ray_model(t):
    return isinstance(t, type) and (t.__module__ or "").startswith("ray.") and model_kind(t) is not None


def fmt_meta(m):
    if isinstance(m, FieldInfo):
        parts = []
        for k in ("discriminator", "alias", "ge", "gt", "le", "lt"):
            v = getattr(m, k, None)
            if v is not None:
                parts.append(f"{k}={v!r}")
        for mm in m.metadata:
            parts.append(repr(mm))
        return f"Field({', '.join(parts)})"
    return repr(m)


def fmt_type(t):
    if t is type(None):
        return "None"
    if t is typing.Any:
        return "Any"
    origin = typing.get_origin(t)
    args = typing.get_args(t)
    if origin is typing.Annotated:
        base, *meta = args
        return f"Annotated[{fmt_type(base)}, {', '.join(fmt_meta(m) for m in meta)}]"
    if origin is typing.Union or origin is types.UnionType:
        others = [a for a in args if a is not type(None)]
        if len(others) < len(args):
            inner = fmt_type(others[0]) if len(others) == 1 else f"Union[{', '.join(fmt_type(a) for a in others)}]"
            return f"Optional[{inner}]"
        return f"Union[{', '.join(fmt_type(a) for a in args)}]"
    if t is Ellipsis:
        return "..."
    if origin is typing.Literal:
        return f"Literal[{', '.join(repr(a) for a in args)}]"
    if origin is not None:
        name = getattr(t, "_name", None)
        if not name:
            name = getattr(origin, "__name__", repr(origin))
        if args:
            if origin is typing.Callable or name == "Callable" or getattr(origin, "__name__", "") == "Callable":
                a0, r = args[:-1], args[-1]
                return f"{name}[[{', '.join(fmt_type(a) for a in a0)}], {fmt_type(r)}]"
            return f"{name}[{', '.join(fmt_type(a) for a in args)}]"
        return name
    if isinstance(t, typing.ForwardRef):
        return t.__forward_arg__
    if isinstance(t, typing.TypeVar):
        return t.__name__
    if isinstance(t, type):
        return t.__name__
    if isinstance(t, str):
        return t
    return repr(t).replace("typing.", "")


def nested_models(t, out):
    if is_ray_model(t):
        out.add(t)
        return
    for a in typing.get_args(t):
        if isinstance(a, (type, typing.ForwardRef)) or typing.get_origin(a) is not None:
            nested_models(a, out)


def jsonable(v):
    if isinstance(v, enum.Enum):
        return jsonable(v.value)
    if isinstance(v, type):
        return f"<class {v.__module__}.{v.__qualname__}>"
    if isinstance(v, pydantic.BaseModel):
        try:
            dumped = v.model_dump(mode="json")  # JSON serializer renders float fields as floats
        except Exception:
            dumped = {k: getattr(v, k) for k in type(v).model_fields}
        return {k: jsonable(x) for k, x in dumped.items()}
    if pv1 is not None and isinstance(v, pv1.BaseModel):
        return {k: jsonable(getattr(v, k)) for k in type(v).__fields__}
    if dataclasses.is_dataclass(v):
        return {f.name: jsonable(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, (set, frozenset)):
        items = [jsonable(x) for x in v]
        try:
            return sorted(items)
        except TypeError:
            return items
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if callable(v):
        return f"<callable {getattr(v, '__module__', '')}.{getattr(v, '__qualname__', repr(v))}>"
    return repr(v)


def factory_name(f):
    return getattr(f, "__name__", repr(f))


def v2_fields(cls, nested):
    out = []
    for name, fi in cls.model_fields.items():
        e = {"name": name, "type": fmt_type(fi.annotation), "required": fi.is_required()}
        nested_models(fi.annotation, nested)
        if not fi.is_required():
            if fi.default_factory is not None:
                e["default_factory"] = factory_name(fi.default_factory)
                try:
                    e["default"] = jsonable(fi.default_factory())
                except TypeError:
                    e["default"] = jsonable(fi.default_factory({}))
            else:
                e["default"] = jsonable(fi.default)
        cons = [repr(m) for m in fi.metadata]
        if cons:
            e["constraints"] = cons
        out.append(e)
    return out


def v1_fields(cls, nested):
    out = []
    for name, mf in cls.__fields__.items():
        t = mf.outer_type_
        ann = cls.__annotations__.get(name, t) if hasattr(cls, "__annotations__") else t
        e = {"name": name, "type": fmt_type(mf.annotation if hasattr(mf, "annotation") else ann),
             "required": bool(mf.required)}
        nested_models(mf.annotation if hasattr(mf, "annotation") else ann, nested)
        if not mf.required:
            if mf.default_factory is not None:
                e["default_factory"] = factory_name(mf.default_factory)
                e["default"] = jsonable(mf.default_factory())
            else:
                e["default"] = jsonable(mf.default)
        cons = []
        fi = mf.field_info
        for k in ("gt", "ge", "lt", "le", "min_items", "max_items", "min_length", "max_length", "regex"):
            v = getattr(fi, k, None)
            if v is not None:
                cons.append(f"{k}={v!r}")
        if cons:
            e["constraints"] = cons
        out.append(e)
    return out


def dc_fields(cls, nested):
    hints = typing.get_type_hints(cls, include_extras=True)
    out = []
    for f in dataclasses.fields(cls):
        t = hints.get(f.name, f.type)
        e = {"name": f.name, "type": fmt_type(t)}
        nested_models(t, nested)
        req = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        e["required"] = req
        if f.default_factory is not dataclasses.MISSING:
            e["default_factory"] = factory_name(f.default_factory)
            e["default"] = jsonable(f.default_factory())
        elif f.default is not dataclasses.MISSING:
            e["default"] = jsonable(f.default)
        out.append(e)
    return out


def describe(cls, because):
    # a public subclass of an already described class that adds no fields
    for base in cls.__bases__:
        if base in seen and model_kind(cls) == "v2" and set(cls.model_fields) == set(base.model_fields):
            return {
                "class": f"{cls.__module__}.{cls.__qualname__}",
                "bases": [f"{b.__module__}.{b.__qualname__}" for b in cls.__mro__[1:] if (b.__module__ or "").startswith("ray.")],
                "same_fields_as": seen[base],
                "note": f"subclass of {base.__module__}.{base.__qualname__} adding no fields",
                "included_because": because,
            }, set()
    kind = model_kind(cls)
    nested = set()
    d = {
        "class": f"{cls.__module__}.{cls.__qualname__}",
        "bases": [f"{b.__module__}.{b.__qualname__}" for b in cls.__mro__[1:] if (b.__module__ or "").startswith("ray.")],
        "pydantic": kind,
    }
    if kind == "v2":
        extra = cls.model_config.get("extra")
        d["extra"] = extra if extra else "ignore (pydantic default)"
        fv = {}
        for vname, dec in cls.__pydantic_decorators__.field_validators.items():
            for fld in dec.info.fields:
                fv.setdefault(fld, []).append(vname)
        if fv:
            d["field_validators"] = fv
        mv = list(cls.__pydantic_decorators__.model_validators)
        if mv:
            d["model_validators"] = mv
        d["fields"] = v2_fields(cls, nested)
    elif kind and kind.startswith("v1"):
        extra = getattr(cls.__config__, "extra", None)
        extra = getattr(extra, "value", extra)
        d["extra"] = extra if extra and extra != "ignore" else "ignore (pydantic default)"
        d["fields"] = v1_fields(cls, nested)
    else:
        d["fields"] = dc_fields(cls, nested)
    if because == "requested":
        for pm in PUBLIC_MODULES:
            pub = try_get(pm, cls.__name__)
            if isinstance(pub, type) and (pub is cls or cls in pub.__bases__):
                d["public_path"] = f"{pm}.{cls.__name__}"
                break
    d["included_because"] = because
    return d, nested


models = {}
seen = {}
not_present = []
queue = []
for name, mods in REQUESTED:
    found = None
    for mod in mods:
        obj = try_get(mod, name)
        if obj is None:
            not_present.append(f"{mod}.{name}")
        elif found is None:
            found = obj
    if found is not None:
        queue.append((name, found, "requested"))
        seen[found] = name

i = 0
while i < len(queue):
    key, cls, because = queue[i]
    i += 1
    d, nested = describe(cls, because)
    models[key] = d
    for n in sorted(nested, key=lambda c: c.__name__):
        if n in seen:
            continue
        k = n.__name__ if n.__name__ not in models and all(q[0] != n.__name__ for q in queue) else f"{n.__name__}@{n.__module__}"
        seen[n] = k
        queue.append((k, n, f"nested in {key}"))

llm_config_mod = importlib.import_module("ray.llm._internal.serve.core.configs.llm_config")
AT = llm_config_mod.AcceleratorType
allowed = {
    "LLMConfig.accelerator_type.allowed_values": [t.value for t in AT],
    "LLMConfig.accelerator_type.enum": f"{llm_config_mod.__name__}.AcceleratorType (from ray.util.accelerators.accelerators); 'A10' is rewritten to 'A10G'",
}
if hasattr(llm_config_mod, "LLMEngine"):
    allowed["LLMConfig.llm_engine.allowed_values"] = [e.value for e in llm_config_mod.LLMEngine]

doc = {
    "ray_version": ray.__version__,
    "source": {
        "package": f"ray=={ray.__version__} (PyPI wheel, cp311 manylinux2014_x86_64)",
        "wheel_file": WHEEL_FILE,
        "wheel_sha256": WHEEL_SHA,
        "obtained": f"pip download --no-deps ray=={ray.__version__} (PyPI), 2026-12-01",
        "how": "Imported the config modules from the wheel and read each pydantic model's fields (pydantic v2 model_fields / pydantic.v1 __fields__): name, annotation, default (default_factory called), required, constraints, description; nested ray-defined models followed recursively.",
        "environment": f"Python {sys.version_info.major}.{sys.version_info.minor}, pydantic {pydantic.VERSION}, plus ray[serve] runtime deps; the ray LLM modules import vllm, so vllm=={VLLM_FOR_IMPORT} (--no-deps) with CPU torch {torch.__version__} was installed for the import only.",
    },
    "requested_classes_not_present_in_this_version": not_present,
    "validator_allowed_values": allowed,
    "field_links": {
        "LLMConfig.model_loading_config": "validated into ModelLoadingConfig (field_validator)",
        "LLMConfig.lora_config": "validated into LoraConfig (field_validator)",
        "LLMConfig.deployment_config": "validated with ray.serve._private.config.DeploymentConfig(**value) (field_validator); its autoscaling_config is AutoscalingConfig",
        "LLMConfig.placement_group_config": "dict; parsed as PlacementGroupConfig (with BundleConfig bundles) when the engine's placement group is built",
    },
    "models": models,
}
import vllm  # noqa: E402

print("vllm imported for ray:", vllm.__version__, vllm.__file__, file=sys.stderr)
with open(OUT, "w") as fh:
    json.dump(doc, fh, indent=1)
print(OUT, len(models), "models", not_present)
