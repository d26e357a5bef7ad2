"""The base of every config model."""

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """Unknown keys are errors; values are immutable once validated."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)
