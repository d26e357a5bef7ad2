"""A key of a Kubernetes Secret created outside inferstack: how the config names a credential without holding it."""

from __future__ import annotations

import re

from pydantic import field_validator
from pydantic_core import PydanticCustomError

from inferstack.config.base import StrictModel
from inferstack.config.types import KubernetesName, check_plain

_SECRET_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")


class SecretRef(StrictModel):
    """A key of a Kubernetes Secret in the workload's namespace (created outside inferstack)."""

    name: KubernetesName
    """Secret name."""
    key: str = "token"
    """Key inside the Secret: 1-253 letters, digits, ``-``, ``_``, ``.`` (what Kubernetes accepts). Default
    ``token``."""

    @field_validator("key")
    @classmethod
    def _key(cls, value: str) -> str:
        # Kubernetes IsConfigMapKey (Secrets use it): [-._a-zA-Z0-9]+, at most 253, not "." or "..".
        if not _SECRET_KEY.match(check_plain(value, "a Secret key")) or len(value) > 253 or value in (".", ".."):
            raise PydanticCustomError(
                "secret_key",
                "not a Secret key Kubernetes accepts — 1-253 letters, digits, '-', '_', '.' (e.g. 'token')",
            )
        return value
