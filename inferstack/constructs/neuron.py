"""Neuron: a compile Job that compiles a model once and stores the artifacts in S3, and the init container that
gives a server the weights and those pre-compiled artifacts (servers never compile at start)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.constructs.batch import POD_TMP, hardened, script_job, script_mount, work_mount

COMPILED_DIR = "/compiled"
MODEL_DIR = "/models"
MARKER = ".inferstack-compile-complete"


def artifacts_prefix(model_prefix: str, tp: int, max_model_len: int, max_num_seqs: int) -> str:
    """Where the artifacts of one (parallelism, shape) live, under the model's own prefix."""
    return f"{model_prefix}neuron/tp{tp}-len{max_model_len}-seqs{max_num_seqs}/"


def fetch_init_container(*, bucket: str, model_prefix: str, artifacts: str, region: str) -> k8s.Container:
    """Waits for the compile Job's marker, then copies weights and artifacts to the pod's volumes."""
    script = (
        f'until aws s3api head-object --bucket "{bucket}" --key "{artifacts}{MARKER}" >/dev/null 2>&1; do '
        'echo "waiting for the Neuron compile job"; sleep 30; done && '
        f'aws s3 sync "s3://{bucket}/{model_prefix}" {MODEL_DIR} --exclude "neuron/*" --exclude ".inferstack*" '
        f'--only-show-errors && aws s3 sync "s3://{bucket}/{artifacts}" {COMPILED_DIR} --only-show-errors'
    )
    return k8s.Container(
        name="fetch-model",
        image=ENGINE_IMAGES["aws-cli"],
        command=["sh", "-c", script],
        env=[k8s.EnvVar(name="AWS_REGION", value=region), k8s.EnvVar(name="HOME", value=POD_TMP)],
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
    namespace: str
    service_account: str
    """Bound to a role that can read the model prefix and write the artifacts prefix."""
    image: str
    bucket: str
    model_prefix: str
    artifacts_prefix: str
    region: str
    tensor_parallel_size: int
    max_model_len: int
    max_num_seqs: int
    requests: Mapping[str, str]
    limits: Mapping[str, str]
    node_selector: Mapping[str, str]
    tolerations: Sequence[str] = ()
    scratch_gib: int = 200
    env: Mapping[str, str] = field(default_factory=dict)


class NeuronCompileJob(Construct):
    """Compiles on the Neuron pool with the server's parallelism (same devices), once per shape."""

    def __init__(self, scope: Construct, construct_id: str, props: NeuronCompileJobProps) -> None:
        super().__init__(scope, construct_id)
        values = {
            "BUCKET": props.bucket,
            "MODEL_PREFIX": props.model_prefix,
            "ARTIFACTS_PREFIX": props.artifacts_prefix,
            "AWS_REGION": props.region,
            "AWS_DEFAULT_REGION": props.region,
            "WORK_DIR": "/work",
            "HOME": "/work",
            "NEURON_COMPILED_ARTIFACTS": COMPILED_DIR,
            "TENSOR_PARALLEL_SIZE": str(props.tensor_parallel_size),
            "MAX_MODEL_LEN": str(props.max_model_len),
            "MAX_NUM_SEQS": str(props.max_num_seqs),
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
            security_context=hardened(),
            volume_mounts=[
                work_mount(),
                k8s.VolumeMount(name="compiled", mount_path=COMPILED_DIR),
                script_mount(),
            ],
        )
        self.job_name = props.name
        script_job(
            self,
            name=props.name,
            namespace=props.namespace,
            component="neuron-compile",
            script_name="neuron_compile.py",
            service_account=props.service_account,
            container=container,
            volumes=[
                k8s.Volume(name="compiled", empty_dir=k8s.EmptyDirVolumeSource()),
            ],
            scratch_gib=props.scratch_gib,
            backoff_limit=2,
            node_selector=props.node_selector,
            tolerations=props.tolerations,
            fs_group=1000,
        )
