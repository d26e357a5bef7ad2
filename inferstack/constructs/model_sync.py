"""ModelSyncJob: copies a Hugging Face model revision into the model bucket once (idempotent)."""

from __future__ import annotations

from dataclasses import dataclass, field

from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.versions import ENGINE_IMAGES, IMAGES, MODEL_SYNC_PACKAGES
from inferstack.constructs.batch import POD_TMP, hardened, job_name, script_job, script_mount, work_mount
from inferstack.constructs.pod import PodPlacement


@dataclass(frozen=True, kw_only=True)
class ModelSyncJobProps:
    """Copy ``model_id@revision`` to ``s3://bucket/prefix``."""

    name: str
    """Base name; the Job is ``<name>-<hash of its script and pod template>``, so a new revision, file set or
    image is a new Job."""
    namespace: str
    """Namespace of the Job and its script ConfigMap."""
    service_account: str
    """Bound to a role that can write the prefix (and nothing else)."""
    bucket: str
    """The model bucket the files are copied into."""
    prefix: str
    """Key prefix the files go under (``s3://<bucket>/<prefix><file>``, joined as is); the completion marker is
    written there last."""
    region: str
    """The bucket's region (``AWS_REGION`` and ``AWS_DEFAULT_REGION`` of the Job)."""
    model_id: str
    """The Hugging Face repository to copy, e.g. ``Qwen/Qwen3-8B``."""
    revision: str = "main"
    """The revision to copy: a branch, tag or commit (recorded in the marker). Default ``main``."""
    hf_token_secret: tuple[str, str] | None = None
    """(Secret name, key) of a Hugging Face token; required for gated models."""
    placement: PodPlacement = field(default_factory=PodPlacement)
    """Where the Job's pod runs and its PriorityClass (it must exist on the cluster; inferstack platforms pass
    ``inferstack-batch``). Default: any node, the cluster's default priority."""
    scratch_gib: int = 60
    """Local space for the largest file of the model, GiB. Default 60."""
    include: tuple[str, ...] = ()
    """Glob patterns (repository-relative) of the files to copy. Default: every file of the revision."""
    exclude: tuple[str, ...] = ()
    """Glob patterns of files never to copy (applied after ``include``). Default none."""


#: Object the sync Job writes last under the model prefix; servers and the Neuron compile Job wait for it.
SYNC_MARKER = ".inferstack-sync-complete"


def wait_for_sync_container(
    *,
    bucket: str,
    prefix: str,
    region: str,
    mounted_path: str | None = None,
    mounts: list[k8s.VolumeMount] | None = None,
    name: str = "wait-for-model",
) -> k8s.Container:
    """An init container (``name``, default ``wait-for-model``) that holds the server until the model-sync Job has
    finished: it checks the marker in S3 (pod credentials) or, for mounted sources, in the mounted volume."""
    if mounted_path is not None:
        check, values = '[ -f "$MARKER_PATH" ]', {"MARKER_PATH": f"{mounted_path}/{SYNC_MARKER}"}
    else:
        check = 'aws s3api head-object --bucket "$BUCKET" --key "$MARKER_KEY" >/dev/null 2>&1'
        values = {"BUCKET": bucket, "MARKER_KEY": f"{prefix}{SYNC_MARKER}"}
    # The script is constant; the paths and names come in as environment variables it quotes (never interpolated).
    return k8s.Container(
        name=name,
        image=ENGINE_IMAGES["aws-cli"],
        command=["sh", "-c", f'until {check}; do echo "waiting for the model sync job"; sleep 20; done'],
        env=[
            k8s.EnvVar(name="AWS_REGION", value=region),
            k8s.EnvVar(name="HOME", value=POD_TMP),
            *(k8s.EnvVar(name=k, value=v) for k, v in values.items()),
        ],
        security_context=hardened(),
        resources=k8s.ResourceRequirements(
            requests={"cpu": k8s.Quantity.from_string("100m"), "memory": k8s.Quantity.from_string("128Mi")},
            limits={"memory": k8s.Quantity.from_string("256Mi")},
        ),
        volume_mounts=[*(mounts or []), k8s.VolumeMount(name="tmp", mount_path=POD_TMP)],
    )


class ModelSyncJob(Construct):
    """A ConfigMap with the sync script and a Job running it: non-root, read-only root file system, no
    privilege escalation, batch priority (never preempts serving), retried 3 times, removed a day after it ends."""

    def __init__(self, scope: Construct, construct_id: str, props: ModelSyncJobProps) -> None:
        super().__init__(scope, construct_id)
        env = [
            k8s.EnvVar(name="BUCKET", value=props.bucket),
            k8s.EnvVar(name="PREFIX", value=props.prefix),
            k8s.EnvVar(name="MODEL_ID", value=props.model_id),
            k8s.EnvVar(name="REVISION", value=props.revision),
            k8s.EnvVar(name="AWS_REGION", value=props.region),
            k8s.EnvVar(name="AWS_DEFAULT_REGION", value=props.region),
            k8s.EnvVar(name="HOME", value="/work"),
            k8s.EnvVar(name="WORK_DIR", value="/work"),
            k8s.EnvVar(name="PYTHONPATH", value="/work/site"),
            k8s.EnvVar(name="HF_HUB_ENABLE_HF_TRANSFER", value="1"),
            k8s.EnvVar(name="INCLUDE", value=",".join(props.include)),
            k8s.EnvVar(name="EXCLUDE", value=",".join(props.exclude)),
        ]
        if props.hf_token_secret:
            secret, key = props.hf_token_secret
            env.append(
                k8s.EnvVar(
                    name="HF_TOKEN",
                    value_from=k8s.EnvVarSource(secret_key_ref=k8s.SecretKeySelector(name=secret, key=key)),
                )
            )
        install = " ".join(MODEL_SYNC_PACKAGES)
        read_only_root = hardened(65534, read_only_root_filesystem=True)
        container = k8s.Container(
            name="sync",
            image=IMAGES["model-sync"],
            command=[
                "sh",
                "-c",
                f"pip install --quiet --no-cache-dir --target /work/site {install} && python /scripts/model_sync.py",
            ],
            env=env,
            resources=k8s.ResourceRequirements(
                requests={"cpu": k8s.Quantity.from_string("1"), "memory": k8s.Quantity.from_string("2Gi")},
                limits={"cpu": k8s.Quantity.from_string("2"), "memory": k8s.Quantity.from_string("4Gi")},
            ),
            security_context=read_only_root,
            volume_mounts=[
                work_mount(),
                k8s.VolumeMount(name="tmp", mount_path=POD_TMP),
                script_mount(),
            ],
        )
        self.job = script_job(
            self,
            name=props.name,
            namespace=props.namespace,
            component="model-sync",
            script_name="model_sync.py",
            service_account=props.service_account,
            container=container,
            volumes=[
                k8s.Volume(name="tmp", empty_dir=k8s.EmptyDirVolumeSource()),
            ],
            scratch_gib=props.scratch_gib,
            backoff_limit=3,
            placement=props.placement,
        )
        self.job_name = job_name(self.job)
