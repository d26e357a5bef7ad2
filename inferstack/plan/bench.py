"""What a workload's benchmark Job needs: the endpoint it loads, the tokenizer, the identity and the results prefix
— or why it cannot run (rule BENCH-TARGET)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from inferstack.config.bench import BenchConfig
from inferstack.config.workloads import BUCKET_SOURCES, ModelSourceType, SingleModelWorkload, WorkloadBase
from inferstack.plan.endpoints import NoEndpointError, endpoint_of

#: Labels of a benchmark's pods (what constructs.bench renders; a test keeps the two equal).
BENCH_COMPONENT, BENCH_TARGET_LABEL = "bench", "inferstack.io/bench-target"


def bench_pods(name: str) -> dict[str, str]:
    """The labels of the benchmark pods of workload ``name``."""
    return {"app.kubernetes.io/component": BENCH_COMPONENT, BENCH_TARGET_LABEL: name}


@dataclass(frozen=True)
class ResolvedBench:
    config: BenchConfig
    service_account: str
    base_url: str
    endpoint: str
    model: str
    results_prefix: str
    model_prefix: str | None
    """Tokenizer files come from this bucket prefix; None: ``tokenizer`` (a Hugging Face id)."""
    tokenizer: str | None
    tokenizer_mode: str | None
    hf_token_secret: tuple[str, str] | None


class BenchError(ValueError):
    """Why ``bench`` cannot run: ``field`` (relative to the workload) and the fix."""

    def __init__(self, field: str, message: str, fix: str) -> None:
        super().__init__(message)
        self.field, self.fix = field, fix


#: A CronJob name has at most 52 characters (its Jobs add an 11-character suffix): ``<name>-bench``.
MAX_NAME_LENGTH = 52 - len("-bench")


def bench_service_account(workload: WorkloadBase) -> str:
    return f"{workload.name}-bench"


def resolve_bench(workload: WorkloadBase) -> ResolvedBench | None:
    """The workload's benchmark, None without ``bench``. :raises BenchError: when it cannot run."""
    bench = workload.bench
    if bench is None:
        return None
    if len(workload.name) > MAX_NAME_LENGTH:
        raise BenchError(
            "name",
            f"{workload.name!r} has {len(workload.name)} characters: its benchmark CronJob {workload.name}-bench "
            f"would pass the 52 Kubernetes allows a CronJob",
            f"shorten the name to at most {MAX_NAME_LENGTH} characters, or remove bench",
        )
    try:
        endpoint = endpoint_of(workload)
    except NoEndpointError as error:
        raise BenchError(
            "bench", f"{workload.kind}: {error}", "remove bench (vllm bench serve speaks OpenAI)"
        ) from None
    model = bench.model or (endpoint.models[0] if endpoint.models else None)
    if model is None:
        raise BenchError("bench.model", f"{workload.kind} does not say its served model name", "set bench.model")
    if not isinstance(workload, SingleModelWorkload):
        raise BenchError("bench", f"kind {workload.kind} serves no single model to tokenize for", "remove bench")
    source = workload.model.source.type
    if source not in (*BUCKET_SOURCES, ModelSourceType.HF):
        where = "the file system, which the bench Job does not mount" if source is ModelSourceType.EFS else "the image"
        raise BenchError(
            "bench",
            f"the model's source {source.value} leaves no tokenizer to read (the weights are in {where})",
            "use a bucket or hf source, or remove bench",
        )
    parts = urlsplit(endpoint.api_base)
    path = parts.path.rstrip("/") or "/v1"
    token = workload.model.hf_token_secret
    return ResolvedBench(
        config=bench,
        service_account=bench_service_account(workload),
        base_url=f"{parts.scheme}://{parts.netloc}",
        endpoint=f"{path}/completions",
        model=model,
        results_prefix=f"bench/{workload.namespace}/{workload.name}/",
        model_prefix=workload.model.bucket_prefix if source in BUCKET_SOURCES else None,
        tokenizer=workload.model.id if source is ModelSourceType.HF else None,
        tokenizer_mode="mistral" if workload.model.arch.mistral_format else None,
        hf_token_secret=(token.name, token.key) if token is not None and source is ModelSourceType.HF else None,
    )
