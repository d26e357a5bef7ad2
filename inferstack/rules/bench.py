"""Rules of ``bench``: the benchmark can reach an OpenAI-compatible endpoint, tokenize for its model, send requests
the server accepts, and store its results in the model bucket."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.model import InferstackConfig
from inferstack.config.workloads import SingleModelWorkload
from inferstack.plan.bench import BenchError, resolve_bench
from inferstack.plan.served import engines
from inferstack.rules.base import Finding, Rule

TARGET = "BENCH-TARGET"
BUCKET = "BENCH-BUCKET"
CONTEXT = "BENCH-CONTEXT"


def check_target(config: InferstackConfig) -> Iterator[Finding]:
    """``vllm bench serve`` speaks OpenAI, names a served model and tokenizes locally."""
    for index, workload in enumerate(config.workloads):
        try:
            resolve_bench(workload)
        except BenchError as problem:
            yield Finding(
                rule=TARGET, path=f"workloads[{index}].{problem.field}", message=str(problem), fix=problem.fix
            )


def check_context(config: InferstackConfig) -> Iterator[Finding]:
    """Every request of the benchmark is ``input_tokens`` of prompt (``--random-range-ratio`` 0) asking for
    ``output_tokens`` (``--ignore-eos``): longer together than the engine's ``max_model_len`` — the value the plan
    renders — and vLLM answers each with a 400 ("maximum context length is … tokens", as its error reads; not
    confirmed against 0.31.0's source offline (?)). Other servers are held to the model's context."""
    lengths: dict[int, int] = {}
    for _, served in engines(config):
        length = served.engine.max_model_len
        if length is not None:
            lengths[served.index] = min(lengths.get(served.index, length), length)
    for index, workload in enumerate(config.workloads):
        bench = workload.bench
        if bench is None or not isinstance(workload, SingleModelWorkload):
            continue
        asked = bench.input_tokens + bench.output_tokens
        if index in lengths:
            limit, what = lengths[index], f"the engine's max_model_len of {lengths[index]:,}"
            raise_it = "or raise engine.max_model_len"
        else:
            limit = workload.model.arch.max_context
            what, raise_it = f"{workload.model.id}'s context of {limit:,}", "(the model's whole context)"
        if asked > limit:
            yield Finding(
                rule=CONTEXT,
                path=f"workloads[{index}].bench.input_tokens",
                message=f"{bench.input_tokens:,} + {bench.output_tokens:,} = {asked:,} tokens per request is longer "
                f"than {what}: the server refuses every request of the run",
                fix=f"lower input_tokens + output_tokens to at most {limit:,} {raise_it}",
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
    Rule(id=CONTEXT, title="A benchmark's requests fit the engine's context", check=check_context),
)  # fmt: skip
