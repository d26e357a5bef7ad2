"""The base of every config model."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

#: Largest magnitude of any number in the config. No field needs more (the largest real values are byte-free
#: counts: GiB of storage ≤ 65,536, replicas, tokens ≤ 10^7); beyond it the sizing model and the placement code
#: would overflow or round instead of judging the value.
MAX_NUMBER = 10**12


def _too_big(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and abs(value) > MAX_NUMBER


class StrictModel(BaseModel):
    """Unknown keys are errors; values are immutable once validated; ``inf``/``nan`` and numbers beyond
    :data:`MAX_NUMBER` are refused. Field docstrings (defaults, units) become the field descriptions of the JSON
    Schema, so editors show them on hover."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, validate_default=True, use_attribute_docstrings=True, allow_inf_nan=False
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
        return data
