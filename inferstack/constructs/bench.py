"""BenchJob: a suspended CronJob whose Job template benchmarks one OpenAI-compatible endpoint with ``vllm bench
serve`` (the pinned vLLM image) and uploads vLLM's result JSON to the model bucket.

``kubectl create job --from=cronjob/<name>-bench …`` starts a run (``python -m inferstack.cli bench NAME`` prints
it); the CronJob itself never fires (``suspend: true``). The pod, in order:

1. ``tokenizer`` (aws-cli): copies the tokenizer files of the model's bucket prefix (``vllm bench serve``'s random
   dataset tokenizes its prompts locally); skipped for a Hugging Face tokenizer id;
2. ``bench`` (vLLM): ``vllm bench serve`` against the Service (waiting for it to answer), results into
   ``/results``. The flags are those of vLLM 0.31.0's parser (``scripts/upstream/engines/
   vllm-0.31.0-bench-serve-flags.json``; tested): ``--model`` is the served name sent in each request and also what
   is looked up before the ready check, ``--tokenizer`` a local directory (no Hub access with ``HF_HUB_OFFLINE``);
3. ``upload`` (aws-cli): ``/results`` → ``s3://<bucket>/<results prefix><UTC time>/``.

Every value reaches the shell scripts as an environment variable (nothing of the config is interpolated).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.models import TOKENIZER_FILES
from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.constructs import validation as check
from inferstack.constructs.batch import BATCH_PLACEMENT, hardened
from inferstack.constructs.pod import PodPlacement
from inferstack.constructs.pod.mounts import Mount, empty_dir, pod_volumes, volume_mounts

BENCH_COMPONENT = "bench"
#: Label naming the workload a bench pod targets (its NetworkPolicy lets exactly those pods in).
TARGET_LABEL = "inferstack.io/bench-target"
#: A schedule that never comes (February 31st): the CronJob is a template; it is suspended as well.
NEVER = "0 0 31 2 *"
RESULTS, TOKENIZER, HOME = "/results", "/tokenizer", "/home/bench"
#: ``vllm bench serve`` retries its first request every 5 s for this long, so a run started while the server is
#: still loading waits for it (vLLM 0.31.0 benchmarks/serve.py; 0 — its default — would fail at once).
READY_TIMEOUT_SECONDS = 1800
TOKENIZER_SCRIPT = (
    'aws s3 sync "s3://$BUCKET/$MODEL_PREFIX" ' + TOKENIZER + ' --exclude "*" '
    + " ".join(f'--include "{pattern}"' for pattern in TOKENIZER_FILES)
    + ' --exclude "*/*" --only-show-errors'
)  # fmt: skip
UPLOAD_SCRIPT = (
    'aws s3 cp --recursive ' + RESULTS + ' "s3://$BUCKET/${RESULTS_PREFIX}$(date -u +%Y%m%dT%H%M%SZ)/" '
    "--only-show-errors"
)  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class BenchLoad:
    """The load, in ``vllm bench serve``'s terms."""

    concurrency: int
    """``--max-concurrency``: most requests in flight at once."""
    input_tokens: int
    """``--random-input-len``: prompt length of each random request, tokens."""
    output_tokens: int
    """``--random-output-len``: tokens generated per request (``--ignore-eos``: always that many)."""
    num_prompts: int
    """``--num-prompts``: requests sent in one run."""
    request_rate: float | None = None
    """Requests/s; None: ``inf``."""


