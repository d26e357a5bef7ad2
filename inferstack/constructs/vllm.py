"""VllmServer: a vLLM OpenAI-compatible server — the engine's part (image, ``vllm serve`` command line, caches,
drain timeout, queue metric) on the shared serving pod (:mod:`inferstack.constructs.pod`: Deployment, Service,
PodDisruptionBudget, PodMonitor and optionally a KEDA ScaledObject or HPA on queue depth).

Resources are rendered with the L1 API (cdk8s-plus can express neither ``nvidia.com/gpu`` nor
``aws.amazon.com/neuron`` nor ``vpc.amazonaws.com/efa``, and adds CPU/memory limits and a short TCP startup probe
that kill model loads). Every value comes in through typed props; nothing here knows about CloudFormation.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.engine_flags import supports_shutdown_timeout, vllm_flags
from inferstack.catalog.kubernetes import SERVING_TERMINATION_GRACE_SECONDS
from inferstack.constructs import validation as check
from inferstack.constructs.model_source import ModelLoading
from inferstack.constructs.pod import (
    PRE_STOP_SECONDS,
    Autoscaling,
    PodPlacement,
    QueueMetric,
    ServingPodProps,
    ServingWorkload,
)
from inferstack.constructs.pod.group import ServingGroup, ServingGroupProps
from inferstack.constructs.pod.mounts import Mount

PORT = 8000
SERVING_PRIORITY_CLASS = "inferstack-serving"
#: Left between the engine's drain deadline and SIGKILL (process exit, log flush), seconds.
EXIT_MARGIN_SECONDS = 10
#: The serving user. The vLLM image has no USER (built to run as root) and no passwd entry for other UIDs, so the
#: shared pod gives the process a writable HOME and USER/LOGNAME (``getpass.getuser()`` reads those before the
#: passwd database, which torch's compile caches and Triton call).
SERVING_USER = "vllm"
#: vLLM's queue depth, as Prometheus and the custom-metrics API name it.
VLLM_QUEUE = QueueMetric(prometheus="vllm:num_requests_waiting", pods="vllm_num_requests_waiting")
HOME = "/home/vllm"
CACHE = f"{HOME}/.cache"
#: Every cache vLLM and its libraries write by default, moved onto the pod's writable ``home`` volume (the image's
#: defaults are under root's home or keyed by the passwd user name).
CACHE_ENV: dict[str, str] = {
    "XDG_CACHE_HOME": CACHE,
    "XDG_CONFIG_HOME": f"{HOME}/.config",
    "VLLM_CACHE_ROOT": f"{CACHE}/vllm",
    "VLLM_CONFIG_ROOT": f"{HOME}/.config/vllm",
    "TRITON_CACHE_DIR": f"{CACHE}/triton",
    "TORCHINDUCTOR_CACHE_DIR": f"{CACHE}/torchinductor",
    "TORCH_HOME": f"{CACHE}/torch",
    "CUDA_CACHE_PATH": f"{CACHE}/nv",
    "NUMBA_CACHE_DIR": f"{CACHE}/numba",
    "OUTLINES_CACHE_DIR": f"{CACHE}/outlines",
}


@dataclass(frozen=True, kw_only=True)
class EngineArgs:
    """vLLM flags as typed values; ``render()`` gives the argument list. Defaults are vLLM's."""

    tensor_parallel_size: int = 1
    """``--tensor-parallel-size``: accelerators each layer is sharded across. Default 1."""
    pipeline_parallel_size: int = 1
    """``--pipeline-parallel-size``: pipeline stages (groups of layers); TP × PP ranks make one replica. Default 1."""
    gpu_memory_utilization: float = 0.90
    """``--gpu-memory-utilization``: fraction (0–1) of each accelerator's memory vLLM may take (weights, activations,
    KV cache). Default 0.9."""
    max_model_len: int = 8192
    """``--max-model-len``: longest context (prompt + output), tokens. Default 8192."""
    max_num_seqs: int = 256
    """``--max-num-seqs``: most sequences running in one batch. Default 256."""
    max_num_batched_tokens: int = 8192
    """``--max-num-batched-tokens``: most tokens scheduled in one engine step. Default 8192."""
    dtype: str = "auto"
    """``--dtype`` of weights and activations (``auto``, ``bfloat16``, ``float16``…). Default ``auto`` (the
    checkpoint's)."""
    quantization: str | None = None
    """``--quantization`` method (e.g. ``fp8``, ``awq``). Default none: not passed."""
    kv_cache_dtype: str = "auto"
    """``--kv-cache-dtype`` (``auto``: the model's dtype; e.g. ``fp8``). Default ``auto``."""
    enable_prefix_caching: bool = True
    """``--enable-prefix-caching`` (reuse the KV blocks of shared prompt prefixes), or its off switch when False.
    Default True."""
    enable_chunked_prefill: bool | None = None
    """``--enable-chunked-prefill`` when True, its off switch when False. Default None: not passed (the engine's
    default)."""
    enforce_eager: bool = False
    """``--enforce-eager``: no CUDA graph capture (faster start, slower decoding). Default False."""
    tool_call_parser: str | None = None
    """Enables ``--enable-auto-tool-choice`` with this parser."""
    mistral_format: bool = False
    """``--tokenizer-mode mistral --config-format mistral`` (Mistral-format checkpoints; required for Mistral tool
    calling since vLLM 0.9)."""
    lmcache: bool = False
    """``--kv-transfer-config`` for LMCacheConnectorV1 (kv_both)."""
    block_size: int | None = None
    """``--block-size`` (tokens per KV block). Default: the engine's."""
    num_gpu_blocks_override: int | None = None
    """``--num-gpu-blocks-override`` (KV blocks, instead of profiling; the Neuron plugin sizes its KV cache from
    it). Default: profiled by the engine."""
    shutdown_timeout: int | None = None
    """``--shutdown-timeout``: seconds the engine drains in-flight requests after SIGTERM (vLLM's default 0
    aborts them). Default: set by :class:`VllmServer` from its termination grace period."""
    additional_config: Mapping[str, Any] | None = None
    """``--additional-config`` (platform plugin settings, e.g. vllm-neuron's ``override_neuron_config``)."""
    extra: Sequence[str] = ()
    """Further ``vllm serve`` arguments, appended verbatim after the typed flags (not in :meth:`kwargs`). Default
    none."""
    flags_version: str | None = None
    """The vLLM release whose spellings :meth:`render` uses for switched-off booleans (``--disable-prefix-caching``
    in 0.33, ``--no-enable-prefix-caching`` in 0.19), from its vendored flag list. Default None: the
    ``--no-<flag>`` form, which every release from 0.19 to 0.33 accepts (hidden in 0.33)."""

    def _off(self, flag: str) -> str:
        if self.flags_version is None:
            return "--no-" + flag.removeprefix("--")
        return vllm_flags(self.flags_version).switch(flag, on=False)

    def render(self, *, port: bool = True) -> list[str]:
        """The flags. ``port``: with ``--port`` (a ``vllm serve`` flag; an engine that parses engine arguments only,
        such as ``dynamo.vllm``, has none). Default True."""
        args = [
            *(["--port", str(PORT)] if port else []),
            "--tensor-parallel-size",
            str(self.tensor_parallel_size),
            "--pipeline-parallel-size",
            str(self.pipeline_parallel_size),
            "--gpu-memory-utilization",
            f"{self.gpu_memory_utilization:g}",
            "--max-model-len",
            str(self.max_model_len),
            "--max-num-seqs",
            str(self.max_num_seqs),
            "--max-num-batched-tokens",
            str(self.max_num_batched_tokens),
            "--dtype",
            self.dtype,
            "--kv-cache-dtype",
            self.kv_cache_dtype,
            "--enable-prefix-caching" if self.enable_prefix_caching else self._off("--enable-prefix-caching"),
        ]
        if self.quantization:
            args += ["--quantization", self.quantization]
        if self.enable_chunked_prefill is not None:
            chunked = self.enable_chunked_prefill
            args.append("--enable-chunked-prefill" if chunked else self._off("--enable-chunked-prefill"))
        if self.enforce_eager:
            args.append("--enforce-eager")
        if self.mistral_format:
            args += ["--tokenizer-mode", "mistral", "--config-format", "mistral"]
        if self.tool_call_parser:
            args += ["--enable-auto-tool-choice", "--tool-call-parser", self.tool_call_parser]
        if self.lmcache:
            config = {"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"}
            args += ["--kv-transfer-config", json.dumps(config, separators=(",", ":"))]
        if self.block_size is not None:
            args += ["--block-size", str(self.block_size)]
        if self.num_gpu_blocks_override is not None:
            args += ["--num-gpu-blocks-override", str(self.num_gpu_blocks_override)]
        if self.shutdown_timeout is not None:
            args += ["--shutdown-timeout", str(self.shutdown_timeout)]
        if self.additional_config:
            args += ["--additional-config", json.dumps(self.additional_config, separators=(",", ":"), sort_keys=True)]
        return [*args, *self.extra]

    def kwargs(self) -> dict[str, Any]:
        """The typed engine settings as ``vllm.LLM(...)`` keyword arguments — what :meth:`render` passes to
        ``vllm serve``, without the server-only flags (port, drain, tool calling) and without ``extra``. A Job that
        must build exactly what the server will load (the Neuron compile) uses these."""
        kwargs: dict[str, Any] = {
            "tensor_parallel_size": self.tensor_parallel_size,
            "pipeline_parallel_size": self.pipeline_parallel_size,
            "gpu_memory_utilization": self.gpu_memory_utilization,
            "max_model_len": self.max_model_len,
            "max_num_seqs": self.max_num_seqs,
            "max_num_batched_tokens": self.max_num_batched_tokens,
            "dtype": self.dtype,
            "kv_cache_dtype": self.kv_cache_dtype,
            "enable_prefix_caching": self.enable_prefix_caching,
        }
        optional = {
            "quantization": self.quantization,
            "enable_chunked_prefill": self.enable_chunked_prefill,
            "enforce_eager": self.enforce_eager or None,
            "block_size": self.block_size,
            "num_gpu_blocks_override": self.num_gpu_blocks_override,
            "additional_config": dict(self.additional_config) if self.additional_config else None,
        }
        kwargs |= {k: v for k, v in optional.items() if v is not None}
        if self.mistral_format:
            kwargs |= {"tokenizer_mode": "mistral", "config_format": "mistral"}
        return kwargs


