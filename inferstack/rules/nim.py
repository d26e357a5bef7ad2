"""Rules of the ``nim`` kind: the NGC Secrets are named, the cached profile's tensor parallelism is the pod's GPUs, the
profile's weights fit those GPUs, a ReadWriteOnce cache serves one replica — plus the shared scheduling and startup
rules."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.catalog.instances import AcceleratorKind, InstanceType
from inferstack.config.engine import Quantization, VllmEngineConfig
from inferstack.config.model import InferstackConfig
from inferstack.config.nim import AccessMode, NimCacheSource, NimPrecision, NimWorkloadConfig
from inferstack.plan.placement import pool_instances
from inferstack.plan.served import ServedEngine, sizing_for
from inferstack.rules import serving
from inferstack.rules.base import Finding, Rule
from inferstack.sizing.model import SizingResult

SECRETS = "NIM-NGC-SECRETS"
PROFILE_TP = "NIM-PROFILE-TP"
FIT = "NIM-FIT"
CACHE_ACCESS = "NIM-CACHE-ACCESS"
_CREATE_KEY = "kubectl -n {ns} create secret generic ngc-api-secret --from-literal=NGC_API_KEY=<key>"
_CREATE_PULL = (
    "kubectl -n {ns} create secret docker-registry ngc-secret --docker-server=nvcr.io "
    "--docker-username='$oauthtoken' --docker-password=<key>"
)
_CREATE_HF = "kubectl -n {ns} create secret generic hf-token --from-literal=HF_TOKEN=<token>"


def _workloads(config: InferstackConfig) -> Iterator[tuple[str, NimWorkloadConfig]]:
    for index, workload in enumerate(config.workloads):
        if isinstance(workload, NimWorkloadConfig):
            yield f"workloads[{index}]", workload


def check_secrets(config: InferstackConfig) -> Iterator[Finding]:
    """A NIM needs the NGC API key Secret (``authSecret``, required by the CRD), the nvcr.io pull Secret, and for an
    ``hf`` cache the Hugging Face token Secret — each named, never inlined (inferstack creates no Secret)."""
    for path, workload in _workloads(config):
        ns = workload.namespace
        wanted = [
            ("ngc.api_key_secret", workload.ngc.api_key_secret, "the NGC API key (key NGC_API_KEY)", _CREATE_KEY),
            ("ngc.pull_secret", workload.ngc.pull_secret, "the nvcr.io pull Secret", _CREATE_PULL),
        ]
        if workload.cache.source is NimCacheSource.HF:
            token = workload.model.hf_token_secret
            wanted.append(("model.hf_token_secret", token, "the Hugging Face token (key HF_TOKEN)", _CREATE_HF))
        for field, value, what, command in wanted:
            if value is None:
                yield Finding(
                    rule=SECRETS,
                    path=f"{path}.{field}",
                    message=f"not set: the NIM operator needs {what} to pull the image and the model",
                    fix=f"create it in namespace {ns} ({command.format(ns=ns)}) and name it here",
                )


def check_profile_tp(config: InferstackConfig) -> Iterator[Finding]:
    """The cached profiles' tensor parallelism is the pod's GPUs: a larger one cannot start, a smaller one leaves
    GPUs idle (NIM runs the profile's TP)."""
    for path, workload in _workloads(config):
        tp = workload.cache.profile.tensor_parallelism
        if tp is None or tp == workload.gpus:
            continue
        yield Finding(
            rule=PROFILE_TP,
            path=f"{path}.cache.profile.tensor_parallelism",
            message=f"profiles of tensor parallelism {tp} on pods of {workload.gpus} GPUs: "
            + ("the profile needs more GPUs than the pod has" if tp > workload.gpus else "GPUs would sit idle"),
            fix=f"set gpus: {tp}, or cache.profile.tensor_parallelism: {workload.gpus} (or leave it unset)",
            suggestions=({f"{path}.gpus": tp}, {f"{path}.cache.profile.tensor_parallelism": workload.gpus}),
        )


def _sizing(workload: NimWorkloadConfig, index: int, gpus: int, host: InstanceType) -> SizingResult:
    fp8 = workload.cache.profile.precision is NimPrecision.FP8
    engine = VllmEngineConfig(tensor_parallel_size=gpus, quantization=Quantization.FP8 if fp8 else None)
    return sizing_for(ServedEngine(index, workload, workload.model, engine), host)


def check_fit(config: InferstackConfig) -> Iterator[Finding]:
    """The profile's weights (8-bit for ``fp8``, else 16-bit) and one 8k-token sequence of KV cache fit the pod's
    GPUs (the vLLM sizing model: the engines hold weights and KV alike). Suggests the fewest GPUs that fit."""
    for index, workload in enumerate(config.workloads):
        if not isinstance(workload, NimWorkloadConfig):
            continue
        pool = config.pool(workload.pool)
        instances = pool_instances(pool)
        hosts = [t for t in instances if t.accelerator_count >= workload.gpus]
        if pool.accelerator is not AcceleratorKind.NVIDIA or not hosts:
            continue  # the config refuses other accelerators; SCHEDULING reports a pod no node holds
        host = min(hosts, key=lambda t: (t.accelerator_count, t.vcpu))
        result = _sizing(workload, index, workload.gpus, host)
        if result.fits:
            continue
        largest = max(instances, key=lambda t: t.accelerator_count)
        fitting = [
            n
            for n in (2, 4, 8, 16)
            if workload.gpus < n <= largest.accelerator_count and _sizing(workload, index, n, largest).fits
        ]
        path = f"workloads[{index}]"
        yield Finding(
            rule=FIT,
            path=f"{path}.gpus",
            message=f"{workload.model.id} needs {result.weights_gib:.1f} GiB of weights per GPU on {workload.gpus} × "
            f"{host.accelerator_model} ({host.accelerator_memory_gib:.0f} GiB): no room for the KV cache",
            fix=f"use gpus: {fitting[0]}" if fitting else "use a pool with more or larger GPUs, or an fp8 profile",
            suggestions=({f"{path}.gpus": fitting[0]},) if fitting else (),
        )


def check_cache_access(config: InferstackConfig) -> Iterator[Finding]:
    """A ReadWriteOnce cache volume attaches to one node: a second replica on another node stays Pending
    (Multi-Attach error)."""
    for path, workload in _workloads(config):
        if workload.replicas > 1 and workload.cache.access_mode is AccessMode.READ_WRITE_ONCE:
            yield Finding(
                rule=CACHE_ACCESS,
                path=f"{path}.cache.access_mode",
                message=f"{workload.replicas} replicas share one ReadWriteOnce cache volume "
                f"({workload.cache.storage_class}): it attaches to one node, so replicas on other nodes never start",
                fix="use replicas: 1, or cache.access_mode: ReadWriteMany with a ReadWriteMany storage_class "
                "(EFS, FSx)",
                suggestions=({f"{path}.replicas": 1},),
            )


RULES = (
    Rule(
        id=SECRETS, title="A NIM names its NGC (and Hugging Face) Secrets", check=check_secrets, acknowledgeable=False
    ),
    Rule(id=PROFILE_TP, title="The NIM profile's TP is the pod's GPUs", check=check_profile_tp),
    Rule(id=FIT, title="The NIM profile fits the pod's GPUs", check=check_fit),
    Rule(id=CACHE_ACCESS, title="A ReadWriteOnce NIM cache serves one replica", check=check_cache_access),
    *(rule for rule in serving.RULES if rule.id in (serving.SCHEDULING, serving.STARTUP)),
)
