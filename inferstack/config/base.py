"""The base of every config model."""

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """Unknown keys are errors; values are immutable once validated. Field docstrings (defaults, units) become the
    field descriptions of the JSON Schema, so editors show them on hover."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True, use_attribute_docstrings=True)
