"""Pod Security Standards (PSS) admission, judged offline over rendered manifests.

The checks mirror what the built-in ``PodSecurity`` admission plugin enforces for policy version ``latest`` on
Kubernetes 1.36, so a pod template that would be rejected (a bare Pod) or whose pods would never be created (a
Deployment, Job, … whose ReplicaSet/Job controller is refused) is caught before ``cdk deploy``.

Sources (the Go code is the authority where the prose and the code differ):

* https://kubernetes.io/docs/concepts/security/pod-security-standards/ (the profile tables)
* kubernetes/pod-security-admission, branch ``release-1.36``, ``policy/``: ``checks.go`` and ``registry.go``
  (levels, versions, restricted checks that replace baseline ones), ``visitor.go`` (every check visits
  initContainers, containers *and* ephemeralContainers), ``helpers.go`` (``hostUsers: false`` relaxation), and
  one file per check:

  ======================================  ==========================  ==========
  file                                    check id                    level
  ======================================  ==========================  ==========
  check_windowsHostProcess.go             windowsHostProcess          baseline
  check_hostNamespaces.go                 hostNamespaces              baseline
  check_privileged.go                     privileged                  baseline
  check_capabilities_baseline.go          capabilities_baseline       baseline
  check_hostPathVolumes.go                hostPathVolumes             baseline
  check_hostPorts.go                      hostPorts                   baseline
  check_hostProbesAndhostLifecycle.go     hostProbesAndHostLifecycle  baseline
  check_appArmorProfile.go                appArmorProfile             baseline
  check_seLinuxOptions.go                 seLinuxOptions              baseline
  check_procMount_baseline.go             procMount                   baseline
  check_seccompProfile_baseline.go        seccompProfile_baseline     baseline
  check_sysctls.go                        sysctls                     baseline
  check_restrictedVolumes.go              restrictedVolumes           restricted
  check_allowPrivilegeEscalation.go       allowPrivilegeEscalation    restricted
  check_runAsNonRoot.go                   runAsNonRoot                restricted
  check_runAsUser.go                      runAsUser                   restricted
  check_seccompProfile_restricted.go      seccompProfile_restricted   restricted
  check_capabilities_restricted.go        capabilities_restricted     restricted
  check_procMount_restricted.go           procMount_restricted        restricted
  ======================================  ==========================  ==========

* ``api/helpers.go`` (``ParseLevel``: an unparseable enforce label fails closed to ``restricted``).
* k8s.io/kubernetes ``pkg/apis/core/v1/defaults.go``: admission sees *defaulted* pods, so a volume with no
  source is an ``emptyDir`` and, under ``hostNetwork``, a port's ``hostPort`` defaults to its ``containerPort``.

Upstream semantics kept on purpose: at ``restricted``, ``restrictedVolumes`` replaces ``hostPathVolumes``,
``capabilities_restricted`` replaces ``capabilities_baseline``, ``seccompProfile_restricted`` replaces
``seccompProfile_baseline`` and ``procMount_restricted`` replaces ``procMount`` (so a finding carries the check
that actually fires at that level); pods with ``spec.os.name: windows`` skip ``allowPrivilegeEscalation``,
``capabilities_restricted`` and ``seccompProfile_restricted``; pods with ``hostUsers: false`` skip
``runAsNonRoot``, ``runAsUser`` and the baseline ``procMount``; the legacy seccomp annotations are no longer
judged by ``latest`` (only the 1.0–1.18 policy versions looked at them), the legacy AppArmor annotations still are.

Where upstream reports one result per check, we report one finding per offending field so that the path points at
the line to change; a requirement that is unmet *implicitly* (nothing set at pod or container level) is one finding
at the pod-level field, since setting it there is the one-line fix.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from inferstack.gates.pods import PodTemplate, all_pod_templates


class Level(StrEnum):
    """A Pod Security Standards profile, as used by the ``pod-security.kubernetes.io/enforce`` label."""

    PRIVILEGED = "privileged"
    BASELINE = "baseline"
    RESTRICTED = "restricted"


ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"

#: Capabilities a container may add under baseline (the container runtime's default set).
BASELINE_CAPABILITIES: frozenset[str] = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
#: The only capability a container may add under restricted.
RESTRICTED_CAPABILITIES: frozenset[str] = frozenset({"NET_BIND_SERVICE"})

#: Sysctls baseline allows (policy 1.32+, unchanged through 1.36; 1.37 adds two more TCP ones).
SAFE_SYSCTLS: frozenset[str] = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.ping_group_range",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.tcp_wmem",
    }
)

#: SELinux types baseline allows (policy 1.31+; ``""`` = not set).
SELINUX_TYPES: frozenset[str] = frozenset(
    {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
)

#: seccomp / AppArmor profile types both baseline and restricted accept.
CONFINED_PROFILE_TYPES: frozenset[str] = frozenset({"RuntimeDefault", "Localhost"})

APPARMOR_ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/"

#: Inline volume sources restricted allows (JSON field names).
RESTRICTED_VOLUME_SOURCES: frozenset[str] = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "image",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
)
#: Every other inline volume source the core API knows (JSON field names); restricted forbids them.
FORBIDDEN_VOLUME_SOURCES: frozenset[str] = frozenset(
    {
        "awsElasticBlockStore",
        "azureDisk",
        "azureFile",
        "cephfs",
        "cinder",
        "fc",
        "flexVolume",
        "flocker",
        "gcePersistentDisk",
        "gitRepo",
        "glusterfs",
        "hostPath",
        "iscsi",
        "nfs",
        "photonPersistentDisk",
        "portworxVolume",
        "quobyte",
        "rbd",
        "scaleIO",
        "storageos",
        "vsphereVolume",
    }
)

_CONTAINER_FIELDS = ("initContainers", "containers", "ephemeralContainers")
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_LIFECYCLE_HOOKS = ("postStart", "preStop")
_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


@dataclass(frozen=True, kw_only=True)
class PodSecurityFinding:
    """One field of one pod template that the namespace's Pod Security level forbids."""

    ref: str
    """``PodTemplate.ref`` of the owner, e.g. ``Deployment/inference/ministral``."""
    path: str
    """Field path inside the manifest, e.g. ``spec.template.spec.containers[0].securityContext.capabilities.add``."""
    check: str
    """Upstream check id, e.g. ``capabilities_baseline``, ``runAsNonRoot``, ``seccompProfile_restricted``."""
    level: Level
    """The level whose check forbids it (baseline or restricted)."""
    message: str
    """What is wrong, with the offending value(s)."""
    fix: str
    """How to fix it."""

    def __str__(self) -> str:
        return f"{self.ref} {self.path}: {self.message} — {self.fix}"


