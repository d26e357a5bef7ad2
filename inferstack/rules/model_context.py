"""MODEL-CONTEXT: a vLLM engine's ``max_model_len`` is at most the model's context (``max_position_embeddings``).

vLLM refuses a longer one at start — ``ValueError: User-specified max_model_len (…) is greater than the derived
max_model_len (max_position_embeddings=…)``, raised by ``_get_and_verify_max_len`` (which file holds it at 0.31 was
not confirmed offline (?)) — unless ``VLLM_ALLOW_LONG_MAX_MODEL_LEN=1``, and then the model attends past what it was
trained on. A RoPE-scaled context (YaRN through ``--hf-overrides``) is
the one case to acknowledge this rule for.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.model import InferstackConfig
from inferstack.plan.served import engines
from inferstack.rules.base import Finding, Rule

RULE_ID = "MODEL-CONTEXT"


def check(config: InferstackConfig) -> Iterator[Finding]:
    for path, served in engines(config):
        length, context = served.engine.max_model_len, served.model.arch.max_context
        if length is not None and length > context:
            yield Finding(
                rule=RULE_ID,
                path=f"{path}.engine.max_model_len",
                message=f"{length:,} tokens is longer than {served.model.id}'s context of {context:,} "
                "(max_position_embeddings): vLLM refuses it at start",
                fix=f"set max_model_len to at most {context:,} (or leave it unset), or acknowledge MODEL-CONTEXT "
                "with the RoPE scaling that extends the context",
            )


RULE = Rule(id=RULE_ID, title="max_model_len is within the model's context", check=check)
RULES = (RULE,)
