"""Synth-time sizing of vLLM-style engines: weights, KV cache, budget, tokens, concurrency (see DESIGN.md)."""

from inferstack.sizing.model import SizingInput, SizingResult, size

__all__ = ["SizingInput", "SizingResult", "size"]