# --------------------------------------------------------------------------------------------------------------
# Namespace levels
# --------------------------------------------------------------------------------------------------------------


def parse_level(value: object) -> Level:
    """The level a ``pod-security.kubernetes.io/enforce`` label value means; unknown values fail closed to
    ``restricted``, as upstream ``api.ParseLevel`` does for the enforce label."""
    try:
        return Level(str(value))
    except ValueError:
        return Level.RESTRICTED


def namespace_levels(manifests: Iterable[Mapping[str, Any]]) -> dict[str, Level]:
    """Enforce level per Namespace object in ``manifests`` (label ``pod-security.kubernetes.io/enforce``; a
    Namespace without the label = privileged, the admission plugin's default; an unknown value = restricted)."""
    levels: dict[str, Level] = {}
    for manifest in manifests:
        if manifest.get("kind") != "Namespace":
            continue
        meta = manifest.get("metadata") or {}
        name = meta.get("name")
        if not name:
            continue
        labels = meta.get("labels") or {}
        levels[str(name)] = parse_level(labels[ENFORCE_LABEL]) if ENFORCE_LABEL in labels else Level.PRIVILEGED
    return levels


# --------------------------------------------------------------------------------------------------------------
# Pod view
# --------------------------------------------------------------------------------------------------------------


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _resolve(node: Any, path: str) -> Any:
    """The value at dotted ``path`` (with ``[i]`` indices) inside ``node``; ``None`` if absent."""
    for key, index in _PATH_PART.findall(path):
        if key:
            node = node.get(key) if isinstance(node, Mapping) else None
        else:
            node = node[int(index)] if isinstance(node, list | tuple) and int(index) < len(node) else None
        if node is None:
            return None
    return node


