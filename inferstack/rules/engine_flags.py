"""ENGINE-FLAGS-UNVERIFIED: ``engine.extra_args`` of a workload whose engine image carries a vLLM, SGLang or TGI
release inferstack has no flag list for cannot be checked; the flags are passed as written (a warning, so it is
seen).

Flags of catalogued releases are checked when the config is read (an unknown flag is a config error naming the
nearest spellings); this rule covers what that check cannot see.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.catalog.engine_flags import VLLM_VERSIONS
from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.kinds import kind_of
from inferstack.config.model import InferstackConfig
from inferstack.config.sglang import SglangWorkloadConfig
from inferstack.config.tgi import TgiWorkloadConfig
from inferstack.config.workloads import VllmWorkloadConfig
from inferstack.rules.base import Finding, Rule, Severity

RULE_ID = "ENGINE-FLAGS-UNVERIFIED"


def check(config: InferstackConfig) -> Iterator[Finding]:
    for index, workload in enumerate(config.workloads):
        engine = kind_of(workload).unchecked_flags
        if isinstance(workload, SglangWorkloadConfig | TgiWorkloadConfig) and workload.flags_version is not None:
            engine = None  # checked against the release's vendored list when the config was read
        extra = getattr(getattr(workload, "engine", None), "extra_args", ())
        custom = getattr(workload, "image", None)
        if engine is not None and isinstance(custom, str):
            engine = f"{engine.split()[0]} (image {custom})"
        if engine is not None and extra:
            yield Finding(
                rule=RULE_ID,
                path=f"workloads[{index}].engine.extra_args",
                message=f"inferstack has no flag list of {engine}, so these flags are passed unchecked (a misspelt "
                "flag stops the server at start)",
                fix="use the typed engine fields where one exists, or accept this warning",
                severity=Severity.WARNING,
            )
            continue
        if not isinstance(workload, VllmWorkloadConfig):
            continue
        accelerator = config.pool(workload.pool).accelerator
        if not workload.engine.extra_args or workload.flags_version(accelerator) is not None:
            continue
        if accelerator is AcceleratorKind.NEURON:
            continue  # NEURON-STACK says why Neuron extra_args are unchecked
        yield Finding(
            rule=RULE_ID,
            path=f"workloads[{index}].engine.extra_args",
            message=f"image {workload.image(accelerator)} runs a vLLM release inferstack has no flag list for, "
            "so these flags are passed unchecked (a misspelt flag stops the server at start)",
            fix=f"use a vllm/vllm-openai image of a vendored release ({', '.join(VLLM_VERSIONS)}), or accept this "
            "warning",
            severity=Severity.WARNING,
        )


RULE = Rule(id=RULE_ID, title="Engine flags are checked against the engine's release", check=check)
RULES = (RULE,)
