"""Load an inferstack config from YAML (or JSON, a subset of YAML) into :class:`InferstackConfig`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from inferstack.config.errors import ConfigError, Problem, problems_from
from inferstack.config.model import InferstackConfig

#: Largest config file read, bytes (a platform config is a few KB; this bounds memory and parse time).
MAX_CONFIG_BYTES = 1_000_000
#: Most values the loaded document may hold once aliases are expanded (``&a [*b, *b, …]`` "billion laughs" bombs
#: are a few hundred bytes that expand to billions of values when validated).
MAX_VALUES = 100_000
#: Deepest nesting of mappings and sequences (PyYAML and validation recurse per level).
MAX_DEPTH = 64
_MERGE = "tag:yaml.org,2002:merge"


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe YAML loader that rejects duplicate keys instead of keeping the last one silently, refuses keys that
    are mappings or sequences, and supports YAML merge keys (``<<: *defaults``; explicit keys override merged ones,
    as YAML defines)."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == _MERGE:
            continue
        if not isinstance(key_node, yaml.ScalarNode):
            raise yaml.constructor.ConstructorError(
                None, None, "a key must be a plain value, not a mapping or a list", key_node.start_mark
            )
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}: each key may appear once", key_node.start_mark
            )
        seen.add(key)
    loader.flatten_mapping(node)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


def _depth_of(node: yaml.Node, limit: int) -> int:
    """Nesting depth of a composed node, stopping past ``limit`` (iterative: no recursion of our own)."""
    deepest, stack = 0, [(node, 1)]
    seen: set[int] = set()
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in current.value)
        elif isinstance(current, yaml.MappingNode):
            stack.extend((child, depth + 1) for pair in current.value for child in pair)
    return deepest


def _too_many_values(data: Any, budget: int) -> bool:
    """Whether walking ``data`` — counting a value each time an alias repeats it — passes ``budget`` values."""
    stack, count = [data], 0
    while stack:
        item = stack.pop()
        count += 1
        if count > budget:
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


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
        with Path(path).open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(source, [Problem("<file>", f"cannot read the config file ({exc.strerror})")]) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(source, [Problem("<file>", f"larger than {MAX_CONFIG_BYTES:,} bytes — not a config file?")])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        problem = Problem(f"line {line}, column {column}", "not UTF-8 text — save the config as UTF-8")
        raise ConfigError(source, [problem]) from None
    return parse_config(_load_yaml(text, source), source)


#: What the parser's problems most often mean in a hand-written config, by a phrase of the problem.
_HINTS = {
    "mapping values are not allowed": "a key's value on the same line holds a ': ' — quote it, or the key above is "
    "indented wrongly",
    "could not find expected ':'": "a key without ':' or a line indented deeper than its siblings",
    "did not find expected key": "the indentation changes inside a mapping — align each key with its siblings",
    "did not find expected '-' indicator": "a list item indented differently from the items before it",
    "expected <block end>": "a line indented differently from its siblings (a key under a list item starts where "
    "the item's first key does)",
    "found character '\\t'": "a tab — YAML indents with spaces only",
}


def _hint(problem: str) -> str:
    """`` — <hint>`` for a parser problem a hand-written config commonly causes (indentation, tabs), else ``""``."""
    return next((f" — {hint}" for phrase, hint in _HINTS.items() if phrase in problem), "")


def _load_yaml(text: str, source: str) -> Any:
    """Parse ``text`` with the hardened loader; every failure is one :class:`ConfigError` with line and column."""
    try:
        loader = _UniqueKeyLoader(text)  # the reader refuses control characters here
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        problem = Problem(
            f"line {line}, column {column}", f"invalid YAML: character #x{exc.character:04x} is not allowed"
        )
        raise ConfigError(source, [problem]) from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _depth_of(node, MAX_DEPTH) > MAX_DEPTH:
            mark = node.start_mark
            raise ConfigError(
                source,
                [Problem(f"line {mark.line + 1}", f"nested more than {MAX_DEPTH} levels deep — not a config file?")],
            )
        data = loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "<file>"
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(source, [Problem(where, f"invalid YAML: {problem}{_hint(problem)}")]) from None
    except RecursionError:
        raise ConfigError(source, [Problem("<file>", "nested too deeply to read")]) from None
    finally:
        loader.dispose()
    if _too_many_values(data, MAX_VALUES):
        raise ConfigError(
            source,
            [Problem("<file>", f"more than {MAX_VALUES:,} values once aliases are expanded — an alias bomb?")],
        )
    return data