def _show(value: Any) -> str:
    """A manifest value as it reads in YAML/JSON (``false``, not ``False``)."""
    return json.dumps(value) if isinstance(value, bool) or value is None else str(value)


def _quote(items: Iterable[str]) -> str:
    return ", ".join(f'"{item}"' for item in items)


@dataclass(frozen=True)
class _Container:
    path: str
    """e.g. ``spec.template.spec.containers[0]``."""
    name: str
    body: Mapping[str, Any]
    field: str
    """``initContainers`` | ``containers`` | ``ephemeralContainers``."""

    @property
    def security(self) -> Mapping[str, Any]:
        return _mapping(self.body.get("securityContext"))

    def at(self, suffix: str) -> str:
        return f"{self.path}.{suffix}"


@dataclass(frozen=True)
class _Pod:
    """A pod template with the paths and lookups the checks need."""

    template: PodTemplate

    @property
    def spec(self) -> Mapping[str, Any]:
        return self.template.spec

    @property
    def security(self) -> Mapping[str, Any]:
        return _mapping(self.spec.get("securityContext"))

    @property
    def spec_path(self) -> str:
        return f"{self.template.path}.spec" if self.template.path else "spec"

    @property
    def meta_path(self) -> str:
        return f"{self.template.path}.metadata" if self.template.path else "metadata"

    @property
    def annotations(self) -> Mapping[str, Any]:
        meta = _resolve(self.template.owner, self.meta_path)
        return _mapping(_mapping(meta).get("annotations"))

    @property
    def windows(self) -> bool:
        """``spec.os.name: windows`` — exempts the Linux-only restricted checks."""
        return _mapping(self.spec.get("os")).get("name") == "windows"

    @property
    def user_namespace(self) -> bool:
        """``spec.hostUsers: false`` — relaxes the root-related checks."""
        return self.spec.get("hostUsers") is False

    def at(self, suffix: str) -> str:
        return f"{self.spec_path}.{suffix}"

    def containers(self) -> Iterator[_Container]:
        for field in _CONTAINER_FIELDS:
            items = self.spec.get(field) or ()
            for index, body in enumerate(items):
                body = _mapping(body)
                name = str(body.get("name") or f"{field}[{index}]")
                yield _Container(self.at(f"{field}[{index}]"), name, body, field)

    def finding(self, check: str, level: Level, path: str, message: str, fix: str) -> PodSecurityFinding:
        return PodSecurityFinding(ref=self.template.ref, path=path, check=check, level=level, message=message, fix=fix)


def _or_namespace(level: Level) -> str:
    return f"or run the workload in a namespace whose enforce level is {level} ({ENFORCE_LABEL}: {level})"


_PRIVILEGED_NS = _or_namespace(Level.PRIVILEGED)
_BASELINE_NS = _or_namespace(Level.BASELINE)
_B, _R = Level.BASELINE, Level.RESTRICTED

# --------------------------------------------------------------------------------------------------------------
# Baseline checks
# --------------------------------------------------------------------------------------------------------------


def _windows_host_process(pod: _Pod) -> Iterator[PodSecurityFinding]:
    fix = f"remove windowsOptions.hostProcess (or set it to false), {_PRIVILEGED_NS}"
    if _mapping(pod.security.get("windowsOptions")).get("hostProcess") is True:
        path = pod.at("securityContext.windowsOptions.hostProcess")
        yield pod.finding("windowsHostProcess", _B, path, "pod sets hostProcess=true", fix)
    for c in pod.containers():
        if _mapping(c.security.get("windowsOptions")).get("hostProcess") is True:
            path = c.at("securityContext.windowsOptions.hostProcess")
            yield pod.finding("windowsHostProcess", _B, path, f'container "{c.name}" sets hostProcess=true', fix)


