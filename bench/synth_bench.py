"""Cold `cdk synth` of the default inferstack app vs a bare single-stack EKS app, and of a platform with 100
workloads, alternating, N runs each; and, for reference, the bare app on a Node kernel set up as app.py sets it up
(the Liftoff preload of inferstack.kernel), like for like.

Each run is a fresh `npx cdk synth --quiet` process (jsii start-up included) into a fresh output folder.
Prints every run, the medians, the ratios (goals: default ≤ 1.2× bare; 100 workloads ≤ 3× default) and the peak
RSS of the app process; then (unless ``--no-suite``) the wall time of the whole test suite as CI runs it
(``python -m pytest``, goal ≤ 300 s on this 2-core machine), the second budget of issue 23.

Python's own byte-code cache is part of a developer's warm machine: ``PYTHONDONTWRITEBYTECODE`` in the environment
makes every run recompile inferstack (about 0.15 s); the bench says when it is set.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inferstack.kernel.node_options import with_liftoff_preload  # noqa: E402 - the checkout's, not an install

DEFAULT = "inferstack (default config)"
BARE = "bare EKS (VPC + cluster + node group)"
HUNDRED = "inferstack (100 workloads)"
BARE_LIFTOFF = "bare EKS, Node as app.py sets it"
#: name → (app command, extra CLI arguments, extra environment). The last app is the like-for-like reference: the
#: bare app on a Node kernel with app.py's Liftoff preload (inferstack.kernel.node_options), which would speed it up
#: too; the budget is judged against the bare app as a team writes it.
APPS: dict[str, tuple[str, tuple[str, ...], dict[str, str]]] = {
    DEFAULT: (f"{sys.executable} app.py", (), {}),
    BARE: (f"{sys.executable} bench/bare_app.py", (), {}),
    HUNDRED: (f"{sys.executable} app.py", ("-c", "config={hundred}"), {}),
    BARE_LIFTOFF: (f"{sys.executable} bench/bare_app.py", (), {"NODE_OPTIONS": with_liftoff_preload("")}),
}


def hundred_workloads(path: Path) -> Path:
    """The default platform's pools with 100 Qwen3-8B workloads (the scale test of the sharding)."""
    lines = [
        "name: bench100",
        "compute:",
        "  karpenter_pools:",
        "    - {name: gpu, instance_families: [g6e], max_accelerators: 200}",
        "workloads:",
        *(f"  - {{name: w{i}, pool: gpu, model: {{id: Qwen/Qwen3-8B}}}}" for i in range(100)),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


ENV = {
    **os.environ,
    "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
    "CDK_DISABLE_CLI_TELEMETRY": "true",
    "CDK_DISABLE_VERSION_CHECK": "1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def synth_once(
    app: str, out: Path, extra: tuple[str, ...] = (), environment: dict[str, str] | None = None
) -> tuple[float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    result = subprocess.run(
        ["npx", "--no-install", "cdk", "synth", "--quiet", "--app", app, "--output", str(out), *extra],
        cwd=ROOT,
        env={**ENV, **(environment or {})},
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise SystemExit(f"synth of {app!r} failed:\n{result.stderr[-4000:]}")
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, max(peak, before)


#: The test-suite budget: ``make test``'s pytest on this 2-core machine, seconds.
SUITE_GOAL_SECONDS = 300


def suite_seconds(pytest_args: str = "") -> float:
    """Wall time of the whole test suite, run as ``make test`` runs it (``python -m pytest`` with ``pytest_args``,
    the Makefile's ``PYTEST_WORKERS``: both cores)."""
    start = time.perf_counter()
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args.split()]
    result = subprocess.run(command, cwd=ROOT, env=ENV, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"the test suite failed:\n{result.stdout[-4000:]}")
    print(result.stdout.strip().splitlines()[-1])
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-suite", action="store_true", help="skip timing the test suite")
    parser.add_argument("--pytest-args", default="", help="extra pytest arguments (make passes PYTEST_WORKERS)")
    args = parser.parse_args()
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("note: PYTHONDONTWRITEBYTECODE is set: every run recompiles inferstack's modules", flush=True)
    times: dict[str, list[float]] = {name: [] for name in APPS}
    peaks: dict[str, int] = {}
    work = Path(tempfile.mkdtemp(prefix="inferstack-bench-"))
    hundred = hundred_workloads(work / "hundred.yaml")
    try:
        synth_once(APPS[DEFAULT][0], work / "warmup")  # fill the jsii cache once, outside the timings
        for run in range(args.runs):
            for name, (app, extra, environment) in APPS.items():
                context = tuple(part.format(hundred=hundred) for part in extra)
                out = work / f"{run}-{len(times[name])}-{abs(hash(name))}"
                elapsed, peak = synth_once(app, out, context, environment)
                times[name].append(elapsed)
                peaks[name] = max(peaks.get(name, 0), peak)
                print(f"run {run + 1}/{args.runs}  {name:<40} {elapsed:6.2f} s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print()
    for name, median in medians.items():
        print(f"median  {name:<40} {median:6.2f} s")
    print(f"ratio   inferstack / bare = {medians[DEFAULT] / medians[BARE]:.2f}x  (goal <= 1.20x)")
    print(f"ratio   100 workloads / default = {medians[HUNDRED] / medians[DEFAULT]:.2f}x  (goal <= 3.00x)")
    like_for_like = medians[DEFAULT] / medians[BARE_LIFTOFF]
    print(f"ratio   inferstack / bare with app.py's Node set-up = {like_for_like:.2f}x  (reference)")
    print(f"peak RSS of any synth subprocess tree member: {max(peaks.values()) / 1024:.0f} MiB (ru_maxrss of children)")
    if not args.no_suite:
        print(f"test suite: {suite_seconds(args.pytest_args):.0f} s  (goal <= {SUITE_GOAL_SECONDS} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
