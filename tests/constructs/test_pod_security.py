"""Pod Security Standards checker: each upstream check (policy ``latest``, Kubernetes 1.36) at the level it belongs
to, the pod/container precedence rules, and namespace-level resolution over whole manifest sets."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from inferstack.gates.pod_security import (
    ENFORCE_LABEL,
    Level,
    PodSecurityFinding,
    check_manifests,
    check_pod,
    checks_for,
    namespace_levels,
)
from inferstack.gates.pods import pod_templates

SPEC = "spec.template.spec"
C0 = f"{SPEC}.containers[0]"


def deployment(
    spec: dict[str, Any], *, name: str = "app", namespace: str = "inference", annotations: Any = None
) -> dict:
    metadata: dict[str, Any] = {"labels": {"app": name}}
    if annotations is not None:
        metadata["annotations"] = annotations
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"app": name}}, "template": {"metadata": metadata, "spec": spec}},
    }


def namespace(name: str, level: str | None) -> dict:
    labels = {ENFORCE_LABEL: level} if level is not None else {}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def plain_spec() -> dict[str, Any]:
    """The default, minimally specified pod: baseline-compliant, not restricted-compliant."""
    return {"containers": [{"name": "main", "image": "registry.example/app:1"}]}


def hardened_container(name: str = "main") -> dict[str, Any]:
    return {
        "name": name,
        "image": "registry.example/app:1",
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
    }


def hardened_spec() -> dict[str, Any]:
    """A restricted-compliant pod."""
    return {
        "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [hardened_container()],
    }


def judge(spec: dict[str, Any], level: Level, *, annotations: Any = None) -> list[PodSecurityFinding]:
    (template,) = pod_templates(deployment(spec, annotations=annotations))
    return check_pod(template, level)


def ids(findings: list[PodSecurityFinding]) -> set[str]:
    return {f.check for f in findings}


def mutate(base: Callable[[], dict[str, Any]], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    spec = copy.deepcopy(base())
    change(spec)
    return spec


def c0(spec: dict[str, Any]) -> dict[str, Any]:
    """securityContext of the first container (created if missing)."""
    return spec["containers"][0].setdefault("securityContext", {})


def pod_sc(spec: dict[str, Any]) -> dict[str, Any]:
    return spec.setdefault("securityContext", {})


# ---------------------------------------------------------------------------------------------------------------
# Baseline: (bad change, expected check, expected path) and good changes that must stay clean
# ---------------------------------------------------------------------------------------------------------------

BASELINE_BAD: list[tuple[str, Callable[[dict[str, Any]], None], str, str]] = [
    (
        "pod hostProcess",
        lambda s: pod_sc(s).update(windowsOptions={"hostProcess": True}),
        "windowsHostProcess",
        f"{SPEC}.securityContext.windowsOptions.hostProcess",
    ),
    (
        "container hostProcess",
        lambda s: c0(s).update(windowsOptions={"hostProcess": True}),
        "windowsHostProcess",
        f"{C0}.securityContext.windowsOptions.hostProcess",
    ),
    ("hostNetwork", lambda s: s.update(hostNetwork=True), "hostNamespaces", f"{SPEC}.hostNetwork"),
    ("hostPID", lambda s: s.update(hostPID=True), "hostNamespaces", f"{SPEC}.hostPID"),
    ("hostIPC", lambda s: s.update(hostIPC=True), "hostNamespaces", f"{SPEC}.hostIPC"),
    ("privileged", lambda s: c0(s).update(privileged=True), "privileged", f"{C0}.securityContext.privileged"),
    (
        "privileged ephemeral container",
        lambda s: s.update(ephemeralContainers=[{"name": "debug", "securityContext": {"privileged": True}}]),
        "privileged",
        f"{SPEC}.ephemeralContainers[0].securityContext.privileged",
    ),
    (
        "privileged init container",
        lambda s: s.update(initContainers=[{"name": "init", "securityContext": {"privileged": True}}]),
        "privileged",
        f"{SPEC}.initContainers[0].securityContext.privileged",
    ),
    (
        "capability SYS_ADMIN",
        lambda s: c0(s).update(capabilities={"add": ["NET_BIND_SERVICE", "SYS_ADMIN"]}),
        "capabilities_baseline",
        f"{C0}.securityContext.capabilities.add",
    ),
    (
        "hostPath volume",
        lambda s: s.update(volumes=[{"name": "models", "hostPath": {"path": "/mnt/models"}}]),
        "hostPathVolumes",
        f"{SPEC}.volumes[0].hostPath",
    ),
    (
        "hostPort",
        lambda s: s["containers"][0].update(ports=[{"containerPort": 8000, "hostPort": 8000}]),
        "hostPorts",
        f"{C0}.ports[0].hostPort",
    ),
    (
        "probe host",
        lambda s: s["containers"][0].update(
            livenessProbe={"httpGet": {"path": "/health", "port": 8000, "host": "10.0.0.1"}}
        ),
        "hostProbesAndHostLifecycle",
        f"{C0}.livenessProbe.httpGet.host",
    ),
    (
        "lifecycle host",
        lambda s: s["containers"][0].update(lifecycle={"preStop": {"tcpSocket": {"port": 80, "host": "metadata"}}}),
        "hostProbesAndHostLifecycle",
        f"{C0}.lifecycle.preStop.tcpSocket.host",
    ),
    (
        "pod AppArmor Unconfined",
        lambda s: pod_sc(s).update(appArmorProfile={"type": "Unconfined"}),
        "appArmorProfile",
        f"{SPEC}.securityContext.appArmorProfile.type",
    ),
    (
        "container AppArmor Unconfined",
        lambda s: c0(s).update(appArmorProfile={"type": "Unconfined"}),
        "appArmorProfile",
        f"{C0}.securityContext.appArmorProfile.type",
    ),
    (
        "SELinux type",
        lambda s: c0(s).update(seLinuxOptions={"type": "spc_t"}),
        "seLinuxOptions",
        f"{C0}.securityContext.seLinuxOptions.type",
    ),
    (
        "SELinux user",
        lambda s: pod_sc(s).update(seLinuxOptions={"user": "system_u"}),
        "seLinuxOptions",
        f"{SPEC}.securityContext.seLinuxOptions.user",
    ),
    (
        "SELinux role",
        lambda s: c0(s).update(seLinuxOptions={"type": "container_t", "role": "sysadm_r"}),
        "seLinuxOptions",
        f"{C0}.securityContext.seLinuxOptions.role",
    ),
    (
        "procMount Unmasked",
        lambda s: c0(s).update(procMount="Unmasked"),
        "procMount",
        f"{C0}.securityContext.procMount",
    ),
    (
        "pod seccomp Unconfined",
        lambda s: pod_sc(s).update(seccompProfile={"type": "Unconfined"}),
        "seccompProfile_baseline",
        f"{SPEC}.securityContext.seccompProfile.type",
    ),
    (
        "container seccomp Unconfined",
        lambda s: c0(s).update(seccompProfile={"type": "Unconfined"}),
        "seccompProfile_baseline",
        f"{C0}.securityContext.seccompProfile.type",
    ),
    (
        "unsafe sysctl",
        lambda s: pod_sc(s).update(sysctls=[{"name": "net.ipv4.tcp_rmem", "value": "4096"}, {"name": "kernel.msgmax"}]),
        "sysctls",
        f"{SPEC}.securityContext.sysctls[1].name",
    ),
]

BASELINE_GOOD: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
    ("hostProcess false", lambda s: pod_sc(s).update(windowsOptions={"hostProcess": False})),
    ("host namespaces false", lambda s: s.update(hostNetwork=False, hostPID=False, hostIPC=False)),
    ("privileged false", lambda s: c0(s).update(privileged=False)),
    ("baseline capabilities", lambda s: c0(s).update(capabilities={"add": ["NET_BIND_SERVICE", "CHOWN", "KILL"]})),
    ("emptyDir volume", lambda s: s.update(volumes=[{"name": "cache", "emptyDir": {}}])),
    ("containerPort only", lambda s: s["containers"][0].update(ports=[{"containerPort": 8000}])),
    ("hostPort 0", lambda s: s["containers"][0].update(ports=[{"containerPort": 8000, "hostPort": 0}])),
    ("probe without host", lambda s: s["containers"][0].update(readinessProbe={"httpGet": {"path": "/", "port": 80}})),
    ("AppArmor RuntimeDefault", lambda s: pod_sc(s).update(appArmorProfile={"type": "RuntimeDefault"})),
    ("AppArmor Localhost", lambda s: c0(s).update(appArmorProfile={"type": "Localhost", "localhostProfile": "p"})),
    ("SELinux container_t", lambda s: c0(s).update(seLinuxOptions={"type": "container_t", "level": "s0:c1,c2"})),
    ("SELinux container_engine_t", lambda s: pod_sc(s).update(seLinuxOptions={"type": "container_engine_t"})),
    ("procMount Default", lambda s: c0(s).update(procMount="Default")),
    (
        "procMount Unmasked in a user namespace",
        lambda s: (c0(s).update(procMount="Unmasked"), s.update(hostUsers=False)),
    ),
    ("seccomp RuntimeDefault", lambda s: pod_sc(s).update(seccompProfile={"type": "RuntimeDefault"})),
    ("seccomp Localhost", lambda s: c0(s).update(seccompProfile={"type": "Localhost", "localhostProfile": "p.json"})),
    ("safe sysctls", lambda s: pod_sc(s).update(sysctls=[{"name": "net.ipv4.ip_local_port_range", "value": "1 2"}])),
]


@pytest.mark.parametrize(("change", "check", "path"), [c[1:] for c in BASELINE_BAD], ids=[c[0] for c in BASELINE_BAD])
def test_baseline_violation_is_found_at_baseline_and_restricted_but_not_privileged(
    change: Callable[[dict[str, Any]], None], check: str, path: str
) -> None:
    findings = judge(mutate(plain_spec, change), Level.BASELINE)
    assert [(f.check, f.path, f.level) for f in findings] == [(check, path, Level.BASELINE)]
    assert judge(mutate(plain_spec, change), Level.PRIVILEGED) == []
    # Restricted includes every baseline control (possibly through the restricted check that replaces it).
    restricted = judge(mutate(hardened_spec, change), Level.RESTRICTED)
    assert any(f.path == path or f.path.startswith(path) for f in restricted), restricted


@pytest.mark.parametrize("change", [c[1] for c in BASELINE_GOOD], ids=[c[0] for c in BASELINE_GOOD])
def test_baseline_compliant_variant_passes_baseline(change: Callable[[dict[str, Any]], None]) -> None:
    assert judge(mutate(plain_spec, change), Level.BASELINE) == []


def test_default_pod_passes_baseline_but_not_restricted() -> None:
    assert judge(plain_spec(), Level.BASELINE) == []
    assert ids(judge(plain_spec(), Level.RESTRICTED)) == {
        "allowPrivilegeEscalation",
        "capabilities_restricted",
        "runAsNonRoot",
        "seccompProfile_restricted",
    }


def test_apparmor_legacy_annotations() -> None:
    prefix = "container.apparmor.security.beta.kubernetes.io/"
    bad = judge(plain_spec(), Level.BASELINE, annotations={f"{prefix}main": "unconfined"})
    assert [(f.check, f.path) for f in bad] == [
        ("appArmorProfile", f"spec.template.metadata.annotations[{prefix}main]"),
    ]
    assert "unconfined" in bad[0].message
    good = {f"{prefix}main": "runtime/default", f"{prefix}side": "localhost/my-profile", f"{prefix}x": ""}
    assert judge(plain_spec(), Level.BASELINE, annotations=good) == []


def test_legacy_seccomp_annotations_are_not_judged_by_latest() -> None:
    annotations = {"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}
    assert judge(plain_spec(), Level.BASELINE, annotations=annotations) == []


def test_host_network_defaults_host_ports() -> None:
    spec = mutate(
        plain_spec, lambda s: (s.update(hostNetwork=True), s["containers"][0].update(ports=[{"containerPort": 9000}]))
    )
    findings = judge(spec, Level.BASELINE)
    assert {(f.check, f.path) for f in findings} == {
        ("hostNamespaces", f"{SPEC}.hostNetwork"),
        ("hostPorts", f"{C0}.ports[0].hostPort"),
    }


def test_selinux_reports_type_user_and_role_separately() -> None:
    spec = mutate(plain_spec, lambda s: c0(s).update(seLinuxOptions={"type": "unconfined_t", "user": "u", "role": "r"}))
    paths = [f.path for f in judge(spec, Level.BASELINE)]
    assert paths == [f"{C0}.securityContext.seLinuxOptions.{x}" for x in ("type", "user", "role")]


def test_seccomp_profile_without_type_is_forbidden() -> None:
    spec = mutate(plain_spec, lambda s: c0(s).update(seccompProfile={}))
    assert ids(judge(spec, Level.BASELINE)) == {"seccompProfile_baseline"}


# ---------------------------------------------------------------------------------------------------------------
# Capabilities and the IPC_LOCK case
# ---------------------------------------------------------------------------------------------------------------


def ipc_lock_deployment(ns: str) -> dict[str, Any]:
    spec = mutate(plain_spec, lambda s: c0(s).update(capabilities={"add": ["IPC_LOCK"]}))
    return deployment(spec, name="vllm", namespace=ns)


def test_ipc_lock_in_baseline_namespace_fix_names_both_options() -> None:
    manifests = [namespace("inference", "baseline"), ipc_lock_deployment("inference")]
    (finding,) = check_manifests(manifests, namespace_levels(manifests))
    assert finding.check == "capabilities_baseline"
    assert finding.level == Level.BASELINE
    assert finding.ref == "Deployment/inference/vllm"
    assert finding.path == f"{C0}.securityContext.capabilities.add"
    assert "IPC_LOCK" in finding.message
    assert "drop" in finding.fix and '"IPC_LOCK"' in finding.fix
    assert "privileged" in finding.fix and ENFORCE_LABEL in finding.fix
    assert str(finding) == f"{finding.ref} {finding.path}: {finding.message} — {finding.fix}"


def test_ipc_lock_in_privileged_namespace_passes() -> None:
    manifests = [namespace("inference", "privileged"), ipc_lock_deployment("inference")]
    assert check_manifests(manifests, namespace_levels(manifests)) == []


def test_capabilities_restricted() -> None:
    no_drop = judge(mutate(hardened_spec, lambda s: c0(s).pop("capabilities")), Level.RESTRICTED)
    assert [(f.check, f.path) for f in no_drop] == [
        ("capabilities_restricted", f"{C0}.securityContext.capabilities.drop"),
    ]
    ok = mutate(hardened_spec, lambda s: c0(s)["capabilities"].update(add=["NET_BIND_SERVICE"]))
    assert judge(ok, Level.RESTRICTED) == []

    chown = judge(mutate(hardened_spec, lambda s: c0(s)["capabilities"].update(add=["CHOWN"])), Level.RESTRICTED)
    assert [(f.check, f.path, f.level) for f in chown] == [
        ("capabilities_restricted", f"{C0}.securityContext.capabilities.add", Level.RESTRICTED),
    ]
    assert "enforce level is baseline" in chown[0].fix  # CHOWN is fine under baseline

    ipc = judge(mutate(hardened_spec, lambda s: c0(s)["capabilities"].update(add=["IPC_LOCK"])), Level.RESTRICTED)
    assert ids(ipc) == {"capabilities_restricted"}  # replaces capabilities_baseline at restricted
    assert "enforce level is privileged" in ipc[0].fix


def test_drop_must_be_all_exactly() -> None:
    spec = mutate(hardened_spec, lambda s: c0(s)["capabilities"].update(drop=["NET_RAW", "all"]))
    assert ids(judge(spec, Level.RESTRICTED)) == {"capabilities_restricted"}


# ---------------------------------------------------------------------------------------------------------------
# Restricted checks
# ---------------------------------------------------------------------------------------------------------------


def test_hardened_pod_passes_restricted() -> None:
    assert judge(hardened_spec(), Level.RESTRICTED) == []


@pytest.mark.parametrize(
    "volume",
    [
        {"name": "a", "configMap": {"name": "cm"}},
        {"name": "b", "csi": {"driver": "x"}},
        {"name": "c", "downwardAPI": {"items": []}},
        {"name": "d", "emptyDir": {"medium": "Memory"}},
        {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
        {"name": "f", "image": {"reference": "registry.example/weights:1"}},
        {"name": "g", "persistentVolumeClaim": {"claimName": "models"}},
        {"name": "h", "projected": {"sources": []}},
        {"name": "i", "secret": {"secretName": "s"}},
        {"name": "j"},  # no source: defaulted to emptyDir by the API server
    ],
    ids=lambda v: next((k for k in v if k != "name"), "none"),
)
def test_restricted_volume_allowed(volume: dict[str, Any]) -> None:
    assert judge(mutate(hardened_spec, lambda s: s.update(volumes=[volume])), Level.RESTRICTED) == []


@pytest.mark.parametrize("source", ["nfs", "awsElasticBlockStore", "gitRepo", "hostPath", "iscsi", "flexVolume"])
def test_restricted_volume_forbidden(source: str) -> None:
    spec = mutate(hardened_spec, lambda s: s.update(volumes=[{"name": "v", source: {}}]))
    findings = judge(spec, Level.RESTRICTED)
    assert [(f.check, f.path, f.level) for f in findings] == [
        ("restrictedVolumes", f"{SPEC}.volumes[0].{source}", Level.RESTRICTED),
    ]
    expected_baseline = {"hostPathVolumes"} if source == "hostPath" else set()
    assert ids(judge(spec, Level.BASELINE)) == expected_baseline


@pytest.mark.parametrize("value", [None, True])
def test_allow_privilege_escalation_must_be_false(value: bool | None) -> None:
    def change(s: dict[str, Any]) -> None:
        if value is None:
            c0(s).pop("allowPrivilegeEscalation")
        else:
            c0(s)["allowPrivilegeEscalation"] = value

    findings = judge(mutate(hardened_spec, change), Level.RESTRICTED)
    assert [(f.check, f.path) for f in findings] == [
        ("allowPrivilegeEscalation", f"{C0}.securityContext.allowPrivilegeEscalation"),
    ]
    assert judge(mutate(hardened_spec, change), Level.BASELINE) == []


def test_every_container_kind_needs_allow_privilege_escalation_false() -> None:
    def change(s: dict[str, Any]) -> None:
        s["initContainers"] = [hardened_container("init")]
        s["ephemeralContainers"] = [{"name": "debug", "image": "busybox"}]

    findings = judge(mutate(hardened_spec, change), Level.RESTRICTED)
    assert {(f.check, f.path) for f in findings} == {
        ("allowPrivilegeEscalation", f"{SPEC}.ephemeralContainers[0].securityContext.allowPrivilegeEscalation"),
        ("capabilities_restricted", f"{SPEC}.ephemeralContainers[0].securityContext.capabilities.drop"),
    }


def test_run_as_non_root_pod_level_covers_containers() -> None:
    spec = mutate(hardened_spec, lambda s: s["containers"].append(hardened_container("sidecar")))
    assert judge(spec, Level.RESTRICTED) == []


def test_run_as_non_root_container_false_overrides_pod_true() -> None:
    spec = mutate(hardened_spec, lambda s: c0(s).update(runAsNonRoot=False))
    findings = judge(spec, Level.RESTRICTED)
    assert [(f.check, f.path) for f in findings] == [("runAsNonRoot", f"{C0}.securityContext.runAsNonRoot")]
    assert "runAsNonRoot=false" in findings[0].message


def test_run_as_non_root_set_nowhere() -> None:
    spec = mutate(hardened_spec, lambda s: pod_sc(s).pop("runAsNonRoot"))
    findings = judge(spec, Level.RESTRICTED)
    assert [(f.check, f.path) for f in findings] == [("runAsNonRoot", f"{SPEC}.securityContext.runAsNonRoot")]
    assert '"main"' in findings[0].message


def test_run_as_non_root_on_every_container_without_pod_level() -> None:
    def change(s: dict[str, Any]) -> None:
        pod_sc(s).pop("runAsNonRoot")
        c0(s)["runAsNonRoot"] = True

    assert judge(mutate(hardened_spec, change), Level.RESTRICTED) == []


def test_run_as_non_root_pod_false_is_reported_once() -> None:
    spec = mutate(hardened_spec, lambda s: pod_sc(s).update(runAsNonRoot=False))
    findings = judge(spec, Level.RESTRICTED)
    assert [(f.check, f.path) for f in findings] == [("runAsNonRoot", f"{SPEC}.securityContext.runAsNonRoot")]


def test_run_as_user_zero() -> None:
    pod_root = judge(mutate(hardened_spec, lambda s: pod_sc(s).update(runAsUser=0)), Level.RESTRICTED)
    assert [(f.check, f.path) for f in pod_root] == [("runAsUser", f"{SPEC}.securityContext.runAsUser")]
    container_root = judge(mutate(hardened_spec, lambda s: c0(s).update(runAsUser=0)), Level.RESTRICTED)
    assert [(f.check, f.path) for f in container_root] == [("runAsUser", f"{C0}.securityContext.runAsUser")]
    assert judge(mutate(hardened_spec, lambda s: pod_sc(s).pop("runAsUser")), Level.RESTRICTED) == []
    assert judge(mutate(hardened_spec, lambda s: c0(s).update(runAsUser=0)), Level.BASELINE) == []


def test_user_namespace_relaxes_root_checks_but_not_proc_mount_restricted() -> None:
    def change(s: dict[str, Any]) -> None:
        s["hostUsers"] = False
        s["securityContext"] = {"runAsUser": 0, "seccompProfile": {"type": "RuntimeDefault"}}
        c0(s)["procMount"] = "Unmasked"

    spec = mutate(hardened_spec, change)
    findings = judge(spec, Level.RESTRICTED)
    assert [(f.check, f.path) for f in findings] == [("procMount_restricted", f"{C0}.securityContext.procMount")]
    assert judge(spec, Level.BASELINE) == []


def test_seccomp_restricted_must_be_set() -> None:
    missing = judge(mutate(hardened_spec, lambda s: pod_sc(s).pop("seccompProfile")), Level.RESTRICTED)
    assert [(f.check, f.path) for f in missing] == [
        ("seccompProfile_restricted", f"{SPEC}.securityContext.seccompProfile.type"),
    ]

    def per_container(s: dict[str, Any]) -> None:
        pod_sc(s).pop("seccompProfile")
        c0(s)["seccompProfile"] = {"type": "Localhost", "localhostProfile": "vllm.json"}

    assert judge(mutate(hardened_spec, per_container), Level.RESTRICTED) == []

    override = judge(
        mutate(hardened_spec, lambda s: c0(s).update(seccompProfile={"type": "Unconfined"})), Level.RESTRICTED
    )
    assert [(f.check, f.path) for f in override] == [
        ("seccompProfile_restricted", f"{C0}.securityContext.seccompProfile.type"),
    ]  # replaces seccompProfile_baseline at restricted: reported once


def test_windows_pods_skip_linux_only_restricted_checks() -> None:
    spec = {"os": {"name": "windows"}, "securityContext": {"runAsNonRoot": True}, "containers": [{"name": "w"}]}
    assert judge(spec, Level.RESTRICTED) == []


def test_check_sets_per_level() -> None:
    assert checks_for(Level.PRIVILEGED) == ()
    baseline = {c.id for c in checks_for(Level.BASELINE)}
    restricted = {c.id for c in checks_for(Level.RESTRICTED)}
    assert "runAsNonRoot" not in baseline
    replaced = {"capabilities_baseline", "hostPathVolumes", "procMount", "seccompProfile_baseline"}
    assert restricted == (baseline - replaced) | {
        "allowPrivilegeEscalation",
        "capabilities_restricted",
        "procMount_restricted",
        "restrictedVolumes",
        "runAsNonRoot",
        "runAsUser",
        "seccompProfile_restricted",
    }


# ---------------------------------------------------------------------------------------------------------------
# Namespaces and manifest sets
# ---------------------------------------------------------------------------------------------------------------


def test_namespace_levels() -> None:
    manifests = [
        namespace("a", "restricted"),
        namespace("b", "baseline"),
        namespace("c", None),
        namespace("d", "bogus"),
        deployment(plain_spec()),
    ]
    assert namespace_levels(manifests) == {
        "a": Level.RESTRICTED,
        "b": Level.BASELINE,
        "c": Level.PRIVILEGED,
        "d": Level.RESTRICTED,  # unparseable enforce level fails closed, as upstream
    }


def test_check_manifests_finds_job_and_deployment_and_uses_namespace_levels() -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "model-sync", "namespace": "inference"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "sync", "image": "x"}]}}},
    }
    manifests = [namespace("inference", "restricted"), job, deployment(plain_spec(), name="api")]
    findings = check_manifests(manifests, namespace_levels(manifests))
    assert {f.ref for f in findings} == {"Job/inference/model-sync", "Deployment/inference/api"}
    assert {f.path for f in findings if f.ref.startswith("Job/")} >= {
        "spec.template.spec.securityContext.runAsNonRoot",
        "spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation",
    }
    assert all(f.level == Level.RESTRICTED for f in findings)


def test_check_manifests_default_level_for_unknown_namespace() -> None:
    manifests = [ipc_lock_deployment("elsewhere")]
    assert check_manifests(manifests, {}) == []
    assert ids(check_manifests(manifests, {}, default=Level.BASELINE)) == {"capabilities_baseline"}
    assert check_manifests(manifests, {"elsewhere": Level.PRIVILEGED}, default=Level.RESTRICTED) == []


def test_bare_pod_paths() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"hostPID": True, "containers": [{"name": "c"}]},
    }
    (finding,) = check_manifests([pod], {"ns": Level.BASELINE})
    assert (finding.ref, finding.path) == ("Pod/ns/p", "spec.hostPID")


def test_hardened_vllm_deployment_passes_restricted() -> None:
    vllm = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "ministral", "namespace": "inference", "labels": {"app": "ministral"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "ministral"}},
            "template": {
                "metadata": {"labels": {"app": "ministral"}},
                "spec": {
                    "serviceAccountName": "ministral",
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 1000,
                        "runAsGroup": 1000,
                        "fsGroup": 1000,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "initContainers": [
                        {
                            "name": "model-sync",
                            "image": "public.ecr.aws/aws-cli/aws-cli:2",
                            "args": ["s3", "sync", "s3://models/ministral", "/models"],
                            "volumeMounts": [{"name": "models", "mountPath": "/models"}],
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "readOnlyRootFilesystem": True,
                                "capabilities": {"drop": ["ALL"]},
                            },
                        }
                    ],
                    "containers": [
                        {
                            "name": "vllm",
                            "image": "vllm/vllm-openai:v0.11.0",
                            "args": ["--model", "/models", "--port", "8000"],
                            "ports": [{"name": "http", "containerPort": 8000}],
                            "resources": {"limits": {"nvidia.com/gpu": "1"}},
                            "readinessProbe": {"httpGet": {"path": "/health", "port": 8000}},
                            "livenessProbe": {"httpGet": {"path": "/health", "port": "http"}},
                            "volumeMounts": [
                                {"name": "models", "mountPath": "/models"},
                                {"name": "dshm", "mountPath": "/dev/shm"},
                                {"name": "config", "mountPath": "/etc/vllm"},
                            ],
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]},
                            },
                        }
                    ],
                    "volumes": [
                        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}},
                        {"name": "models", "persistentVolumeClaim": {"claimName": "ministral-models"}},
                        {"name": "config", "configMap": {"name": "ministral-config"}},
                    ],
                },
            },
        },
    }
    manifests = [namespace("inference", "restricted"), vllm]
    assert check_manifests(manifests, namespace_levels(manifests)) == []