def _host_namespaces(pod: _Pod) -> Iterator[PodSecurityFinding]:
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.spec.get(field) is True:
            fix = f"remove {field} (or set it to false), {_PRIVILEGED_NS}"
            yield pod.finding("hostNamespaces", _B, pod.at(field), f"pod shares a host namespace: {field}=true", fix)


def _privileged(pod: _Pod) -> Iterator[PodSecurityFinding]:
    fix = f"remove securityContext.privileged (or set it to false), {_PRIVILEGED_NS}"
    for c in pod.containers():
        if c.security.get("privileged") is True:
            path = c.at("securityContext.privileged")
            yield pod.finding("privileged", _B, path, f'container "{c.name}" sets privileged=true', fix)


def _added_capabilities(c: _Container) -> list[str]:
    return [str(cap) for cap in _mapping(c.security.get("capabilities")).get("add") or ()]


def _capabilities_baseline(pod: _Pod) -> Iterator[PodSecurityFinding]:
    for c in pod.containers():
        extra = sorted(set(_added_capabilities(c)) - BASELINE_CAPABILITIES)
        if extra:
            allowed = ", ".join(sorted(BASELINE_CAPABILITIES))
            message = f'container "{c.name}" adds {_quote(extra)}, outside the baseline set ({allowed})'
            fix = f"drop {_quote(extra)} from securityContext.capabilities.add, {_PRIVILEGED_NS}"
            yield pod.finding("capabilities_baseline", _B, c.at("securityContext.capabilities.add"), message, fix)


def _host_path_volumes(pod: _Pod) -> Iterator[PodSecurityFinding]:
    for index, volume in enumerate(pod.spec.get("volumes") or ()):
        volume = _mapping(volume)
        if volume.get("hostPath") is not None:
            path = pod.at(f"volumes[{index}].hostPath")
            message = f'volume "{volume.get("name")}" is a hostPath ({_mapping(volume["hostPath"]).get("path")})'
            fix = f"use an emptyDir, persistentVolumeClaim, CSI or ephemeral volume instead, {_PRIVILEGED_NS}"
            yield pod.finding("hostPathVolumes", _B, path, message, fix)


def _host_ports(pod: _Pod) -> Iterator[PodSecurityFinding]:
    host_network = pod.spec.get("hostNetwork") is True
    for c in pod.containers():
        # Under hostNetwork the API server defaults an unset hostPort to the containerPort (containers and
        # initContainers only), and admission judges the defaulted pod.
        defaults_host_port = host_network and c.field != "ephemeralContainers"
        for index, port in enumerate(c.body.get("ports") or ()):
            port = _mapping(port)
            host_port = port.get("hostPort")
            path = c.at(f"ports[{index}].hostPort")
            if host_port:
                message = f'container "{c.name}" uses hostPort {host_port}'
                fix = f"remove hostPort and reach the container through a Service, {_PRIVILEGED_NS}"
                yield pod.finding("hostPorts", _B, path, message, fix)
            elif defaults_host_port and port.get("containerPort"):
                message = (
                    f'container "{c.name}" uses hostPort {port["containerPort"]} '
                    "(defaulted from containerPort because hostNetwork=true)"
                )
                fix = f"remove hostNetwork from the pod spec, {_PRIVILEGED_NS}"
                yield pod.finding("hostPorts", _B, path, message, fix)


def _host_probes_and_lifecycle(pod: _Pod) -> Iterator[PodSecurityFinding]:
    fix = "remove the host field so the probe or hook targets the pod's own IP, " + _PRIVILEGED_NS
    for c in pod.containers():
        handlers = [(probe, _mapping(c.body.get(probe))) for probe in _PROBES]
        lifecycle = _mapping(c.body.get("lifecycle"))
        handlers += [(f"lifecycle.{hook}", _mapping(lifecycle.get(hook))) for hook in _LIFECYCLE_HOOKS]
        for where, handler in handlers:
            for action in ("httpGet", "tcpSocket"):
                host = _mapping(handler.get(action)).get("host")
                if host:
                    message = f'container "{c.name}" {where}.{action} targets host "{host}"'
                    yield pod.finding("hostProbesAndHostLifecycle", _B, c.at(f"{where}.{action}.host"), message, fix)