@dataclass(frozen=True, kw_only=True)
class VllmServerProps:
    """One vLLM deployment. Resources: ``requests``/``limits`` as Kubernetes quantities (accelerators included)."""

    name: str
    """Name of the Deployment (a multi-node server: LeaderWorkerSet ``<name>-group``), Service, PodDisruptionBudget,
    PodMonitor and ScaledObject/HPA; also the ``app.kubernetes.io/name`` label. An RFC 1123 label."""
    namespace: str
    """Namespace of every object rendered. An RFC 1123 label."""
    image: str
    """The vLLM image, pinned by tag or digest; by default its vLLM release decides ``graceful_shutdown``."""
    model: ModelLoading
    """The model and how vLLM loads it: the ``vllm serve`` model argument, its flags, environment, volumes and
    mounts."""
    served_model_name: str
    """``--served-model-name``: the name clients put in ``model``."""
    engine: EngineArgs
    """The engine flags, after the model's; an unset ``shutdown_timeout`` is filled from
    ``termination_grace_seconds`` (graceful engines)."""
    service_account: str
    """ServiceAccount the pods run as (its token is not mounted; an ``s3`` model needs it to read the bucket). An RFC
    1123 label."""
    requests: Mapping[str, str]
    """Container requests (``cpu``, ``memory``, ``nvidia.com/gpu``…), Kubernetes quantities; per pod for a multi-node
    server."""
    limits: Mapping[str, str]
    """Container limits, Kubernetes quantities; extended resources (accelerators, EFA) must equal their ``requests``."""
    placement: PodPlacement
    """Where the pods run: node selector, tolerations, affinity, scheduler (e.g. the Neuron scheduler extension's
    ``my-scheduler``, for contiguous Neuron devices) and PriorityClass (it must exist on the cluster; inferstack
    platforms pass ``inferstack-serving``)."""
    startup_seconds: int
    """Time the startup probe allows for loading the model."""
    replicas: int | None = 1
    """None: an external autoscaler owns the replicas (not set on the Deployment). Default 1."""
    shm_gib: float = 8
    """Size of the memory-backed ``/dev/shm`` (NCCL, the tokenizer pool), GiB. At least 0.0625. Default 8."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Extra environment variables, name → value (after the cache variables and the model's). Default none."""
    secret_env: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """Variables read from Secrets: name → (Secret, key). Default none."""
    init_containers: Sequence[k8s.Container] = ()
    """Init containers run before vLLM (e.g. waiting for the model sync). Default none."""
    init_mounts: Sequence[Mount] = ()
    """Volumes only the init containers mount, each carrying its volume (see ``ServingPodProps.init_mounts``).
    Default none."""
    extra_mounts: Sequence[Mount] = ()
    """vLLM-container mounts besides the model's (and ``/dev/shm``, HOME, /tmp), each carrying its volume. Default
    none."""
    autoscaling: Autoscaling | None = None
    """Scale on ``vllm:num_requests_waiting`` with a KEDA ScaledObject or an HPA (refused by the multi-node server).
    Default none."""
    recreate: bool = False
    """Replace pods by stopping the old one first (a ReadWriteOnce cache volume cannot attach to a surge pod on
    another node). Default False: surge one, never unavailable."""
    monitoring: bool = True
    """Render a PodMonitor scraping vLLM's ``/metrics``. Default True."""
    termination_grace_seconds: int = SERVING_TERMINATION_GRACE_SECONDS
    """Seconds from SIGTERM to SIGKILL: the preStop pause (15 s), then the engine drains in-flight requests
    (``--shutdown-timeout`` = the rest minus a 10 s exit margin, unless ``engine.shutdown_timeout`` is set).
    Default 120."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra labels on the pods (and the Deployment). Default none; the selector labels cannot be overridden."""
    annotations: Mapping[str, str] = field(default_factory=dict)
    """Annotations on the pod template (e.g. for a service mesh or a log shipper). Default none."""
    ports: Mapping[str, int] = field(default_factory=dict)
    """Extra container ports, name → port (e.g. a side metrics or ZMQ port). Default none (``http`` 8000 only)."""
    graceful_shutdown: bool | None = None
    """The engine takes ``--shutdown-timeout`` (vLLM ≥ 0.18) and drains in-flight requests after SIGTERM. Older
    engines (the Neuron DLC's vLLM 0.16) abort in-flight requests at SIGTERM; the preStop pause still stops new
    traffic first. Default: read from the image's vLLM release (``vllm/vllm-openai`` and Neuron DLC tags; other
    images are taken to be current)."""


