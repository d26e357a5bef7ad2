"""Model sources: one notion every workload uses. Each source yields what a serving pod needs — volumes, mounts,
environment, engine arguments and the path or URI the engine loads."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum

from cdk8s_plus_36 import k8s

from inferstack.constructs.pod.mounts import Mount, empty_dir
from inferstack.constructs.validation import PropError


class SourceKind(StrEnum):
    S3 = "s3"
    S3_MOUNT = "s3_mount"
    FSX = "fsx"
    IMAGE = "image"
    HF = "hf"
    EFS = "efs"


MODEL_MOUNT = "/models"
HF_CACHE = "/cache/huggingface"


@dataclass(frozen=True, kw_only=True)
class ModelSourceProps:
    """Everything a source may need; unused fields are ignored. AWS values come in as strings (or tokens)."""

    kind: SourceKind
    """Where the model comes from: ``s3`` (streamed from S3 by the Run:ai streamer), ``s3_mount``, ``fsx`` or
    ``efs`` (a read-only PVC), ``image`` (inside the engine image) or ``hf`` (downloaded from the Hub at start)."""
    model_id: str
    """The Hugging Face model id: what ``hf`` downloads; other kinds only name the source in errors with it."""
    revision: str = "main"
    """``hf``: the Hub revision (``--revision``): a branch, tag or commit. Default ``main``."""
    bucket: str | None = None
    """``s3`` (required): the bucket holding the checkpoint."""
    prefix: str | None = None
    """``s3`` (required): the checkpoint's key prefix; the engine loads ``s3://<bucket>/<prefix>``."""
    region: str | None = None
    """``s3`` (required): the bucket's region (``AWS_REGION`` and ``AWS_DEFAULT_REGION`` of the pod)."""
    claim_name: str | None = None
    """PVC of an ``s3_mount`` / ``fsx`` / ``efs`` volume (an ``efs`` claim's volume is the checkpoint's directory
    itself, mounted at ``/models``)."""
    fsx_path: str | None = None
    """Path of the model inside the FSx file system (``fsx``)."""
    image_path: str | None = None
    """``image`` (required): path of the model inside the engine image."""
    streamer_concurrency: int = 16
    """``s3``: the Run:ai streamer's ``concurrency`` (parallel S3 reads). Default 16."""
    streamer_distributed: bool = False
    """``s3``: the Run:ai streamer's distributed loading (``{"distributed": true}``, vLLM ≥ 0.11.1 on CUDA, PR
    #27230): the ranks share the reading, each streaming its part, instead of every rank reading the whole
    checkpoint (TP 4 read the S3 bytes four times). Set it when one replica runs more than one rank. Default
    False."""
    hf_token_secret: tuple[str, str] | None = None
    """``hf``: the Secret (name, key) read into ``HF_TOKEN`` (gated models). Default none."""
    hf_cache_gib: int = 100
    """``hf``: size limit of the emptyDir the model downloads into (``HF_HOME``), GiB. Default 100."""
    hf_cache_claim: str | None = None
    """``hf``: a PersistentVolumeClaim the model downloads into (``HF_HOME``) instead of the emptyDir, so a new pod
    finds the files an earlier one fetched. Default none: the emptyDir of ``hf_cache_gib``."""
    suffix: str = ""
    """Appended to the volume names and mount paths, so several models can load in one pod (``-2``…). Default
    none."""


@dataclass
class ModelLoading:
    """What a pod needs to load the model: add these to its spec and pass ``model`` to the engine."""

    model: str
    """``--model`` / the positional model argument: an ``s3://`` URI, a local path or a Hugging Face id."""
    args: list[str] = field(default_factory=list)
    """Engine arguments the source needs after the model (``--load-format runai_streamer …``, ``--revision``).
    Default none."""
    env: list[k8s.EnvVar] = field(default_factory=list)
    """Engine-container environment (``AWS_REGION``, ``HF_HOME``, ``HF_TOKEN``…). Default none."""
    mounts: list[Mount] = field(default_factory=list)
    """Engine-container mounts, each carrying its volume (the model's read-only PVC or the Hub cache emptyDir).
    Default none."""
    needs_aws_credentials: bool = False
    """The pod reads S3 itself (Run:ai streamer): its service account needs the reader role."""

    @property
    def volumes(self) -> list[k8s.Volume]:
        """The pod volumes ``mounts`` carry."""
        return [m.volume for m in self.mounts]


