"""Neuron (Inferentia2 / Trainium1, vllm-neuron 0.5 on NxD Inference): a compile Job that compiles a model once
with the server's exact engine settings and stores the artifacts in S3, and the init container that gives a server
the weights and those artifacts (servers never compile at start).

The plugin saves to and loads from ``NEURON_COMPILED_ARTIFACTS``: when the directory holds a compiled model it is
loaded as is — differing engine settings are ignored — otherwise the plugin compiles into it. So the Job runs
``vllm.LLM(...)`` with :meth:`EngineArgs.kwargs` of the very engine the server renders, with the weights at the same
path (``/models``). KV cache on Neuron: with prefix caching the block size must be set (vllm-neuron
``platform.py`` asserts it) and ``--num-gpu-blocks-override`` must hold ``ceil(max_model_len / block) ×
max_num_seqs`` blocks; without it the plugin uses one block of ``max_model_len`` per sequence
(Neuron SDK vLLM user guide, known issues) — see :func:`neuron_kv_cache`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.constructs.batch import (
    POD_TMP,
    WORK_DIR,
    content_name,
    hardened,
    job_name,
    script_job,
    script_mount,
    work_mount,
)
from inferstack.constructs.pod import SERVING_UID, PodPlacement
from inferstack.constructs.vllm import CACHE_ENV, HOME, SERVING_USER, EngineArgs

COMPILED_DIR = "/compiled"
MODEL_DIR = "/models"
MARKER = ".inferstack-compile-complete"
#: KV block size with prefix caching on Neuron (the SDK guide recommends 16 or 32).
PREFIX_BLOCK_SIZE = 32


@dataclass(frozen=True)
class NeuronKvCache:
    """``--block-size`` / ``--num-gpu-blocks-override`` for a Neuron engine."""

    block_size: int | None
    """None: the plugin uses ``max_model_len`` (one block per sequence, prefix caching off)."""
    num_blocks: int
    """``--num-gpu-blocks-override``: KV blocks to allocate (with prefix caching ``ceil(max_model_len / block_size) ×
    max_num_seqs``, otherwise ``max_num_seqs``)."""


def neuron_kv_cache(max_model_len: int, max_num_seqs: int, prefix_caching: bool) -> NeuronKvCache:
    """The KV cache vllm-neuron needs: with prefix caching, blocks of :data:`PREFIX_BLOCK_SIZE` tokens, enough for
    ``max_num_seqs`` full sequences; without, one ``max_model_len`` block per sequence."""
    if prefix_caching:
        return NeuronKvCache(PREFIX_BLOCK_SIZE, math.ceil(max_model_len / PREFIX_BLOCK_SIZE) * max_num_seqs)
    return NeuronKvCache(None, max_num_seqs)


def artifacts_prefix(model_prefix: str, engine: EngineArgs, image: str) -> str:
    """Where the artifacts of one (image, engine settings) live, under the model's own prefix: readable
    (``tp8-len4096-seqs8``) and unique (a hash of everything the compile depends on)."""
    base = f"tp{engine.tensor_parallel_size}-len{engine.max_model_len}-seqs{engine.max_num_seqs}"
    return f"{model_prefix}neuron/{content_name(base, image, engine.kwargs())}/"


#: The fetch init container's script: every value from the environment, double-quoted.
FETCH_SCRIPT = (
    'until aws s3api head-object --bucket "$BUCKET" --key "$MARKER_KEY" >/dev/null 2>&1; do '
    'echo "waiting for the Neuron compile job"; sleep 30; done && '
    f'aws s3 sync "s3://$BUCKET/$MODEL_PREFIX" {MODEL_DIR} --exclude "neuron/*" --exclude ".inferstack*" '
    f'--only-show-errors && aws s3 sync "s3://$BUCKET/$ARTIFACTS" {COMPILED_DIR} --only-show-errors'
)


def fetch_init_container(*, bucket: str, model_prefix: str, artifacts: str, region: str) -> k8s.Container:
    """Waits for the compile Job's marker, then copies weights and artifacts to the pod's volumes. The values come
    in as environment variables the (constant) script quotes: nothing of the config is interpolated into the
    shell."""
    return k8s.Container(
        name="fetch-model",
        image=ENGINE_IMAGES["aws-cli"],
        command=["sh", "-c", FETCH_SCRIPT],
        env=[
            k8s.EnvVar(name="AWS_REGION", value=region),
            k8s.EnvVar(name="HOME", value=POD_TMP),
            k8s.EnvVar(name="BUCKET", value=bucket),
            k8s.EnvVar(name="MODEL_PREFIX", value=model_prefix),
            k8s.EnvVar(name="ARTIFACTS", value=artifacts),
            k8s.EnvVar(name="MARKER_KEY", value=f"{artifacts}{MARKER}"),
        ],
        security_context=hardened(),
        resources=k8s.ResourceRequirements(
            requests={"cpu": k8s.Quantity.from_string("1"), "memory": k8s.Quantity.from_string("1Gi")},
            limits={"memory": k8s.Quantity.from_string("2Gi")},
        ),
        volume_mounts=[
            k8s.VolumeMount(name="model", mount_path=MODEL_DIR),
            k8s.VolumeMount(name="compiled", mount_path=COMPILED_DIR),
            k8s.VolumeMount(name="tmp", mount_path=POD_TMP),
        ],
    )


@dataclass(frozen=True, kw_only=True)
class NeuronCompileJobProps:
    name: str
    """Base name; the Job is ``<name>-<hash of its script and pod template>``."""
    namespace: str
    """Namespace of the Job and its script ConfigMap."""
    service_account: str
    """Bound to a role that can read the model prefix and write the artifacts prefix."""
    image: str
    """The server's engine image (the compile must be done by the same plugin version)."""
    bucket: str
    """The model bucket: the weights are read from ``model_prefix``, the artifacts written to ``artifacts_prefix``."""
    model_prefix: str
    """Key prefix of the model's weights, downloaded to ``/models`` (its ``neuron/`` and ``.inferstack*`` keys
    skipped)."""
    artifacts_prefix: str
    """Key prefix the compiled artifacts and then the completion marker are written to (see
    :func:`artifacts_prefix`); the Job exits at once when the marker is there."""
    region: str
    """The bucket's region (``AWS_REGION`` and ``AWS_DEFAULT_REGION`` of the Job)."""
    engine: EngineArgs
    """The server's engine settings: the Job compiles exactly these (:meth:`EngineArgs.kwargs`)."""
    requests: Mapping[str, str]
    """Compile-container requests (the server's Neuron devices, ``aws.amazon.com/neuron``…), Kubernetes quantities."""
    limits: Mapping[str, str]
    """Compile-container limits, Kubernetes quantities (extended resources equal to ``requests``)."""
    placement: PodPlacement
    """Where the compile pod runs: the Neuron pool's node selector and tolerations, the scheduler (the Neuron
    scheduler extension for contiguous devices) and the PriorityClass (it must exist; none: the cluster default)."""
    model_gib: int = 40
    """Volume for the downloaded weights (at the server's path, ``/models``), GiB. Default 40."""
    scratch_gib: int = 200
    """Compiler scratch space and caches, GiB. Default 200."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Extra environment of the compile container; it overrides the Job's own variables. Default none."""


