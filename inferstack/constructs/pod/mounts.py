"""A volume mount that carries its volume, as cdk8s-plus's ``container.mount(path, volume)`` does: a pod's volumes
are the union of what its containers mount, so a mount cannot name a volume the pod lacks, and a volume nothing
mounts is not rendered.

``k8s.VolumeMount(name="model", …)`` beside a separate ``volumes=[…]`` list could disagree (a misspelt name, a volume
left out when a branch changed): the API server refuses such a pod (``spec.containers[0].volumeMounts[0].name: Not
found``), at deploy. :class:`Mount` holds the :class:`k8s.Volume` object itself; :func:`pod_volumes` collects them
and refuses two different volumes under one name at construction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cdk8s_plus_36 import k8s

from inferstack.constructs.validation import PropError


@dataclass(frozen=True, kw_only=True)
class Mount:
    """``volume`` mounted at ``path`` in one container."""

    path: str
    """Absolute mount path in the container."""
    volume: k8s.Volume
    """The pod volume mounted (its ``name`` is the mount's): reuse the same object for every container that mounts
    it."""
    read_only: bool = False
    """Mount read-only. Default False."""
    sub_path: str | None = None
    """Mount only this path inside the volume. Default none: the whole volume."""

    @property
    def name(self) -> str:
        """The volume's name."""
        return self.volume.name

    def render(self) -> k8s.VolumeMount:
        """The container's ``volumeMounts`` entry."""
        return k8s.VolumeMount(
            name=self.volume.name, mount_path=self.path, read_only=self.read_only or None, sub_path=self.sub_path
        )


def volume_mounts(mounts: Iterable[Mount]) -> list[k8s.VolumeMount]:
    """The ``volumeMounts`` of ``mounts``, in order."""
    return [m.render() for m in mounts]


def empty_dir(name: str, *, size_gib: float | None = None, memory: bool = False) -> k8s.Volume:
    """An emptyDir volume ``name``: node disk by default, RAM with ``memory``; ``size_gib`` its size limit (GiB;
    default none: unbounded)."""
    return k8s.Volume(
        name=name,
        empty_dir=k8s.EmptyDirVolumeSource(
            medium="Memory" if memory else None,
            size_limit=k8s.Quantity.from_string(f"{size_gib:g}Gi") if size_gib is not None else None,
        ),
    )


def pod_volumes(owner: str, *mount_groups: Iterable[Mount]) -> list[k8s.Volume]:
    """Every volume the ``mount_groups`` (one per container) mount, once each, in first-mounted order.

    :raises PropError: two different volume objects under one name (one of them would silently win)."""
    volumes: dict[str, k8s.Volume] = {}
    for mounts in mount_groups:
        for mount in mounts:
            known = volumes.setdefault(mount.name, mount.volume)
            if known is not mount.volume and known != mount.volume:
                raise PropError(
                    f"{owner}: two different volumes are named {mount.name!r} — mount one volume object, or "
                    "name them apart"
                )
    return list(volumes.values())


def check_mounted(owner: str, containers: Sequence[k8s.Container], volumes: Sequence[k8s.Volume]) -> None:
    """Refuse a container (built elsewhere as a ``k8s.Container``, e.g. an init container) whose ``volumeMounts``
    name a volume the pod does not have — the API server's ``volumeMounts[i].name: Not found`` at construction.

    :raises PropError: naming the container, the mount and the pod's volumes."""
    names = {v.name for v in volumes}
    for container in containers:
        for mount in container.volume_mounts or ():
            if mount.name not in names:
                raise PropError(
                    f"{owner}: container {container.name!r} mounts volume {mount.name!r} at {mount.mount_path}, "
                    f"which the pod does not have — pod volumes: {', '.join(sorted(names)) or 'none'}"
                )