def _app_armor_profile(pod: _Pod) -> Iterator[PodSecurityFinding]:
    fix = f"set appArmorProfile.type to RuntimeDefault or Localhost (or leave it unset), {_PRIVILEGED_NS}"
    sources = [("pod", pod.at("securityContext.appArmorProfile.type"), pod.security)]
    sources += [
        (f'container "{c.name}"', c.at("securityContext.appArmorProfile.type"), c.security) for c in pod.containers()
    ]
    for who, path, security in sources:
        profile = security.get("appArmorProfile")
        if profile is not None:
            kind = str(_mapping(profile).get("type") or "")
            if kind not in CONFINED_PROFILE_TYPES:
                yield pod.finding("appArmorProfile", _B, path, f'{who} sets AppArmor profile type "{kind}"', fix)
    for key, value in sorted(pod.annotations.items()):
        if not key.startswith(APPARMOR_ANNOTATION_PREFIX):
            continue
        text = "" if value is None else str(value)
        if text and text != "runtime/default" and not text.startswith("localhost/"):
            path = f"{pod.meta_path}.annotations[{key}]"
            message = f'annotation {key}="{text}" selects a forbidden AppArmor profile'
            ann_fix = 'use "runtime/default" or "localhost/<profile>" (better: securityContext.appArmorProfile), '
            yield pod.finding("appArmorProfile", _B, path, message, ann_fix + _PRIVILEGED_NS)


def _se_linux_options(pod: _Pod) -> Iterator[PodSecurityFinding]:
    sources = [("pod", pod.at("securityContext.seLinuxOptions"), pod.security)]
    sources += [(f'container "{c.name}"', c.at("securityContext.seLinuxOptions"), c.security) for c in pod.containers()]
    for who, path, security in sources:
        if security.get("seLinuxOptions") is None:
            continue
        options = _mapping(security.get("seLinuxOptions"))
        kind = str(options.get("type") or "")
        if kind not in SELINUX_TYPES:
            allowed = ", ".join(sorted(t for t in SELINUX_TYPES if t))
            message = f'{who} sets SELinux type "{kind}"'
            fix = f"use one of {allowed} (or leave type unset), {_PRIVILEGED_NS}"
            yield pod.finding("seLinuxOptions", _B, f"{path}.type", message, fix)
        for field in ("user", "role"):
            if options.get(field):
                message = f'{who} sets SELinux {field} "{options[field]}"'
                fix = f"remove seLinuxOptions.{field}, {_PRIVILEGED_NS}"
                yield pod.finding("seLinuxOptions", _B, f"{path}.{field}", message, fix)


def _unmasked_proc_mounts(pod: _Pod, check: str, level: Level, fix: str) -> Iterator[PodSecurityFinding]:
    for c in pod.containers():
        proc_mount = c.security.get("procMount")
        if proc_mount is not None and proc_mount != "Default":
            message = f'container "{c.name}" sets procMount "{proc_mount}"'
            yield pod.finding(check, level, c.at("securityContext.procMount"), message, fix)


def _proc_mount_baseline(pod: _Pod) -> Iterator[PodSecurityFinding]:
    if pod.user_namespace:
        return
    fix = "remove procMount (or set it to Default), or run the pod in a user namespace (hostUsers: false), "
    fix += _PRIVILEGED_NS
    yield from _unmasked_proc_mounts(pod, "procMount", _B, fix)


def _seccomp_profile_sources(pod: _Pod) -> list[tuple[str, str, Mapping[str, Any]]]:
    sources = [("pod", pod.at("securityContext.seccompProfile.type"), pod.security)]
    sources += [
        (f'container "{c.name}"', c.at("securityContext.seccompProfile.type"), c.security) for c in pod.containers()
    ]
    return sources


