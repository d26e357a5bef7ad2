"""What the wheel holds, offline: its data files, its typing marker, its console script and its declared
dependencies. Installing it into a fresh venv with those dependencies from the index, importing every module and
synthesizing the README's library example and the default platform is ``scripts/check_wheel.py``, which
``make test`` runs beside pytest (it needs the package index; the tests stay hermetic)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser

import pytest

from tests.synth import ROOT


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (path,) = out.glob("inferstack-*.whl")
    return zipfile.ZipFile(path)


def test_the_wheel_ships_the_data_files_synth_reads(wheel):
    names = set(wheel.namelist())
    assert len([n for n in names if re.fullmatch(r"inferstack/catalog/crd_schemas/[^/]+\.json\.gz", n)]) > 40
    assert "inferstack/catalog/crd_schemas/index.json" in names
    assert any(n.startswith("inferstack/catalog/engine_flag_data/") for n in names)
    assert any(n.startswith("inferstack/catalog/price_data/") for n in names)
    assert "inferstack/py.typed" in names  # PEP 561: type checkers read our hints
    assert "inferstack/kernel/liftoff.js" in names  # app.py's Node preload (inferstack.kernel.node_options)
    # the model-sync image's build context (StorageStack builds it as a container asset)
    assert {"inferstack/images/model-sync/Dockerfile", "inferstack/images/model-sync/requirements.txt"} <= names
    assert not [n for n in names if n.startswith(("tests/", "scripts/", "examples/"))]


def test_the_wheel_declares_every_dependency_and_the_command(wheel):
    (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    message = Parser().parsestr(wheel.read(metadata).decode())
    required = {r for r in message.get_all("Requires-Dist") or [] if "extra ==" not in r}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert required == set(project["dependencies"])
    (entry_points,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    assert "inferstack = inferstack.cli:main" in wheel.read(entry_points).decode()


def test_the_fresh_venv_check_runs_the_readmes_library_example():
    """scripts/check_wheel.py takes the README's first library block as it is written (so the README cannot drift
    from what is checked)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import check_wheel
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    code = check_wheel.readme_example()
    assert "ClusterStack(" in code and 'outdir="readme.out"' in code
    compile(code, "readme_example.py", "exec")
