"""Architecture facts of the models users deploy most, for synth-time sizing (weights, KV cache).

Source: ../shared/facts/models.md (config.json / model cards / official code, each row citing its keys there).
``params`` are the derived totals of §3; ``shipped_weights_gib`` is the as-shipped size where the checkpoint is
not bf16 (FP8, MXFP4). ``gated`` is True when the Hugging Face repo needs an accepted licence (a token).
A model that is not here can be described inline in the config (``workloads[].model.architecture``).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace

GIB = 1024**3
#: Files of a checkpoint a tokenizer needs — Hugging Face tokenizers and configs (``*.json``), sentencepiece
#: (``*.model``), Mistral's tekken, tiktoken — never the weights (``*.safetensors``, ``*.bin``, ``*.pt``, ``*.gguf``).
#: The benchmark copies only these, and its role may read only these (S3 object patterns).
TOKENIZER_FILES = ("*.json", "tokenizer*", "*.model", "*.tiktoken", "tekken*")


@dataclass(frozen=True, kw_only=True)
class ModelArchitecture:
    """What sizing needs to know about one model (units in the names)."""

    id: str
    params: int
    """Total parameters (MoE: all experts)."""
    layers: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    max_context: int
    """``max_position_embeddings`` (with the scaling the checkpoint ships)."""
    active_params: int | None = None
    """Parameters per token for MoE models."""
    shipped_weights_gib: float | None = None
    """As-shipped weights when the checkpoint is not bf16 (FP8, MXFP4). Default: params × 2 bytes."""
    mla_latent_dim: int | None = None
    """MLA (DeepSeek): kv_lora_rank + qk_rope_head_dim — one latent per layer, replicated on every TP rank."""
    hidden_size: int | None = None
    """Model width: with ``vocab_size``, the embedding and LM-head parameters a quantized checkpoint keeps in 16 bit.
    Default unknown (all parameters take the quantized width)."""
    vocab_size: int | None = None
    """Vocabulary: the sampler warm-up's logits. Default unknown (Llama 3's 128,256 is assumed)."""
    tied_embeddings: bool = False
    """``tie_word_embeddings``: the LM head is the embedding matrix. Default False."""
    load_overhead: float = 1.0
    """Loaded weights ÷ shipped weights (the engine keeps some tensors wider than shipped). Default 1."""
    sliding_window: int | None = None
    sliding_layers: int = 0
    """How many of ``layers`` use the sliding window (the rest are full attention)."""
    gated: bool = False
    """The Hugging Face repo is gated: downloads need a token of an account that accepted the licence."""
    tool_call_parser: str | None = None
    """vLLM ``--tool-call-parser`` for this family."""
    mistral_format: bool = False
    """Mistral-format checkpoint: vLLM wants ``--tokenizer-mode/--config-format/--load-format mistral``."""
    sources: str = ""

    @property
    def weights_gib(self) -> float:
        return self.shipped_weights_gib if self.shipped_weights_gib is not None else self.params * 2 / GIB

    @property
    def weights_bytes(self) -> float:
        return self.weights_gib * GIB

    @property
    def is_mla(self) -> bool:
        return self.mla_latent_dim is not None


def _m(model_id: str, params: int, layers: int, nh: int, kv: int, hd: int, ctx: int, **kw: object) -> ModelArchitecture:
    return ModelArchitecture(
        id=model_id, params=params, layers=layers, attention_heads=nh, kv_heads=kv, head_dim=hd, max_context=ctx, **kw
    )  # type: ignore[arg-type]


_LLAMA = {"gated": True, "tool_call_parser": "llama3_json"}
_MISTRAL = {"gated": True, "tool_call_parser": "mistral", "mistral_format": True}
_QWEN = {"tool_call_parser": "hermes"}
#: vLLM loads gpt-oss's MXFP4 checkpoint at 13.47 GiB (20b, 12.8 shipped) and 64.38 GiB (120b, 60.8 shipped) on
#: Hopper — attention, router and embeddings in bf16, the experts laid out for its kernels (llm-d-benchmark
#: empirical-vllm-memory-results.md, vLLM 0.11.0): 1.052 and 1.059, rounded up. (vLLM 0.10.1's Marlin path took
#: 65.97 GiB, vLLM issue 23278.)
GPT_OSS_LOAD_OVERHEAD = 1.06

# DeepSeek V3/R1: 61 layers of MLA (kv_lora_rank 512 + qk_rope_head_dim 64), weights shipped in FP8.
_DEEPSEEK_V3 = _m(
    "deepseek-ai/DeepSeek-V3",
    671_026_419_200,
    61,
    128,
    128,
    192,
    163_840,
    active_params=37_552_297_472,
    shipped_weights_gib=627.0,
    mla_latent_dim=576,
    tool_call_parser="deepseek_v3",
    sources="AIC, PAD",
)

_ROWS = (
    _m(
        "meta-llama/Llama-3.2-1B-Instruct",
        1_235_814_400,
        16,
        32,
        8,
        64,
        131_072,
        **_LLAMA,
        sources="TT-1B, LM-SKU, LM-MC32",
    ),
    _m(
        "meta-llama/Llama-3.2-3B-Instruct",
        3_212_749_824,
        28,
        24,
        8,
        128,
        131_072,
        **_LLAMA,
        sources="TT-3B, LM-SKU, LM-MC32",
    ),
    _m(
        "meta-llama/Llama-3.1-8B-Instruct",
        8_030_261_248,
        32,
        32,
        8,
        128,
        131_072,
        **_LLAMA,
        sources="TT-8B, AIC, LM-SKU",
    ),
    _m(
        "meta-llama/Llama-3.1-70B-Instruct",
        70_553_706_496,
        80,
        64,
        8,
        128,
        131_072,
        **_LLAMA,
        sources="TT-70B, AIC, LM-SKU",
    ),
    _m(
        "meta-llama/Llama-3.3-70B-Instruct",
        70_553_706_496,
        80,
        64,
        8,
        128,
        131_072,
        **_LLAMA,
        sources="AIC-L33, LM-SKU, LM-MC33",
    ),
    # 405B: the current HF config has 8 KV heads (a 16-head checkpoint doubles KV; see facts §4.1).
    _m(
        "meta-llama/Llama-3.1-405B-Instruct",
        405_853_388_800,
        126,
        128,
        8,
        128,
        131_072,
        **_LLAMA,
        sources="AIC, LM-SKU, LIT-1942",
    ),
    _m(
        "mistralai/Mistral-7B-Instruct-v0.3",
        7_248_023_552,
        32,
        32,
        8,
        128,
        32_768,
        **_MISTRAL,
        sources="HF-M7B, TT-M7B",
    ),
    _m(
        "mistralai/Ministral-8B-Instruct-2410",
        8_019_808_256,
        36,
        32,
        8,
        128,
        32_768,
        **_MISTRAL,
        sources="HF-MIN8-CFG, HF-MIN8-CARD",
    ),
    # Ministral 3 ships FP8 (~8.3 GiB text + ~0.4B bf16 vision encoder ≈ 0.8 GiB); 256k context via YaRN.
    _m(
        "mistralai/Ministral-3-8B-Instruct-2512",
        8_489_553_920,
        34,
        32,
        8,
        128,
        262_144,
        **_MISTRAL,
        shipped_weights_gib=9.1,
        sources="TF-M3, NV-MB-M3, HF-MIN3-CARD",
    ),
    _m(
        "mistralai/Mistral-Small-24B-Instruct-2501",
        23_572_403_200,
        40,
        32,
        8,
        128,
        32_768,
        **_MISTRAL,
        sources="HF-MS24-CFG, HF-MS24-README",
    ),
    _m(
        "mistralai/Mixtral-8x7B-Instruct-v0.1",
        46_702_792_704,
        32,
        32,
        8,
        128,
        32_768,
        **_MISTRAL,
        active_params=12_879_925_248,
        sources="AIC, LIT, HF-MIXTRAL-README",
    ),
    _m("Qwen/Qwen2.5-7B-Instruct", 7_615_616_512, 28, 28, 4, 128, 32_768, **_QWEN, sources="TT-Q7B, PAD"),
    _m("Qwen/Qwen2.5-72B-Instruct", 72_706_203_648, 80, 64, 8, 128, 32_768, **_QWEN, sources="PAD, HF-Q72-CFG"),
    _m("Qwen/Qwen3-8B", 8_190_735_360, 36, 32, 8, 128, 40_960, **_QWEN, sources="AIC, QWEN3-CARD"),
    _m("Qwen/Qwen3-14B", 14_768_307_200, 40, 40, 8, 128, 40_960, **_QWEN, sources="LIT, HF-NOUS14"),
    _m("Qwen/Qwen3-32B", 32_762_123_264, 64, 64, 8, 128, 40_960, **_QWEN, sources="AIC"),
    _m(
        "Qwen/Qwen3-30B-A3B",
        30_532_122_624,
        48,
        32,
        4,
        128,
        40_960,
        **_QWEN,
        active_params=3_353_032_704,
        sources="AIC",
    ),
    _m(
        "Qwen/Qwen3-235B-A22B",
        235_093_634_560,
        94,
        64,
        4,
        128,
        40_960,
        **_QWEN,
        active_params=22_190_763_520,
        sources="AIC",
    ),
    _DEEPSEEK_V3,
    # DeepSeek-R1 is a post-training of DeepSeek-V3: the same architecture (facts §2b).
    replace(_DEEPSEEK_V3, id="deepseek-ai/DeepSeek-R1"),
    _m(
        "deepseek-ai/DeepSeek-V2-Lite-Chat",
        15_706_485_888,
        27,
        16,
        16,
        192,
        163_840,
        active_params=2_661_151_872,
        mla_latent_dim=576,
        sources="HF-V2L-CFG, PAD",
    ),
    _m(
        "deepseek-ai/DeepSeek-R1-Distill-Llama-8B",
        8_030_261_248,
        32,
        32,
        8,
        128,
        131_072,
        sources="HF-R1D8-CFG, LIT, PAD",
    ),
    _m(
        "google/gemma-2-9b-it",
        9_241_705_984,
        42,
        16,
        8,
        256,
        8_192,
        gated=True,
        sliding_window=4_096,
        sliding_layers=21,
        sources="GH-G2-CFG, GEM, LIT",
    ),
    _m(
        "google/gemma-3-27b-it",
        27_009_346_304,
        62,
        32,
        16,
        128,
        131_072,
        gated=True,
        sliding_window=1_024,
        sliding_layers=52,
        sources="GEM, LIT",
    ),
    _m("microsoft/phi-4", 14_659_507_200, 40, 40, 10, 128, 16_384, sources="TT-PHI4, LIT"),
    _m(
        "openai/gpt-oss-20b",
        20_914_757_184,
        24,
        64,
        8,
        64,
        131_072,
        active_params=4_187_440_704,
        shipped_weights_gib=12.8,
        load_overhead=GPT_OSS_LOAD_OVERHEAD,
        sliding_window=128,
        sliding_layers=12,
        tool_call_parser="openai",
        sources="AIC, OAI-CARD",
    ),
    _m(
        "openai/gpt-oss-120b",
        116_829_156_672,
        36,
        64,
        8,
        64,
        131_072,
        active_params=5_711_982_912,
        shipped_weights_gib=60.8,
        load_overhead=GPT_OSS_LOAD_OVERHEAD,
        sliding_window=128,
        sliding_layers=18,
        tool_call_parser="openai",
        sources="AIC, OAI-CARD",
    ),
)

#: ``hidden_size``, ``vocab_size`` and ``tie_word_embeddings`` of each row (../shared/facts/models.md §3, columns
#: H and vocab; "tied embeddings" where the table says so; Gemma 2/3 tie theirs (``Gemma*ForCausalLM``
#: ``_tied_weights_keys``, config ``tie_word_embeddings`` default true).
_EMBEDDINGS: dict[str, tuple[int, int, bool]] = {
    "meta-llama/Llama-3.2-1B-Instruct": (2048, 128_256, True),
    "meta-llama/Llama-3.2-3B-Instruct": (3072, 128_256, True),
    "meta-llama/Llama-3.1-8B-Instruct": (4096, 128_256, False),
    "meta-llama/Llama-3.1-70B-Instruct": (8192, 128_256, False),
    "meta-llama/Llama-3.3-70B-Instruct": (8192, 128_256, False),
    "meta-llama/Llama-3.1-405B-Instruct": (16384, 128_256, False),
    "mistralai/Mistral-7B-Instruct-v0.3": (4096, 32_768, False),
    "mistralai/Ministral-8B-Instruct-2410": (4096, 131_072, False),
    "mistralai/Ministral-3-8B-Instruct-2512": (4096, 131_072, False),
    "mistralai/Mistral-Small-24B-Instruct-2501": (5120, 131_072, False),
    "Qwen/Qwen2.5-7B-Instruct": (3584, 152_064, False),
    "Qwen/Qwen2.5-72B-Instruct": (8192, 152_064, False),
    "Qwen/Qwen3-8B": (4096, 151_936, False),
    "Qwen/Qwen3-14B": (5120, 151_936, False),
    "Qwen/Qwen3-32B": (5120, 151_936, False),
    "deepseek-ai/DeepSeek-R1-Distill-Llama-8B": (4096, 128_256, False),
    "google/gemma-2-9b-it": (3584, 256_000, True),
    "google/gemma-3-27b-it": (5376, 262_144, True),
    "microsoft/phi-4": (5120, 100_352, False),
    "mistralai/Mixtral-8x7B-Instruct-v0.1": (4096, 32_000, False),
    "Qwen/Qwen3-30B-A3B": (2048, 151_936, False),
    "Qwen/Qwen3-235B-A22B": (4096, 151_936, False),
    "deepseek-ai/DeepSeek-V3": (7168, 129_280, False),
    "deepseek-ai/DeepSeek-R1": (7168, 129_280, False),
    "deepseek-ai/DeepSeek-V2-Lite-Chat": (2048, 102_400, False),
    "openai/gpt-oss-20b": (2880, 201_088, False),
    "openai/gpt-oss-120b": (2880, 201_088, False),
}


def _with_embeddings(row: ModelArchitecture) -> ModelArchitecture:
    if row.id not in _EMBEDDINGS:
        return row
    hidden, vocab, tied = _EMBEDDINGS[row.id]
    return replace(row, hidden_size=hidden, vocab_size=vocab, tied_embeddings=tied)


MODELS: dict[str, ModelArchitecture] = {row.id: _with_embeddings(row) for row in _ROWS}


def near_model_ids(model_id: str, limit: int = 3) -> list[str]:
    return difflib.get_close_matches(model_id, MODELS.keys(), n=limit, cutoff=0.5)
