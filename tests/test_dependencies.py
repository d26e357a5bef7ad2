"""What ``pip install inferstack`` installs is what the package imports: every third-party module the runtime imports
is a declared dependency of pyproject.toml, pinned exactly and at the version requirements.txt locks."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "inferstack"
#: Imported only by the optional extra that needs them (``pip install inferstack[preflight]``).
OPTIONAL = {"boto3": "preflight", "botocore": "preflight", "pytest": "testing", "syrupy": "testing"}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_imports() -> set[str]:
    """Top-level names of the modules inferstack's runtime imports. Excluded: the gates package (the tests') and
    ``constructs/scripts`` (programs that run inside the engine and tool images, on those images' packages)."""
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).parts
        if parts[0] == "gates" or parts[:2] == ("constructs", "scripts"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    return {name for name in found if name not in sys.stdlib_module_names and name not in ("inferstack", "__future__")}


def _pins(lines: list[str]) -> dict[str, str]:
    pins = {}
    for line in lines:
        name, _, version = line.partition("==")
        pins[_normal(name)] = version
    return pins


def test_every_runtime_import_is_a_pinned_dependency():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = _pins(project["dependencies"])
    extras = {extra: _pins(items) for extra, items in project["optional-dependencies"].items()}
    distributions = packages_distributions()
    missing = []
    for module in sorted(runtime_imports()):
        names = {_normal(d) for d in distributions.get(module, [module])}
        if module in OPTIONAL:
            if not names & set(extras[OPTIONAL[module]]):
                missing.append(f"{module} (extra {OPTIONAL[module]})")
        elif not names & set(declared):
            missing.append(module)
    assert missing == [], f"imported by inferstack but not in pyproject.toml dependencies: {missing}"


def test_declared_dependencies_match_the_lock():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    locked = _pins(
        [line for line in (ROOT / "requirements.txt").read_text().splitlines() if line and not line.startswith("#")]
    )
    items = [*project["dependencies"], *(i for extra in project["optional-dependencies"].values() for i in extra)]
    for item in items:
        name, _, version = item.partition("==")
        assert version, f"{item}: not pinned exactly"
        assert locked.get(_normal(name)) == version, f"{item}: requirements.txt locks {locked.get(_normal(name))}"