def _seccomp_explicitly_bad(pod: _Pod, check: str, level: Level, fix: str) -> Iterator[PodSecurityFinding]:
    for who, path, security in _seccomp_profile_sources(pod):
        profile = security.get("seccompProfile")
        if profile is not None:
            kind = str(_mapping(profile).get("type") or "")
            if kind not in CONFINED_PROFILE_TYPES:
                yield pod.finding(check, level, path, f'{who} sets seccomp profile type "{kind}"', fix)


def _seccomp_profile_baseline(pod: _Pod) -> Iterator[PodSecurityFinding]:
    fix = f"set seccompProfile.type to RuntimeDefault or Localhost (or leave it unset), {_PRIVILEGED_NS}"
    yield from _seccomp_explicitly_bad(pod, "seccompProfile_baseline", _B, fix)


def _sysctls(pod: _Pod) -> Iterator[PodSecurityFinding]:
    for index, sysctl in enumerate(pod.security.get("sysctls") or ()):
        name = _mapping(sysctl).get("name")
        if name not in SAFE_SYSCTLS:
            message = f'pod sets sysctl "{name}", outside the safe set ({", ".join(sorted(SAFE_SYSCTLS))})'
            fix = f"remove the sysctl (tune it on the node instead), {_PRIVILEGED_NS}"
            yield pod.finding("sysctls", _B, pod.at(f"securityContext.sysctls[{index}].name"), message, fix)


# --------------------------------------------------------------------------------------------------------------
# Restricted checks
# --------------------------------------------------------------------------------------------------------------


def _restricted_volumes(pod: _Pod) -> Iterator[PodSecurityFinding]:
    for index, volume in enumerate(pod.spec.get("volumes") or ()):
        volume = _mapping(volume)
        present = {key for key, value in volume.items() if value is not None}
        if present & RESTRICTED_VOLUME_SOURCES:
            continue
        forbidden = sorted(present & FORBIDDEN_VOLUME_SOURCES)
        if not forbidden:
            continue  # no known source at all: the API server defaults it to emptyDir
        message = f'volume "{volume.get("name")}" uses restricted volume type {_quote(forbidden)}'
        allowed = ", ".join(sorted(RESTRICTED_VOLUME_SOURCES))
        relax = _PRIVILEGED_NS if "hostPath" in forbidden else _BASELINE_NS
        fix = f"use one of {allowed} (a PV bound through a persistentVolumeClaim may be of any type), {relax}"
        yield pod.finding("restrictedVolumes", _R, pod.at(f"volumes[{index}].{forbidden[0]}"), message, fix)


def _allow_privilege_escalation(pod: _Pod) -> Iterator[PodSecurityFinding]:
    if pod.windows:
        return
    for c in pod.containers():
        value = c.security.get("allowPrivilegeEscalation")
        if value is not False:
            state = (
                "does not set allowPrivilegeEscalation"
                if value is None
                else f"sets allowPrivilegeEscalation={_show(value)}"
            )
            fix = f"set securityContext.allowPrivilegeEscalation: false on the container, {_BASELINE_NS}"
            path = c.at("securityContext.allowPrivilegeEscalation")
            yield pod.finding("allowPrivilegeEscalation", _R, path, f'container "{c.name}" {state}', fix)


def _pod_or_every_container(
    pod: _Pod,
    *,
    check: str,
    field: str,
    get: Callable[[Mapping[str, Any]], Any],
    ok: Callable[[Any], bool],
    describe: Callable[[Any], str],
    fix: str,
) -> Iterator[PodSecurityFinding]:
    """Shared shape of runAsNonRoot and seccompProfile_restricted (``field``: the securityContext path,
    ``get``: its value in one securityContext, ``None`` if unset).

    A container is judged by its own value when it sets one (that overrides the pod's), else by the pod's. Explicit
    bad values are findings at their own field; containers that set nothing while the pod sets nothing either are
    one finding at the pod-level field (upstream reports explicit bad values in preference to missing ones, and a
    bad pod-level value already covers the containers that inherit it)."""
    pod_value = get(pod.security)
    pod_path = pod.at(f"securityContext.{field}")
    if pod_value is not None and not ok(pod_value):
        yield pod.finding(check, _R, pod_path, f"pod {describe(pod_value)}", fix)
    uncovered: list[str] = []
    for c in pod.containers():
        value = get(c.security)
        if value is None:
            uncovered.append(c.name)
        elif not ok(value):
            yield pod.finding(
                check, _R, c.at(f"securityContext.{field}"), f'container "{c.name}" {describe(value)}', fix
            )
    if uncovered and pod_value is None:
        noun = "container" if len(uncovered) == 1 else "containers"
        message = f"{field} is set neither on the pod nor on {noun} {_quote(uncovered)}"
        yield pod.finding(check, _R, pod_path, message, fix)


