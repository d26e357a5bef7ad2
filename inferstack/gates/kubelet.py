"""What the kubelet puts in a pod's volumes, beyond what the manifest says.

A ConfigMap (or Secret, projected, downwardAPI) volume is written atomically (k8s.io/kubernetes
``pkg/volume/util/atomic_writer.go``): the files live in a timestamped directory ``..<timestamp>``, ``..data`` is a
symlink to it, and each item is a symlink ``<path> -> ..data/<path>``. A program that lists the mount directory
therefore sees ``..data`` and ``..<timestamp>`` beside the items. Triton's repository scan takes every directory of
``--model-repository`` for a model (``--model-control-mode none`` or ``poll``, the default being none).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from inferstack.gates.pods import all_pod_templates

ATOMIC_WRITER_VOLUMES = ("configMap", "secret", "projected", "downwardAPI")
#: The entries the atomic writer adds at the top of every such volume (the timestamp is the write's).
ATOMIC_WRITER_ENTRIES = ("..data", "..2026_12_01_00_00_00.000000000")


def mounted_entries(volume: Mapping[str, Any]) -> list[str]:
    """The top-level names a listing of the volume's mount shows: the items' first path segments and, for the
    atomically written kinds, ``..data`` and ``..<timestamp>``."""
    kind = next((k for k in ATOMIC_WRITER_VOLUMES if k in volume), None)
    if kind is None:
        return []
    items = (volume[kind] or {}).get("items") or []
    return [*ATOMIC_WRITER_ENTRIES, *sorted({str(i.get("path", i.get("key"))).split("/")[0] for i in items})]


def _flag(args: Sequence[str], name: str) -> str | None:
    for index, arg in enumerate(args):
        if arg.startswith(f"{name}="):
            return arg.split("=", 1)[1]
        if arg == name and index + 1 < len(args):
            return args[index + 1]
    return None


def triton_scans_kubelet_entries(objects: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    """Triton containers whose ``--model-repository`` is an atomically written volume and whose control mode scans
    it (none / poll): the kubelet's ``..data`` entries are taken for models that fail to load."""
    for template in all_pod_templates(list(objects)):
        volumes = {v.get("name"): v for v in template.spec.get("volumes") or []}
        for _, container in template.containers():
            args = [*(container.get("command") or []), *(container.get("args") or [])]
            if not any(a.endswith("tritonserver") for a in args):
                continue
            repository = _flag(args, "--model-repository")
            mode = _flag(args, "--model-control-mode") or "none"
            for mount in container.get("volumeMounts") or []:
                if mount.get("mountPath") != repository:
                    continue
                entries = mounted_entries(volumes.get(mount.get("name")) or {})
                if entries and mode in ("none", "poll"):
                    yield (
                        f"{template.ref} {container.get('name')}: --model-control-mode={mode} scans {repository}, "
                        f"where the kubelet writes {', '.join(entries[:2])} beside the models — load models "
                        "explicitly (--model-control-mode=explicit --load-model <name>) or copy the repository into "
                        "an emptyDir"
                    )
