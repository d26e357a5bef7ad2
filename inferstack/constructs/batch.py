"""Batch Jobs that run one of inferstack's scripts (model sync, Neuron compile): shared pod defaults."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources

from cdk8s_plus_36 import k8s
from constructs import Construct

BATCH_PRIORITY_CLASS = "inferstack-batch"
SCRIPTS_DIR = "/scripts"
WORK_DIR = "/work"
POD_TMP = "/tmp"  # noqa: S108 - always a pod-local emptyDir


def hardened(user: int = 1000, *, read_only_root_filesystem: bool | None = None) -> k8s.SecurityContext:
    """Non-root, no privilege escalation, no capabilities (optionally a read-only root file system)."""
    return k8s.SecurityContext(
        run_as_non_root=True,
        run_as_user=user,
        run_as_group=user,
        allow_privilege_escalation=False,
        capabilities=k8s.Capabilities(drop=["ALL"]),
        read_only_root_filesystem=read_only_root_filesystem,
    )


def script(name: str) -> str:
    """Text of ``inferstack/constructs/scripts/<name>``."""
    return resources.files("inferstack.constructs").joinpath(f"scripts/{name}").read_text()


def script_job(
    scope: Construct,
    *,
    name: str,
    namespace: str,
    component: str,
    script_name: str,
    service_account: str,
    container: k8s.Container,
    volumes: Sequence[k8s.Volume],
    backoff_limit: int,
    scratch_gib: int,
    node_selector: Mapping[str, str] | None = None,
    tolerations: Sequence[str] = (),
    fs_group: int | None = None,
) -> k8s.KubeJob:
    """A ConfigMap holding the script (mounted read-only at ``/scripts``) and a Job running ``container``:
    never restarted in place, batch priority (never preempts serving), RuntimeDefault seccomp, removed a day after
    it finishes. The pod gets a ``work`` emptyDir of ``scratch_gib`` (mount it with :func:`work_mount`)."""
    config_map = f"{name}-script"
    k8s.KubeConfigMap(
        scope,
        "script",
        metadata=k8s.ObjectMeta(name=config_map, namespace=namespace),
        data={script_name: script(script_name)},
    )
    return k8s.KubeJob(
        scope,
        "job",
        metadata=k8s.ObjectMeta(name=name, namespace=namespace, labels={"app.kubernetes.io/component": component}),
        spec=k8s.JobSpec(
            backoff_limit=backoff_limit,
            ttl_seconds_after_finished=86_400,
            template=k8s.PodTemplateSpec(
                spec=k8s.PodSpec(
                    service_account_name=service_account,
                    restart_policy="Never",
                    priority_class_name=BATCH_PRIORITY_CLASS,
                    node_selector=dict(node_selector) if node_selector else None,
                    tolerations=[
                        k8s.Toleration(key=key, operator="Exists", effect="NoSchedule") for key in sorted(tolerations)
                    ]
                    or None,
                    security_context=k8s.PodSecurityContext(
                        fs_group=fs_group, seccomp_profile=k8s.SeccompProfile(type="RuntimeDefault")
                    ),
                    containers=[container],
                    volumes=[
                        *volumes,
                        k8s.Volume(name="script", config_map=k8s.ConfigMapVolumeSource(name=config_map)),
                    ],
                )
            ),
        ),
    )


def script_mount() -> k8s.VolumeMount:
    return k8s.VolumeMount(name="script", mount_path=SCRIPTS_DIR, read_only=True)


def work_mount() -> k8s.VolumeMount:
    """The Job's scratch space (``/work``)."""
    return k8s.VolumeMount(name="work", mount_path=WORK_DIR)
