"""Rules of ``bench``: the benchmark can reach an OpenAI-compatible endpoint, tokenize for its model, and store
its results in the model bucket."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.model import InferstackConfig
from inferstack.plan.bench import BenchError, resolve_bench
from inferstack.rules.base import Finding, Rule

TARGET = "BENCH-TARGET"
BUCKET = "BENCH-BUCKET"


def check_target(config: InferstackConfig) -> Iterator[Finding]:
    """``vllm bench serve`` speaks OpenAI, names a served model and tokenizes locally."""
    for index, workload in enumerate(config.workloads):
        try:
            resolve_bench(workload)
        except BenchError as problem:
            yield Finding(
                rule=TARGET, path=f"workloads[{index}].{problem.field}", message=str(problem), fix=problem.fix
            )


def check_bucket(config: InferstackConfig) -> Iterator[Finding]:
    """The results (and a bucket model's tokenizer) live in the model bucket."""
    if config.storage.model_bucket is not None:
        return
    for index, workload in enumerate(config.workloads):
        if workload.bench is not None:
            yield Finding(
                rule=BUCKET,
                path=f"workloads[{index}].bench",
                message="the benchmark writes its results to the model bucket, and storage.model_bucket is null",
                fix="configure storage.model_bucket, or remove bench",
            )


RULES = (
    Rule(id=TARGET, title="A benchmark targets an OpenAI endpoint it can tokenize for", check=check_target,
         acknowledgeable=False),
    Rule(id=BUCKET, title="A benchmark has a bucket for its results", check=check_bucket, acknowledgeable=False),
)  # fmt: skip
