"""Copy the upstream reference files the conformance tests compare against from ../shared/upstream into
tests/upstream/ (byte for byte): each pinned Helm chart's values.yaml (+ values.schema.json and vendored subcharts),
Karpenter's reference CloudFormation for the pinned minor version, and the provenance README.

The versions come from the catalog (``inferstack/catalog/versions.py``; ``HelmChartVersion.values_reference`` names
the nearest vendored release where the pinned one could not be obtained). ``--check`` exits 1 when tests/upstream
differs from what this script would copy (a test runs it when ../shared/upstream exists).

Usage: ``python scripts/vendor_upstream.py [--check] [SOURCE_DIR]`` (default ``../shared/upstream``); ``make upstream``.
"""

from __future__ import annotations

import filecmp
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inferstack.catalog.versions import HELM_CHARTS  # noqa: E402

TARGET = ROOT / "tests" / "upstream"


def karpenter_minor() -> str:
    major, minor, _ = HELM_CHARTS["karpenter"].version.split(".")
    return f"{major}.{minor}"


def wanted(source: Path) -> dict[Path, Path]:
    """Relative target path → source file."""
    files: dict[Path, Path] = {Path("README.md"): source / "README.md"}
    cfn = Path("karpenter") / f"cloudformation-v{karpenter_minor()}.yaml"
    files[cfn] = source / cfn
    for name, pin in sorted(HELM_CHARTS.items()):
        directory = source / "charts" / name / pin.values_reference
        if not directory.is_dir():
            continue  # a chart no conformance test covers yet (the test lists what must be present)
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                files[path.relative_to(source)] = path
    return files


def main(argv: list[str]) -> int:
    check = "--check" in argv
    args = [a for a in argv[1:] if a != "--check"]
    source = Path(args[0]) if args else ROOT.parent / "shared" / "upstream"
    files = wanted(source)
    missing = [str(p) for p, src in files.items() if not src.is_file()]
    if missing:
        print(f"missing in {source}: {', '.join(missing)}", file=sys.stderr)
        return 1
    present = {p.relative_to(TARGET) for p in TARGET.rglob("*") if p.is_file()} if TARGET.exists() else set()
    stale = sorted(present - set(files))
    changed = sorted(
        p for p, src in files.items() if not (TARGET / p).is_file() or not filecmp.cmp(src, TARGET / p, shallow=False)
    )
    if check:
        for path in stale:
            print(f"not upstream (remove): tests/upstream/{path}", file=sys.stderr)
        for path in changed:
            print(f"differs from {source / path}: tests/upstream/{path}", file=sys.stderr)
        return 1 if stale or changed else 0
    for path in stale:
        (TARGET / path).unlink()
    for path in changed:
        (TARGET / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(files[path], TARGET / path)
    print(f"tests/upstream: {len(files)} files ({len(changed)} copied, {len(stale)} removed)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
