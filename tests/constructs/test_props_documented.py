"""Every field of a construct's props (each dataclass in ``inferstack/constructs/``) has an attribute docstring — what
it means, its default and unit — as every config field has (tests/config/test_loader.py): a library user's IDE shows
them on hover."""

from __future__ import annotations

import ast
from pathlib import Path

CONSTRUCTS = Path(__file__).resolve().parents[2] / "inferstack" / "constructs"


def _is_dataclass(node: ast.ClassDef) -> bool:
    return any("dataclass" in ast.unparse(decorator) for decorator in node.decorator_list)


def undocumented_fields(source: str) -> list[str]:
    """``Class.field`` of each dataclass field in ``source`` without a string right after it."""
    missing = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef) or not _is_dataclass(node):
            continue
        for position, statement in enumerate(node.body):
            if not isinstance(statement, ast.AnnAssign) or not isinstance(statement.target, ast.Name):
                continue
            if ast.unparse(statement.annotation).startswith("ClassVar"):
                continue
            after = node.body[position + 1] if position + 1 < len(node.body) else None
            documented = (
                isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            )
            if not documented:
                missing.append(f"{node.name}.{statement.target.id}")
    return missing


def test_every_construct_prop_field_is_documented():
    missing = {
        str(path.relative_to(CONSTRUCTS)): fields
        for path in sorted(CONSTRUCTS.rglob("*.py"))
        if (fields := undocumented_fields(path.read_text()))
    }
    assert missing == {}


def test_the_check_sees_an_undocumented_field():
    source = '''
@dataclass(frozen=True)
class Props:
    name: str
    """Documented."""
    port: int = 8000
    limit: ClassVar[int] = 3
'''
    assert undocumented_fields(source) == ["Props.port"]