def _run_as_non_root(pod: _Pod) -> Iterator[PodSecurityFinding]:
    if pod.user_namespace:
        return
    fix = (
        "set runAsNonRoot: true in the pod's securityContext (covers every container) and not false on any "
        f"container, or run the pod in a user namespace (hostUsers: false), {_BASELINE_NS}"
    )
    yield from _pod_or_every_container(
        pod,
        check="runAsNonRoot",
        field="runAsNonRoot",
        get=lambda security: security.get("runAsNonRoot"),
        ok=lambda value: value is True,
        describe=lambda value: f"sets runAsNonRoot={_show(value)}",
        fix=fix,
    )


def _run_as_user(pod: _Pod) -> Iterator[PodSecurityFinding]:
    if pod.user_namespace:
        return
    fix = "run as a non-zero UID (e.g. runAsUser: 1000), or run the pod in a user namespace (hostUsers: false), "
    fix += _BASELINE_NS
    sources = [("pod", pod.at("securityContext.runAsUser"), pod.security)]
    sources += [(f'container "{c.name}"', c.at("securityContext.runAsUser"), c.security) for c in pod.containers()]
    for who, path, security in sources:
        value = security.get("runAsUser")
        if value is not None and not isinstance(value, bool) and value == 0:
            yield pod.finding("runAsUser", _R, path, f"{who} sets runAsUser=0 (root)", fix)


def _seccomp_type(security: Mapping[str, Any]) -> str | None:
    """``seccompProfile.type`` of one securityContext: ``None`` when no profile is set, ``""`` for a profile
    without a type (which upstream treats as set, and invalid)."""
    profile = security.get("seccompProfile")
    return None if profile is None else str(_mapping(profile).get("type") or "")


def _seccomp_profile_restricted(pod: _Pod) -> Iterator[PodSecurityFinding]:
    if pod.windows:
        return
    fix = (
        "set seccompProfile.type: RuntimeDefault (or Localhost) in the pod's securityContext (covers every "
        f"container) and no other type on any container, {_BASELINE_NS}"
    )
    yield from _pod_or_every_container(
        pod,
        check="seccompProfile_restricted",
        field="seccompProfile.type",
        get=_seccomp_type,
        ok=lambda value: value in CONFINED_PROFILE_TYPES,
        describe=lambda value: f'sets seccomp profile type "{value}"',
        fix=fix,
    )


def _capabilities_restricted(pod: _Pod) -> Iterator[PodSecurityFinding]:
    if pod.windows:
        return
    for c in pod.containers():
        capabilities = _mapping(c.security.get("capabilities"))
        if "ALL" not in [str(cap) for cap in capabilities.get("drop") or ()]:
            message = f'container "{c.name}" does not drop ALL capabilities'
            fix = f'set securityContext.capabilities.drop: ["ALL"] on the container, {_BASELINE_NS}'
            yield pod.finding("capabilities_restricted", _R, c.at("securityContext.capabilities.drop"), message, fix)
        extra = sorted(set(_added_capabilities(c)) - RESTRICTED_CAPABILITIES)
        if extra:
            relax = _BASELINE_NS if set(extra) <= BASELINE_CAPABILITIES else _PRIVILEGED_NS
            message = f'container "{c.name}" adds {_quote(extra)}; restricted allows adding only NET_BIND_SERVICE'
            fix = f"drop {_quote(extra)} from securityContext.capabilities.add, {relax}"
            yield pod.finding("capabilities_restricted", _R, c.at("securityContext.capabilities.add"), message, fix)