class NeuronCompileJob(Construct):
    """Compiles on the Neuron pool with the server's engine settings (same devices), once per settings hash."""

    def __init__(self, scope: Construct, construct_id: str, props: NeuronCompileJobProps) -> None:
        super().__init__(scope, construct_id)
        values = {
            # The DLC is built for root: the serving user gets HOME, USER/LOGNAME (getpass.getuser() in torch) and
            # every cache on the writable home volume, like the server.
            "HOME": HOME,
            "USER": SERVING_USER,
            "LOGNAME": SERVING_USER,
            **CACHE_ENV,
            "NEURON_COMPILED_ARTIFACTS": COMPILED_DIR,
            "BUCKET": props.bucket,
            "MODEL_PREFIX": props.model_prefix,
            "ARTIFACTS_PREFIX": props.artifacts_prefix,
            "AWS_REGION": props.region,
            "AWS_DEFAULT_REGION": props.region,
            "MODEL_DIR": MODEL_DIR,
            # NxD Inference compiles in BASE_COMPILE_WORK_DIR (default /tmp/nxd_model, application_base.py) and
            # the Neuron compiler caches in NEURON_COMPILE_CACHE_URL: both on the sized scratch volume.
            "BASE_COMPILE_WORK_DIR": f"{WORK_DIR}/nxd_model",
            "NEURON_COMPILE_CACHE_URL": f"{WORK_DIR}/neuron-compile-cache",
            "ENGINE_KWARGS": json.dumps(props.engine.kwargs(), sort_keys=True, separators=(",", ":")),
            "VLLM_NO_USAGE_STATS": "1",
            **props.env,
        }
        container = k8s.Container(
            name="compile",
            image=props.image,
            command=["python", "/scripts/neuron_compile.py"],
            env=[k8s.EnvVar(name=k, value=v) for k, v in sorted(values.items())],
            resources=k8s.ResourceRequirements(
                requests={k: k8s.Quantity.from_string(v) for k, v in props.requests.items()},
                limits={k: k8s.Quantity.from_string(v) for k, v in props.limits.items()},
            ),
            security_context=hardened(SERVING_UID),
            volume_mounts=[
                work_mount(),
                k8s.VolumeMount(name="home", mount_path=HOME),
                k8s.VolumeMount(name="model", mount_path=MODEL_DIR),
                k8s.VolumeMount(name="compiled", mount_path=COMPILED_DIR),
                k8s.VolumeMount(name="tmp", mount_path=POD_TMP),
                script_mount(),
            ],
        )
        self.job = script_job(
            self,
            name=props.name,
            namespace=props.namespace,
            component="neuron-compile",
            script_name="neuron_compile.py",
            service_account=props.service_account,
            container=container,
            volumes=[
                k8s.Volume(name="home", empty_dir=k8s.EmptyDirVolumeSource()),
                k8s.Volume(
                    name="model",
                    empty_dir=k8s.EmptyDirVolumeSource(size_limit=k8s.Quantity.from_string(f"{props.model_gib}Gi")),
                ),
                k8s.Volume(name="compiled", empty_dir=k8s.EmptyDirVolumeSource()),
                k8s.Volume(name="tmp", empty_dir=k8s.EmptyDirVolumeSource()),
            ],
            scratch_gib=props.scratch_gib,
            backoff_limit=2,
            placement=props.placement,
            fs_group=SERVING_UID,
        )
        self.job_name = job_name(self.job)