@dataclass(frozen=True, kw_only=True)
class BenchJobProps:
    name: str
    """Of the workload benchmarked: the CronJob is ``<name>-bench``."""
    namespace: str
    """Namespace of the CronJob (the workload's). An RFC 1123 label."""
    base_url: str
    """``http://<service>.<namespace>.svc.cluster.local:<port>``."""
    endpoint: str
    """The completions path, e.g. ``/v1/completions``."""
    model: str
    """The served model name sent in each request."""
    load: BenchLoad
    """The load ``vllm bench serve`` generates."""
    service_account: str
    """ServiceAccount of the bench pods (its token is not mounted): it reads ``model_prefix`` and writes
    ``results_prefix`` in ``bucket``."""
    bucket: str
    """The model bucket: tokenizer files are copied from it, results uploaded to it."""
    region: str
    """The bucket's region (the aws CLI's AWS_REGION: no instance-metadata fallback in a pod)."""
    model_prefix: str | None
    """The model's bucket prefix, whose tokenizer files are copied; None: ``tokenizer`` is a Hugging Face id."""
    results_prefix: str
    """Key prefix of the results, joined as is: each run uploads ``/results`` under ``<results_prefix><UTC time>/``
    in ``bucket``."""
    tokenizer: str | None = None
    """A Hugging Face id when ``model_prefix`` is None."""
    tokenizer_mode: str | None = None
    """``mistral`` for Mistral-format checkpoints. Default: vLLM's."""
    hf_token_secret: tuple[str, str] | None = None
    """Secret (name, key) read into the bench container's ``HF_TOKEN`` (a gated Hugging Face tokenizer). Default
    none."""
    placement: PodPlacement = field(default_factory=lambda: BATCH_PLACEMENT)
    """Where the bench pods run and their PriorityClass. Default :data:`~inferstack.constructs.batch.BATCH_PLACEMENT`:
    any node, ``inferstack-batch`` (never preempts serving)."""
    timeout_seconds: int = 3600
    """The Job's ``activeDeadlineSeconds``: a run still going after this long is stopped, seconds. Default 3600."""
    image: str = ENGINE_IMAGES["vllm-gpu"]
    """The image that runs ``vllm bench serve``, pinned by tag or digest. Default the pinned ``vllm-gpu`` engine
    image."""


def bench_args(props: BenchJobProps) -> list[str]:
    """The ``vllm bench serve`` arguments."""
    load = props.load
    tokenizer = TOKENIZER if props.model_prefix is not None else props.tokenizer
    args = [
        "--backend", "openai",
        "--base-url", props.base_url,
        "--endpoint", props.endpoint,
        "--model", props.model,
        "--tokenizer", str(tokenizer),
        "--dataset-name", "random",
        "--random-input-len", str(load.input_tokens),
        "--random-output-len", str(load.output_tokens),
        "--num-prompts", str(load.num_prompts),
        "--max-concurrency", str(load.concurrency),
        "--request-rate", "inf" if load.request_rate is None else f"{load.request_rate:g}",
        "--ignore-eos",
        "--percentile-metrics", "ttft,tpot,itl,e2el",
        "--metric-percentiles", "50,90,99",
        "--save-result",
        "--result-dir", RESULTS,
        "--result-filename", "result.json",
        "--ready-check-timeout-sec", str(READY_TIMEOUT_SECONDS),
    ]  # fmt: skip
    if props.tokenizer_mode:
        args += ["--tokenizer-mode", props.tokenizer_mode]
    return args