class VllmServer(Construct):
    """Deployment + Service + PodDisruptionBudget (+ PodMonitor, ScaledObject/HPA) for one vLLM server.

    Defaults that matter in production: serving PriorityClass; accelerator requests equal limits; a memory-backed
    ``/dev/shm``; a startup probe sized to the model load, then readiness and liveness on ``/health``; a preStop
    pause so the Service stops routing before the engine drains; non-root, no privilege escalation, no
    capabilities, RuntimeDefault seccomp; the service-account token is not mounted.
    """

    def __init__(self, scope: Construct, construct_id: str, props: VllmServerProps) -> None:
        super().__init__(scope, construct_id)
        owner = f"VllmServer {props.name!r}"
        self.props, pod = vllm_pod_props(props, owner)
        self.workload = ServingWorkload(self, "pod", pod, owner=owner)
        self.labels = self.workload.labels
        self.deployment = self.workload.deployment
        self.service = self.workload.service


#: Waits, before SIGTERM, until the engine runs and queues no request (its own ``/metrics``), at most the drain
#: budget: vLLM < 0.18 has no ``--shutdown-timeout`` and cancels in-flight requests at SIGTERM (0.16
#: ``entrypoints/launcher.py``), so the preStop hook drains them instead. The Service stops routing to the pod
#: during the first seconds (the pause), then the running requests finish.
DRAIN_SCRIPT = """
import re, sys, time, urllib.request
pause, budget, port = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
time.sleep(pause)
deadline = time.monotonic() + budget
pattern = re.compile(r'^vllm:num_requests_(running|waiting)\\{[^}]*\\} ([0-9.e+]+)$', re.M)
while (left := deadline - time.monotonic()) > 0:
    try:
        text = urllib.request.urlopen(f'http://127.0.0.1:{port}/metrics', timeout=min(5, left)).read().decode()
    except OSError:
        break
    found = pattern.findall(text)
    if not found or sum(float(v) for _, v in found) == 0:
        break
    time.sleep(min(2, max(0, deadline - time.monotonic())))
"""


