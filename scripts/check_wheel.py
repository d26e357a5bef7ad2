"""What a team gets from ``pip install inferstack``: build the wheel, install it into a fresh virtual environment
with its dependencies resolved from the package index (nothing of the dev venv), then, from outside the checkout,

* import every public module (a runtime import missing from ``pyproject.toml`` fails here, as
  ``kubernetes-validate`` once did);
* run the README's first library example (``## Using inferstack in your own CDK app``: a ClusterStack in the team's
  own VPC) and synthesize it;
* run ``build_platform`` over the default config (the rules, then cdk-nag at synth) and synthesize it;
* check the data files ship (CRD schemas, ``py.typed``, the model-sync image's build context) and the ``inferstack``
  console script answers (``inferstack schema``).

The package index is the one pip is configured with (the same ``make install`` uses); the tests themselves stay
hermetic (``tests/test_packaging.py`` checks the same wheel offline). ``make test`` runs this after pytest.

Usage: ``python scripts/check_wheel.py [WORK_DIR]`` (default: a temporary folder, removed after). Exit 1 on a
failure, with the step and its output.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHECK = textwrap.dedent("""
    import importlib, json, os, pkgutil, runpy, sys
    from importlib import resources
    from pathlib import Path

    # the README's example first, in this process: one jsii kernel for both synths
    runpy.run_path("readme_example.py", run_name="__main__")
    assert list(Path("readme.out").glob("*.template.json")), "the README's example synthesized no template"

    import inferstack
    assert "site-packages" in inferstack.__file__, inferstack.__file__
    names = [m.name for m in pkgutil.walk_packages(inferstack.__path__, "inferstack.")
             if not any(p.startswith("_") for p in m.name.split("."))]
    for name in names:
        importlib.import_module(name)
    assert len(list(resources.files("inferstack.catalog").joinpath("crd_schemas").iterdir())) > 40
    assert resources.files("inferstack").joinpath("py.typed").is_file()
    from inferstack.constructs.model_sync import MODEL_SYNC_IMAGE_DIR
    assert {p.name for p in MODEL_SYNC_IMAGE_DIR.iterdir()} >= {"Dockerfile", "requirements.txt"}

    import aws_cdk as cdk
    from inferstack.config import load_config
    from inferstack.stacks import build_platform
    app = cdk.App(outdir="platform.out", context={"aws:cdk:disable-asset-staging": True})
    platform = build_platform(app, load_config(sys.argv[1]))
    app.synth()
    print(json.dumps({"modules": len(names), "platform_stacks": [s.stack_name for s in platform.stacks]}))
""")


def readme_example() -> str:
    """The first Python block of the README's library section, with its ``app.synth()`` writing ``readme.out``."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Using inferstack in your own CDK app", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    if match is None:
        raise SystemExit("README.md: no Python block under '## Using inferstack in your own CDK app'")
    code = match.group(1)
    if "cdk.App()" not in code:
        raise SystemExit("README.md's library example no longer makes a cdk.App(): update scripts/check_wheel.py")
    return code.replace("cdk.App()", 'cdk.App(outdir="readme.out", context={"aws:cdk:disable-asset-staging": True})', 1)


def step(name: str, command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    started = time.monotonic()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        print(f"check_wheel: {name} failed (exit {result.returncode}):\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
        raise SystemExit(1)
    print(f"check_wheel: {name} ({time.monotonic() - started:.0f} s)", flush=True)
    return result.stdout


def main(argv: list[str]) -> int:
    work = Path(argv[0]) if argv else Path(tempfile.mkdtemp(prefix="inferstack-wheel-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        wheels, venv = work / "wheel", work / "venv"
        step(
            "build the wheel",
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "-q",
                "-w",
                str(wheels),
                str(ROOT),
            ],
            work,
        )
        (wheel,) = wheels.glob("inferstack-*.whl")
        step("create a fresh venv", [sys.executable, "-m", "venv", str(venv)], work)
        python = str(venv / "bin" / "python")
        step(
            "install the wheel and its dependencies from the index",
            # --no-compile: byte-compiling aws-cdk-lib's tree is most of an install (12 s without, 40 s with);
            # Python compiles what the checks import as they import it
            [python, "-m", "pip", "install", "-q", "--no-compile", str(wheel)],
            work,
        )
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"] = env.get(
            "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20"
        )
        (work / "readme_example.py").write_text(readme_example())
        (work / "check.py").write_text(CHECK)
        out = step(
            "the README's library example, every module imported, build_platform over inferstack.yaml",
            [python, "check.py", str(ROOT / "inferstack.yaml")],
            work,
            env,
        )
        print(f"check_wheel: {out.strip().splitlines()[-1]}")
        step(
            "the inferstack command",
            [str(venv / "bin" / "inferstack"), "schema"],
            work,
            env,
        )
        return 0
    finally:
        if not argv:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