def _token_env(secret: tuple[str, str] | None) -> list[k8s.EnvVar]:
    if secret is None:
        return []
    name, key = secret
    return [
        k8s.EnvVar(
            name="HF_TOKEN", value_from=k8s.EnvVarSource(secret_key_ref=k8s.SecretKeySelector(name=name, key=key))
        )
    ]


#: What each source kind needs of :class:`ModelSourceProps`.
REQUIRED: dict[SourceKind, tuple[str, ...]] = {
    SourceKind.S3: ("bucket", "prefix", "region"),
    SourceKind.S3_MOUNT: ("claim_name",),
    SourceKind.FSX: ("claim_name", "fsx_path"),
    SourceKind.IMAGE: ("image_path",),
    SourceKind.HF: (),
    SourceKind.EFS: ("claim_name",),
}


def model_loading(props: ModelSourceProps) -> ModelLoading:
    """The pod-side wiring of one model source.

    :raises PropError: when the source kind's required props are missing (an ``s3`` source without bucket,
        prefix and region would render ``s3://None/…``)."""
    missing = [name for name in REQUIRED[props.kind] if not getattr(props, name)]
    if missing:
        needed = ", ".join(REQUIRED[props.kind])
        raise PropError(
            f"ModelSourceProps {props.model_id!r}: kind {props.kind.value!r} needs {needed} — "
            f"missing {', '.join(missing)}"
        )
    if props.kind is SourceKind.S3:
        return ModelLoading(
            model=f"s3://{props.bucket}/{props.prefix}",
            args=[
                "--load-format",
                "runai_streamer",
                "--model-loader-extra-config",
                json.dumps(
                    {
                        "concurrency": props.streamer_concurrency,
                        **({"distributed": True} if props.streamer_distributed else {}),
                    },
                    separators=(",", ":"),
                ),
            ],
            env=[
                k8s.EnvVar(name="AWS_REGION", value=props.region),
                k8s.EnvVar(name="AWS_DEFAULT_REGION", value=props.region),
            ],
            needs_aws_credentials=True,
        )
    suffix = props.suffix
    if props.kind in (SourceKind.S3_MOUNT, SourceKind.FSX, SourceKind.EFS):
        root = ("/fsx" if props.kind is SourceKind.FSX else MODEL_MOUNT) + suffix
        model = f"{root}{props.fsx_path}" if props.kind is SourceKind.FSX else root
        claim = k8s.Volume(
            name=f"model{suffix}",
            persistent_volume_claim=k8s.PersistentVolumeClaimVolumeSource(
                claim_name=props.claim_name or "", read_only=True
            ),
        )
        return ModelLoading(model=model, mounts=[Mount(path=root, volume=claim, read_only=True)])
    if props.kind is SourceKind.IMAGE:
        return ModelLoading(model=props.image_path or "")
    if props.hf_cache_claim:  # HF: download at start into a persistent cache
        cache = k8s.Volume(
            name=f"hf-cache{suffix}",
            persistent_volume_claim=k8s.PersistentVolumeClaimVolumeSource(claim_name=props.hf_cache_claim),
        )
    else:  # HF: download at start into an emptyDir cache
        cache = empty_dir(f"hf-cache{suffix}", size_gib=props.hf_cache_gib)
    return ModelLoading(
        model=props.model_id,
        args=["--revision", props.revision],
        env=[k8s.EnvVar(name="HF_HOME", value=HF_CACHE + suffix), *_token_env(props.hf_token_secret)],
        mounts=[Mount(path=HF_CACHE + suffix, volume=cache)],
    )