def drain_command(pause_seconds: int, budget_seconds: int, port: int = PORT) -> tuple[str, ...]:
    """The preStop command of an engine without ``--shutdown-timeout``: pause ``pause_seconds`` (endpoints stop
    routing), then wait up to ``budget_seconds`` until ``vllm:num_requests_running`` and ``…_waiting`` on
    ``port`` are 0 (or the server stopped answering)."""
    return ("python3", "-c", DRAIN_SCRIPT.strip(), str(pause_seconds), str(max(budget_seconds, 1)), str(port))


def vllm_pod_props(
    props: VllmServerProps, owner: str, *, extra_args: Sequence[str] = ()
) -> tuple[VllmServerProps, ServingPodProps]:
    """The shared serving pod of a vLLM server: ``vllm serve`` with the model and engine flags (``extra_args``
    after them), the caches on the writable home, the drain deadline (``--shutdown-timeout``) fitted into the
    termination grace period. Returns the props with the drain filled in, and the pod's props."""
    drain = props.termination_grace_seconds - PRE_STOP_SECONDS - EXIT_MARGIN_SECONDS
    graceful = supports_shutdown_timeout(props.image) if props.graceful_shutdown is None else props.graceful_shutdown
    if drain < 1 and (not graceful or props.engine.shutdown_timeout is None):
        raise check.PropError(
            f"{owner}: termination_grace_seconds {props.termination_grace_seconds} leaves no time to drain — "
            f"use at least {PRE_STOP_SECONDS + EXIT_MARGIN_SECONDS + 1}"
        )
    if not graceful:
        if props.engine.shutdown_timeout is not None:
            raise check.PropError(
                f"{owner}: engine.shutdown_timeout is set but graceful_shutdown is False (the engine has no "
                "--shutdown-timeout) — remove one of them"
            )
    elif props.engine.shutdown_timeout is None:
        if drain < 1:
            raise check.PropError(
                f"{owner}: termination_grace_seconds {props.termination_grace_seconds} leaves no time to drain — "
                f"use at least {PRE_STOP_SECONDS + EXIT_MARGIN_SECONDS + 1}"
            )
        props = dataclasses.replace(props, engine=dataclasses.replace(props.engine, shutdown_timeout=drain))
    elif props.engine.shutdown_timeout > drain:
        raise check.PropError(
            f"{owner}: engine.shutdown_timeout {props.engine.shutdown_timeout}s + preStop "
            f"{PRE_STOP_SECONDS}s + {EXIT_MARGIN_SECONDS}s exit margin exceeds termination_grace_seconds "
            f"{props.termination_grace_seconds} — raise the grace period to at least "
            f"{props.engine.shutdown_timeout + PRE_STOP_SECONDS + EXIT_MARGIN_SECONDS} or shorten the timeout"
        )
    env = [
        *(k8s.EnvVar(name=k, value=v) for k, v in CACHE_ENV.items()),
        k8s.EnvVar(name="VLLM_NO_USAGE_STATS", value="1"),
        k8s.EnvVar(name="DO_NOT_TRACK", value="1"),
        *props.model.env,
        *(k8s.EnvVar(name=k, value=v) for k, v in sorted(props.env.items())),
        *(
            k8s.EnvVar(
                name=k,
                value_from=k8s.EnvVarSource(secret_key_ref=k8s.SecretKeySelector(name=secret, key=key)),
            )
            for k, (secret, key) in sorted(props.secret_env.items())
        ),
    ]
    return props, ServingPodProps(
        pre_stop=() if graceful else drain_command(PRE_STOP_SECONDS, drain),
        name=props.name,
        namespace=props.namespace,
        component="vllm",
        image=props.image,
        command=["vllm", "serve"],
        args=[
            props.model.model,
            "--served-model-name",
            props.served_model_name,
            *props.model.args,
            *props.engine.render(),
            *extra_args,
        ],
        container_name="vllm",
        port=PORT,
        home=HOME,
        user=SERVING_USER,
        env=env,
        queue_metric=VLLM_QUEUE,
        service_account=props.service_account,
        requests=props.requests,
        limits=props.limits,
        placement=props.placement,
        startup_seconds=props.startup_seconds,
        replicas=props.replicas,
        shm_gib=props.shm_gib,
        init_containers=props.init_containers,
        init_mounts=props.init_mounts,
        mounts=[*props.model.mounts, *props.extra_mounts],
        autoscaling=props.autoscaling,
        monitoring=props.monitoring,
        recreate=props.recreate,
        termination_grace_seconds=props.termination_grace_seconds,
        labels=props.labels,
        annotations=props.annotations,
        ports=props.ports,
    )


