"""Batch Jobs that run one of inferstack's scripts (model sync, Neuron compile): shared pod defaults."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from importlib import resources
from typing import Any

import cdk8s
from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.constructs.pod.mounts import check_mounted
from inferstack.constructs.pod.placement import PodPlacement

BATCH_PRIORITY_CLASS = "inferstack-batch"
#: Batch work's placement: the ``inferstack-batch`` PriorityClass (never preempts serving), any node.
BATCH_PLACEMENT = PodPlacement(priority_class=BATCH_PRIORITY_CLASS)
SCRIPTS_DIR = "/scripts"
WORK_DIR = "/work"
POD_TMP = "/tmp"  # noqa: S108 - always a pod-local emptyDir
#: Placeholder name of the script ConfigMap while the template is hashed (replaced by ``<job>-script``).
SCRIPT_CONFIG_MAP = "script"


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


#: A CDK token rendered into a manifest (``${Token[Bucket.Name.123]}``): its counter depends on construction order,
#: not on what it stands for, so it is masked before hashing.
_TOKEN = re.compile(r"\$\{Token\[[^\]]*\]\}")


def content_name(base: str, *parts: Any) -> str:
    """``<base>-<8 hex>``: a name that changes exactly when ``parts`` (JSON-serialisable) change. Job pod templates
    are immutable, so a Job whose template changes must be a new Job (``kubectl apply`` of a changed template on an
    existing Job fails). CDK tokens are masked, so construction order does not rename anything."""
    text = _TOKEN.sub("<token>", json.dumps(parts, sort_keys=True, default=str))
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    return f"{base[: 63 - 9]}-{digest}"


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
    placement: PodPlacement = BATCH_PLACEMENT,
    fs_group: int | None = None,
    identity: Sequence[str] = (),
) -> k8s.KubeJob:
    """A ConfigMap holding the script (mounted read-only at ``/scripts``) and a Job running ``container``:
    never restarted in place, where ``placement`` says (default :data:`BATCH_PLACEMENT`: the ``inferstack-batch``
    PriorityClass, which never preempts serving; a placement without ``priority_class`` gets the cluster default),
    RuntimeDefault seccomp, removed a day after it finishes. The pod gets a ``work`` emptyDir
    of ``scratch_gib`` GiB (mount it with :func:`work_mount`). ``container`` may mount only ``volumes``, ``work`` and
    ``script``: anything else is refused (:class:`~inferstack.constructs.validation.PropError`).

    Both objects are named ``<name>-<hash>`` of the script and the whole pod template (:func:`content_name`), so
    any change to what the Job runs creates a new Job instead of failing on the immutable template. CDK tokens are
    masked in that hash, so what a token stands for and may change (a container asset's content hash) comes in as
    ``identity``: plain strings hashed with the rest, not rendered. Default none."""
    text = script(script_name)
    volumes = [
        *volumes,
        k8s.Volume(
            name="work", empty_dir=k8s.EmptyDirVolumeSource(size_limit=k8s.Quantity.from_string(f"{scratch_gib}Gi"))
        ),
        k8s.Volume(name="script", config_map=k8s.ConfigMapVolumeSource(name=SCRIPT_CONFIG_MAP)),
    ]
    check_mounted(f"Job {name!r}", [container], volumes)
    spec = k8s.PodSpec(
        service_account_name=service_account,
        # no Kubernetes API token: the Job talks to S3 / the Hub only (Pod Identity projects its own token)
        automount_service_account_token=False,
        restart_policy="Never",
        **placement.pod_spec_kwargs(),
        security_context=k8s.PodSecurityContext(
            fs_group=fs_group, seccomp_profile=k8s.SeccompProfile(type="RuntimeDefault")
        ),
        containers=[container],
        volumes=volumes,
    )
    labels = {"app.kubernetes.io/component": component}
    job = k8s.KubeJob(
        scope,
        "job",
        metadata=k8s.ObjectMeta(name=name, namespace=namespace, labels=labels),
        spec=k8s.JobSpec(
            backoff_limit=backoff_limit,
            ttl_seconds_after_finished=86_400,
            template=k8s.PodTemplateSpec(metadata=k8s.ObjectMeta(labels=labels), spec=spec),
        ),
    )
    placement.patch_affinity(job, "/spec/template/spec")
    rendered = job.to_json()["spec"]
    job_name = content_name(name, text, rendered, *identity)
    config_map = f"{job_name}-script"
    script_volume = next(i for i, v in enumerate(rendered["template"]["spec"]["volumes"]) if v["name"] == "script")
    job.add_json_patch(
        cdk8s.JsonPatch.replace("/metadata/name", job_name),
        cdk8s.JsonPatch.replace(f"/spec/template/spec/volumes/{script_volume}/configMap/name", config_map),
    )
    k8s.KubeConfigMap(
        scope,
        "script",
        metadata=k8s.ObjectMeta(name=config_map, namespace=namespace, labels=labels),
        data={script_name: text},
    )
    return job


def job_name(job: k8s.KubeJob) -> str:
    """The name a :func:`script_job` Job is applied with."""
    return str(job.to_json()["metadata"]["name"])


def script_mount() -> k8s.VolumeMount:
    return k8s.VolumeMount(name="script", mount_path=SCRIPTS_DIR, read_only=True)


def work_mount() -> k8s.VolumeMount:
    """The Job's scratch space (``/work``)."""
    return k8s.VolumeMount(name="work", mount_path=WORK_DIR)
