"""The base of every config model."""

from __future__ import annotations

import os
import typing
from collections.abc import Iterable
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

#: The environment variable that turns field descriptions off: ``0`` (read once, at import).
FIELD_DESCRIPTIONS_ENV = "INFERSTACK_FIELD_DESCRIPTIONS"
#: Whether field docstrings become the models' field descriptions (the JSON Schema of ``inferstack schema``, the
#: docs, a library user's ``model_json_schema``). pydantic reads them from every model's source at import, about a
#: third of inferstack's own import time; ``app.py`` (the CDK app, which renders no schema) sets
#: ``INFERSTACK_FIELD_DESCRIPTIONS=0``. Validation is the same either way. Default on.
FIELD_DESCRIPTIONS = os.environ.get(FIELD_DESCRIPTIONS_ENV, "1") != "0"


def require_field_descriptions(what: str) -> None:
    """Stop ``what`` (something that prints descriptions) when this process imported the models without them."""
    if not FIELD_DESCRIPTIONS:
        raise SystemExit(f"{what} needs the field descriptions: unset {FIELD_DESCRIPTIONS_ENV} (it is 0 here)")


#: Largest magnitude of any number in the config. No field needs more (the largest real values are byte-free
#: counts: GiB of storage ≤ 65,536, replicas, tokens ≤ 10^7); beyond it the sizing model and the placement code
#: would overflow or round instead of judging the value.
MAX_NUMBER = 10**12


def _numeric(model: type[BaseModel], key: Any) -> bool:
    """Whether field ``key`` of ``model`` holds a number and not a boolean (``int``, ``float``, optional or not)."""
    field = model.model_fields.get(key) if isinstance(key, str) else None
    if field is None:
        return False
    # a list, not a set: the arguments of an annotated union (a discriminator's metadata) need not be hashable
    kinds = list(typing.get_args(field.annotation)) or [field.annotation]
    return any(kind in (int, float) for kind in kinds) and bool not in kinds


def _too_big(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and abs(value) > MAX_NUMBER


class StrictModel(BaseModel):
    """Unknown keys are errors; values are immutable once validated; ``inf``/``nan`` and numbers beyond
    :data:`MAX_NUMBER` are refused. Field docstrings (defaults, units) become the field descriptions of the JSON
    Schema, so editors show them on hover (unless :data:`FIELD_DESCRIPTIONS` is off)."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        validate_default=True,
        use_attribute_docstrings=FIELD_DESCRIPTIONS,
        allow_inf_nan=False,
    )

    @model_validator(mode="before")
    @classmethod
    def _numbers_in_range(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key, value in data.items():
                items = value if isinstance(value, list | tuple) else [value]
                if any(_too_big(item) for item in items):
                    raise PydanticCustomError(
                        "number_range",
                        "{value} is out of range — numbers in the config are finite and at most {max}",
                        {"value": str(value)[:40], "max": f"{MAX_NUMBER:,}", "field": str(key)},
                    )
                if isinstance(value, bool) and _numeric(cls, key):
                    # pydantic would read YAML true/false as 1/0 for a number
                    raise PydanticCustomError(
                        "bool_number",
                        "{value} is a boolean — this field is a number",
                        {"value": str(value).lower(), "field": str(key)},
                    )
        return data


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Enum):
        return str(value.value)
    return repr(value) if isinstance(value, str) else str(value)


def refuse_unread(model: BaseModel, options: Iterable[str], why: str, fix: str) -> None:
    """Refuse the first of ``options`` the config sets on ``model`` (left to its default, it asks for nothing; a
    boolean set false asks for nothing either) when nothing reads it as configured: ``why`` says when it is read and
    what is off, ``fix`` the switch to turn on. The user set it expecting an effect that would never come."""
    for name in options:
        value = getattr(model, name)
        if name in model.model_fields_set and value is not False:
            raise PydanticCustomError(
                "unread_option",
                "{value} — read only {why}: nothing reads it — remove {name}, or {fix}",
                {"value": _shown(value), "why": why, "name": name, "fix": fix, "field": name},
            )
