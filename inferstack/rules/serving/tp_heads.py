"""TP-HEADS: vLLM shards the attention heads across the tensor-parallel ranks, so the head count must divide
evenly by ``tensor_parallel_size``. The finding lists the divisors and suggests the nearest one that passes every
rule."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.model import InferstackConfig
from inferstack.plan.served import engines
from inferstack.rules.base import Finding, Rule
from inferstack.rules.suggestions import suggesting, viable

TP_HEADS = "TP-HEADS"


def check_tp_heads(config: InferstackConfig) -> Iterator[Finding]:
    """vLLM shards attention heads across TP ranks: the head count must divide evenly."""
    for path, workload in engines(config):
        heads, tp = workload.model.arch.attention_heads, workload.engine.tensor_parallel_size
        if heads % tp:
            divisors = [d for d in (1, 2, 4, 8, 16, 32, 64) if heads % d == 0]
            field = f"{path}.engine.tensor_parallel_size"
            ranked = sorted(divisors, key=lambda d: (abs(d - tp), -d))
            passing = [d for d in ranked if suggesting() and viable(config, {field: d})]
            yield Finding(
                rule=TP_HEADS,
                path=field,
                message=f"{workload.model.id} has {heads} attention heads, not divisible by tensor_parallel_size {tp}",
                fix=f"use a tensor_parallel_size that divides {heads}: {', '.join(map(str, divisors))}"
                + (f" ({passing[0]} fits this pool)" if passing else ""),
                suggestions=({field: passing[0]},) if passing else (),
            )


RULE = Rule(id=TP_HEADS, title="Tensor parallelism divides the attention heads", check=check_tp_heads)