def _proc_mount_restricted(pod: _Pod) -> Iterator[PodSecurityFinding]:
    fix = (
        "remove procMount (or set it to Default); an unmasked /proc needs hostUsers: false and a namespace whose "
        f"enforce level is baseline ({ENFORCE_LABEL}: baseline) or privileged"
    )
    yield from _unmasked_proc_mounts(pod, "procMount_restricted", _R, fix)


# --------------------------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------------------------

_CheckFn = Callable[[_Pod], Iterable[PodSecurityFinding]]


@dataclass(frozen=True)
class PodSecurityCheck:
    """One upstream check: its id, the level it belongs to, and how to run it over a pod."""

    id: str
    level: Level
    run: _CheckFn
    replaces: str | None = None
    """A baseline check this restricted check stands in for at restricted (upstream ``OverrideCheckIDs``)."""


CHECKS: tuple[PodSecurityCheck, ...] = (
    PodSecurityCheck("appArmorProfile", _B, _app_armor_profile),
    PodSecurityCheck("capabilities_baseline", _B, _capabilities_baseline),
    PodSecurityCheck("hostNamespaces", _B, _host_namespaces),
    PodSecurityCheck("hostPathVolumes", _B, _host_path_volumes),
    PodSecurityCheck("hostPorts", _B, _host_ports),
    PodSecurityCheck("hostProbesAndHostLifecycle", _B, _host_probes_and_lifecycle),
    PodSecurityCheck("privileged", _B, _privileged),
    PodSecurityCheck("procMount", _B, _proc_mount_baseline),
    PodSecurityCheck("seLinuxOptions", _B, _se_linux_options),
    PodSecurityCheck("seccompProfile_baseline", _B, _seccomp_profile_baseline),
    PodSecurityCheck("sysctls", _B, _sysctls),
    PodSecurityCheck("windowsHostProcess", _B, _windows_host_process),
    PodSecurityCheck("allowPrivilegeEscalation", _R, _allow_privilege_escalation),
    PodSecurityCheck("capabilities_restricted", _R, _capabilities_restricted, replaces="capabilities_baseline"),
    PodSecurityCheck("procMount_restricted", _R, _proc_mount_restricted, replaces="procMount"),
    PodSecurityCheck("restrictedVolumes", _R, _restricted_volumes, replaces="hostPathVolumes"),
    PodSecurityCheck("runAsNonRoot", _R, _run_as_non_root),
    PodSecurityCheck("runAsUser", _R, _run_as_user),
    PodSecurityCheck("seccompProfile_restricted", _R, _seccomp_profile_restricted, replaces="seccompProfile_baseline"),
)
"""Every check of policy version ``latest`` (Kubernetes 1.36), baseline first, each level sorted by id as upstream."""


def checks_for(level: Level) -> tuple[PodSecurityCheck, ...]:
    """The checks that run at ``level``: none at privileged, the baseline ones at baseline, and at restricted the
    restricted ones plus every baseline one that no restricted check replaces."""
    if level == Level.PRIVILEGED:
        return ()
    if level == Level.BASELINE:
        return tuple(c for c in CHECKS if c.level == Level.BASELINE)
    replaced = {c.replaces for c in CHECKS if c.replaces}
    return tuple(c for c in CHECKS if c.id not in replaced)


def check_pod(template: PodTemplate, level: Level) -> list[PodSecurityFinding]:
    """Every finding for one pod template judged at Pod Security ``level`` (``[]`` = admitted)."""
    pod = _Pod(template)
    return [finding for check in checks_for(Level(level)) for finding in check.run(pod)]


def check_manifests(
    manifests: Iterable[Mapping[str, Any]],
    levels: Mapping[str, Level],
    default: Level = Level.PRIVILEGED,
) -> list[PodSecurityFinding]:
    """Every pod template of every manifest, judged at the enforce level of its namespace (``levels[ns]``, else
    ``default``)."""
    findings: list[PodSecurityFinding] = []
    for template in all_pod_templates(list(manifests)):
        findings.extend(check_pod(template, levels.get(template.namespace, default)))
    return findings
