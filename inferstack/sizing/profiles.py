"""How much memory a vLLM release uses outside the KV cache, per release line — the version-dependent inputs of
:mod:`inferstack.sizing.model`. Each value names its source; ``?`` marks what no published log confirms.

Published start-up logs (``tests/sizing/vectors.py`` keeps each with its source):

* **Sampler warm-up.** The profiling run samples ``max_num_seqs`` dummy requests over the whole vocabulary; its
  peak is about 37.7 bytes per (sequence × vocabulary entry) in V1 (fp32 logits plus the top-k/top-p sort
  buffers): Qwen3-0.6B 5.56 GiB at 1024 × 151,936, gpt-oss-20b 7.38 GiB at 1024 × 201,088, Qwen3-235B on L40S
  1.40 GiB at 256 × 151,936 (llm-d-benchmark empirical-vllm-memory-results.md, vLLM 0.10.2 / 0.11.0). Logits are
  gathered, so this does not shrink with TP.
* **Forward activations** grow with ``max_num_batched_tokens`` × attention width / TP and are small next to it
  (0.1–0.2 GiB at 8,192 tokens for 4,096–8,192 wide models in the same table).
* **Non-torch memory** (CUDA context, NCCL, custom all-reduce buffers): 0.13–0.14 GiB at TP 1, 0.54–0.55 GiB at
  TP 2 in vLLM 0.11 on H100 (llm-d); 0.25 GiB at TP 1 in vLLM 0.19 (llm-d-planner validation logs) and about
  2 GiB per GPU at TP ≥ 2 in vLLM 0.19 logs (issue 15 of this project, from those logs).
* **CUDA graphs.** Up to vLLM 0.20 they are captured after the KV cache is allocated, outside
  ``gpu_memory_utilization`` (vLLM PR 21489's log; the llm-d rows add up to the budget without them). From 0.21 the
  profiler estimates them inside the budget ("CUDA graph memory profiling is enabled (default since v0.21.0)", PR
  30515 made it the default); published estimates are 0.17–0.36 GiB on small models and up to 3.45 GiB captured on
  Qwen3-235B TP 8, and vLLM issues 45178 / 53013 report over-estimates. The model budgets 1 GiB (?).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Bytes of sampler warm-up peak per (``max_num_seqs`` × vocabulary entry).
SAMPLER_BYTES_PER_LOGIT = 37.7
#: Forward-pass activation peak per batched token per unit of attention width (heads × head_dim), GiB.
FORWARD_GIB_PER_TOKEN_WIDTH = 0.2 / (8192 * 8192)
#: Vocabulary assumed for a model whose catalog entry does not give one (Llama 3's 128,256).
DEFAULT_VOCAB = 128_256


@dataclass(frozen=True)
class EngineMemoryProfile:
    """What one vLLM release line spends outside the KV cache."""

    since: tuple[int, int]
    """First release (major, minor) the profile applies to."""
    non_torch_gib: float
    """CUDA context and allocator overhead per GPU at TP 1."""
    non_torch_tp_gib: float
    """Per GPU at TP ≥ 2 (NCCL communicators, custom all-reduce buffers), instead of ``non_torch_gib``."""
    cuda_graphs_in_budget: bool
    """CUDA graph memory is taken out of ``gpu_memory_utilization`` (not captured outside it)."""
    cuda_graph_gib: float = 0.0
    """Budgeted CUDA graph memory when ``cuda_graphs_in_budget`` (and not ``--enforce-eager``)."""
    source: str = ""


PROFILES: tuple[EngineMemoryProfile, ...] = (
    EngineMemoryProfile(
        since=(0, 10),
        non_torch_gib=0.15,
        non_torch_tp_gib=0.6,
        cuda_graphs_in_budget=False,
        source="llm-d-benchmark empirical table, vLLM 0.10.2 / 0.11.0 on H100 and L40S",
    ),
    EngineMemoryProfile(
        since=(0, 19),
        non_torch_gib=0.25,
        non_torch_tp_gib=2.0,
        cuda_graphs_in_budget=False,
        source="llm-d-planner validation logs (vLLM 0.19, TP 1); issue 15 (about 2 GiB per GPU at TP ≥ 2)",
    ),
    EngineMemoryProfile(
        since=(0, 21),
        non_torch_gib=0.25,
        non_torch_tp_gib=2.0,
        cuda_graphs_in_budget=True,
        cuda_graph_gib=1.0,
        source="vLLM ≥ 0.21 logs: CUDA graph memory profiling on by default (PR 30515); 1 GiB budget (?)",
    ),
)


def _key(version: str) -> tuple[int, int]:
    parts = version.removeprefix("v").split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        raise ValueError(f"not a vLLM release: {version!r} — e.g. 0.19.0") from None


def profile_for(version: str) -> EngineMemoryProfile:
    """The profile of vLLM ``version`` (``0.19.0``): the newest line it belongs to. Releases older than the first
    profile get the first (V0-era engines profiled larger activation peaks — 9.37 GiB for Llama-3-8B on A100-40GB,
    vLLM issue 12330 — so their plans are optimistic); a version that is not ``major.minor…`` raises ValueError."""
    key = _key(version)
    fitting = [p for p in PROFILES if p.since <= key]
    return fitting[-1] if fitting else PROFILES[0]
