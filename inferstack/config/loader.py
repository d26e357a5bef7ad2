"""Load an inferstack config from YAML (or JSON, a subset of YAML) into :class:`InferstackConfig`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from inferstack.config.errors import ConfigError, Problem, problems_from
from inferstack.config.model import InferstackConfig


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe YAML loader that rejects duplicate keys instead of keeping the last one silently."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}: each key may appear once", key_node.start_mark
            )
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def parse_config(data: Any, source: str = "<config>") -> InferstackConfig:
    """Validate already-parsed data. Raises :class:`ConfigError` listing every problem."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(source, [Problem("<root>", "the config must be a mapping of keys to values", data)])
    try:
        return InferstackConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(source, problems_from(InferstackConfig, exc)) from None


def load_config(path: str | Path) -> InferstackConfig:
    """Read and validate a config file. Raises :class:`ConfigError` (never a bare traceback) on any problem."""
    source = str(path)
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ConfigError(source, [Problem("<file>", f"cannot read the config file ({exc.strerror})")]) from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "<file>"
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(source, [Problem(where, f"invalid YAML: {problem}")]) from None
    return parse_config(data, source)