class BenchJob(Construct):
    """The suspended CronJob ``<name>-bench`` (see the module docstring)."""

    def __init__(self, scope: Construct, construct_id: str, props: BenchJobProps) -> None:
        super().__init__(scope, construct_id)
        owner = f"BenchJob {props.namespace}/{props.name}"
        check.dns_label(owner, "namespace", props.namespace)
        if len(props.name) > 52 - len("-bench"):  # a CronJob name leaves room for the Jobs' suffix (52 characters)
            raise check.PropError(f"{owner}: name {props.name!r} — at most 46 characters for a CronJob <name>-bench")
        check.pinned_image(owner, "image", props.image)
        if (props.model_prefix is None) == (props.tokenizer is None):
            raise check.PropError(f"{owner}: set model_prefix (tokenizer files in the bucket) or tokenizer (an HF id)")
        if not props.endpoint.startswith("/"):
            raise check.PropError(f"{owner}: endpoint {props.endpoint!r} — a path such as /v1/completions")
        labels = {
            "app.kubernetes.io/component": BENCH_COMPONENT,
            TARGET_LABEL: props.name,
            "app.kubernetes.io/part-of": "inferstack",
        }
        self.args = bench_args(props)
        bucket_env = [
            k8s.EnvVar(name="BUCKET", value=props.bucket),
            k8s.EnvVar(name="AWS_REGION", value=props.region),
            k8s.EnvVar(name="AWS_DEFAULT_REGION", value=props.region),
        ]
        home = [k8s.EnvVar(name="HOME", value=HOME)]
        init: list[k8s.Container] = []
        results_dir, home_dir = empty_dir("results"), empty_dir("home")
        home_mount = Mount(path=HOME, volume=home_dir)
        mounts = [Mount(path=RESULTS, volume=results_dir), home_mount]
        every: list[list[Mount]] = [mounts]
        if props.model_prefix is not None:
            prefix = k8s.EnvVar(name="MODEL_PREFIX", value=props.model_prefix)
            tokenizer_dir = empty_dir("tokenizer")
            fetch = [Mount(path=TOKENIZER, volume=tokenizer_dir), home_mount]
            init.append(_aws_cli("tokenizer", TOKENIZER_SCRIPT, [*bucket_env, *home, prefix], fetch))
            mounts.append(Mount(path=TOKENIZER, volume=tokenizer_dir, read_only=True))
            every.append(fetch)
        bench_env = [*home, k8s.EnvVar(name="HF_HUB_OFFLINE", value="1" if props.model_prefix is not None else "0")]
        if props.hf_token_secret is not None:
            secret, key = props.hf_token_secret
            bench_env.append(
                k8s.EnvVar(
                    name="HF_TOKEN",
                    value_from=k8s.EnvVarSource(secret_key_ref=k8s.SecretKeySelector(name=secret, key=key)),
                )
            )
        init.append(
            k8s.Container(
                name="bench",
                image=props.image,
                command=["vllm", "bench", "serve"],
                args=self.args,
                env=bench_env,
                security_context=hardened(1000),
                resources=_resources("2", "8Gi"),
                volume_mounts=volume_mounts(mounts),
            )
        )
        results = k8s.EnvVar(name="RESULTS_PREFIX", value=props.results_prefix)
        uploads = [Mount(path=RESULTS, volume=results_dir, read_only=True), home_mount]
        upload = _aws_cli("upload", UPLOAD_SCRIPT, [*bucket_env, *home, results], uploads)
        volumes = pod_volumes(f"BenchJob {props.name!r}", *every, uploads)
        pod = k8s.PodSpec(
            service_account_name=props.service_account,
            automount_service_account_token=False,  # no Kubernetes API calls (Pod Identity projects its own token)
            restart_policy="Never",
            **props.placement.pod_spec_kwargs(),
            security_context=k8s.PodSecurityContext(
                run_as_non_root=True, seccomp_profile=k8s.SeccompProfile(type="RuntimeDefault"), fs_group=1000
            ),
            init_containers=init,
            containers=[upload],
            volumes=volumes,
        )
        self.cron_job = k8s.KubeCronJob(
            self,
            "cron-job",
            metadata=k8s.ObjectMeta(name=f"{props.name}-bench", namespace=props.namespace, labels=labels),
            spec=k8s.CronJobSpec(
                schedule=NEVER,
                suspend=True,
                concurrency_policy="Forbid",
                successful_jobs_history_limit=3,
                failed_jobs_history_limit=3,
                job_template=k8s.JobTemplateSpec(
                    metadata=k8s.ObjectMeta(labels=labels),
                    spec=k8s.JobSpec(
                        backoff_limit=0,
                        active_deadline_seconds=props.timeout_seconds,
                        ttl_seconds_after_finished=7 * 24 * 3600,
                        template=k8s.PodTemplateSpec(metadata=k8s.ObjectMeta(labels=labels), spec=pod),
                    ),
                ),
            ),
        )
        props.placement.patch_affinity(self.cron_job, "/spec/jobTemplate/spec/template/spec")


def _aws_cli(name: str, script: str, env: list[k8s.EnvVar], mounts: list[Mount]) -> k8s.Container:
    """A small aws-cli container running ``script`` (values in ``env``) with ``mounts`` (its data and a writable
    HOME)."""
    return k8s.Container(
        name=name,
        image=ENGINE_IMAGES["aws-cli"],
        command=["sh", "-c", script],
        env=env,
        security_context=hardened(1000, read_only_root_filesystem=True),
        resources=_resources("250m", "512Mi"),
        volume_mounts=volume_mounts(mounts),
    )


def _resources(cpu: str, memory: str) -> k8s.ResourceRequirements:
    return k8s.ResourceRequirements(
        requests={"cpu": k8s.Quantity.from_string(cpu), "memory": k8s.Quantity.from_string(memory)},
        limits={"cpu": k8s.Quantity.from_string(cpu), "memory": k8s.Quantity.from_string(memory)},
    )


def run_command(name: str, namespace: str) -> str:
    """The command that starts one run of ``<name>-bench``."""
    return f"kubectl -n {namespace} create job {name}-bench-$(date +%s) --from=cronjob/{name}-bench"
