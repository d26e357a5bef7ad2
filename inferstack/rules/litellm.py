"""Rules of the ``litellm`` kind: every route's backend resolves — a workload of this config that serves an
OpenAI-compatible API and the model named — and the gateway pod schedules."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.litellm import LiteLLMWorkloadConfig
from inferstack.config.model import InferstackConfig
from inferstack.plan import resolve
from inferstack.rules import serving
from inferstack.rules.base import Finding, Rule

BACKEND = "LITELLM-BACKEND"


def check_backends(config: InferstackConfig) -> Iterator[Finding]:
    """A route whose backend workload does not exist (or serves no OpenAI API, or not that model) would answer
    every request with an error."""
    for resolved in resolve(config).workloads:
        if not isinstance(resolved.config, LiteLLMWorkloadConfig):
            continue
        _, problems = resolved.details
        for problem in problems:
            yield Finding(rule=BACKEND, path=problem.path, message=problem.message, fix=problem.fix)


RULES = (
    Rule(id=BACKEND, title="Every gateway route reaches a serving workload", check=check_backends),
    *(rule for rule in serving.RULES if rule.id == serving.SCHEDULING),
)