#: Port of the torch.distributed store on the leader (``--master-port``; vLLM 0.19's default, config/parallel.py).
MASTER_PORT = 29501


@dataclass(frozen=True, kw_only=True)
class VllmMultinodeServerProps(VllmServerProps):
    """One vLLM replica over ``nodes`` pods (one per node): TP × PP ranks split evenly, ``requests``/``limits`` per
    pod. ``autoscaling`` is not available (replicas are whole groups)."""

    nodes: int = 2
    """Pods (nodes) per replica: the LeaderWorkerSet size. Default 2."""


class VllmMultinodeServer(Construct):
    """A LeaderWorkerSet of vLLM groups (:class:`~inferstack.constructs.pod.group.ServingGroup`), in vLLM's own
    multi-node mode (multiprocessing executor, no Ray: vLLM ≥ 0.18 images ship without Ray, vLLM #36170): every
    pod runs ``vllm serve`` with ``--nnodes <nodes> --master-addr $(LWS_LEADER_ADDRESS) --master-port 29501``; the
    leader is ``--node-rank 0`` and serves the API, the workers are ``--node-rank $(LWS_WORKER_INDEX) --headless``
    (vLLM 0.19 arg_utils.py / cli_args.py; docs/serving/parallelism_scaling.md "Running vLLM with
    MultiProcessing"). The leader's startup probe covers the whole group's start."""

    def __init__(self, scope: Construct, construct_id: str, props: VllmMultinodeServerProps) -> None:
        super().__init__(scope, construct_id)
        owner = f"VllmMultinodeServer {props.name!r}"
        check.at_least(owner, "nodes", props.nodes, 2, "one node needs no group: use VllmServer")
        ranks = props.engine.tensor_parallel_size * props.engine.pipeline_parallel_size
        if ranks % props.nodes:
            raise check.PropError(
                f"{owner}: nodes {props.nodes} — must divide tensor × pipeline parallel ranks ({ranks})"
            )
        group = [
            "--nnodes",
            str(props.nodes),
            "--master-addr",
            "$(LWS_LEADER_ADDRESS)",
            "--master-port",
            str(MASTER_PORT),
        ]
        self.props, pod = vllm_pod_props(props, owner, extra_args=[*group, "--node-rank", "0"])
        # Workers get the same engine flags (vLLM checks the config is consistent across nodes); a headless worker
        # ignores the server-only ones (--port, --served-model-name, --shutdown-timeout: cli/serve.py run_headless).
        _, worker = vllm_pod_props(
            props, owner, extra_args=[*group, "--node-rank", "$(LWS_WORKER_INDEX)", "--headless"]
        )
        # LWS deletes a group's pods together and a headless worker exits at SIGTERM: the workers' preStop pause
        # outlasts the leader's (its preStop + drain), so in-flight requests finish on every pipeline stage.
        drain = self.props.engine.shutdown_timeout or 0
        self.group = ServingGroup(
            self,
            "group",
            ServingGroupProps(
                pod=pod,
                size=props.nodes,
                worker_command=worker.command,
                worker_args=worker.args,
                worker_pre_stop_seconds=PRE_STOP_SECONDS + drain,
            ),
            owner=owner,
        )
        self.labels = self.group.labels
        self.leader_worker_set = self.group.leader_worker_set
        self.service = self.group.service
