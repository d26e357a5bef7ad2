"""A workload's needs held against what its image contains (:mod:`inferstack.catalog.images`):

* IMAGE-NIXL-LIBFABRIC — NIXL's LIBFABRIC backend (prefill/decode over EFA) needs EFA's libfabric in the image:
  NIXL's wheel leaves libfabric out, so in an image without it the plugin cannot load and the KV transfer fails.
* IMAGE-ACCELERATOR — a Neuron image on a GPU pool, or a CUDA image on a CPU or Neuron pool, cannot run its engine.
* IMAGE-MULTINODE-FLAGS — ``vllm_multinode`` renders vLLM's own multi-node flags (``--nnodes``, ``--node-rank``,
  ``--master-addr``, ``--master-port``, ``--headless``); the image's vLLM must have them.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.catalog.engine_flags import VLLM_VERSIONS, vllm_flags
from inferstack.catalog.images import image_facts
from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.model import InferstackConfig
from inferstack.config.ray_serve import NixlBackend
from inferstack.plan import resolve
from inferstack.rules.base import Finding, Rule
from inferstack.rules.suggestions import register_viability_checks

NIXL_LIBFABRIC, ACCELERATOR, MULTINODE_FLAGS = "IMAGE-NIXL-LIBFABRIC", "IMAGE-ACCELERATOR", "IMAGE-MULTINODE-FLAGS"
#: The flags the ``vllm_multinode`` chart renders (charts/vllm_multinode.py).
VLLM_MULTINODE_FLAGS = ("--nnodes", "--node-rank", "--master-addr", "--master-port", "--headless")


def _version(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def _libfabric_backends(workload: object) -> tuple[NixlBackend, ...]:
    """The NIXL backends a prefill/decode split asks for (ray_serve ``prefill_decode``, dynamo disaggregated)."""
    pd = getattr(workload, "prefill_decode", None)
    if pd is not None:
        return tuple(pd.kv_backends)
    if getattr(workload, "kind", None) == "dynamo" and getattr(workload, "mode", None) == "disaggregated":
        return tuple(workload.kv_backends)  # type: ignore[attr-defined]
    return ()


def check_nixl_libfabric(config: InferstackConfig) -> Iterator[Finding]:
    for resolved in resolve(config).workloads:
        if NixlBackend.LIBFABRIC not in _libfabric_backends(resolved.config):
            continue
        facts = image_facts(resolved.image)
        if facts is not None and facts.libfabric:
            continue
        what = "is not catalogued, so its libfabric is unconfirmed" if facts is None else "has no libfabric"
        # a dynamo runtime image follows efa (the -efa build carries libfabric) unless the workload names its own
        dynamo = resolved.kind == "dynamo"
        own = getattr(resolved.config, "image", None) is not None
        if dynamo and own:
            fix = (
                "use an -efa build of the runtime (…/ai-dynamo/vllm-runtime:<release>-efa) or kv_backends without "
                "LIBFABRIC"
            )
        elif dynamo:
            fix = "set efa: true (the vllm-runtime -efa build has libfabric) or kv_backends without LIBFABRIC"
        else:
            fix = (
                "leave image unset (the default for LIBFABRIC is the AWS Ray LLM DLC, which has EFA's libfabric) "
                "or use an image built with the EFA installer"
            )
        yield Finding(
            rule=NIXL_LIBFABRIC,
            path=f"workloads[{resolved.index}].{'efa' if dynamo and not own else 'image'}",
            message=f"image {resolved.image} {what}: NIXL's LIBFABRIC plugin needs EFA's libfabric, which NIXL's "
            "wheel does not carry — the prefill/decode KV transfer cannot start",
            fix=fix,
        )


def check_accelerator(config: InferstackConfig) -> Iterator[Finding]:
    for resolved in resolve(config).workloads:
        facts = image_facts(resolved.image)
        if facts is None or facts.engine is None:
            continue
        pool = resolved.pool.accelerator
        if pool in facts.runs_on:
            continue
        runs = ", ".join(sorted(kind.value for kind in facts.runs_on))
        yield Finding(
            rule=ACCELERATOR,
            path=f"workloads[{resolved.index}].pool",
            message=f"image {resolved.image} runs on {runs} nodes, but pool {resolved.pool.name!r} is "
            f"{pool.value}: its engine cannot use that hardware",
            fix=f"use a pool of {runs} instances, or an image built for {pool.value}",
        )


def check_multinode_flags(config: InferstackConfig) -> Iterator[Finding]:
    oldest = min((v for v in VLLM_VERSIONS if _has_flags(v)), key=_version)
    for resolved in resolve(config).workloads:
        if resolved.kind != "vllm_multinode" or resolved.pool.accelerator is not AcceleratorKind.NVIDIA:
            continue  # MULTINODE-ACCELERATOR refuses the other pools (their default image is not a multi-node one)
        facts = image_facts(resolved.image)
        version = facts.vllm_version if facts is not None else None
        if version is None:
            continue  # unknown image: ENGINE-FLAGS-UNVERIFIED / MULTINODE-EFA-IMAGE speak for it
        if version in VLLM_VERSIONS:
            missing = [f for f in VLLM_MULTINODE_FLAGS if vllm_flags(version).spec(f) is None]
            if not missing:
                continue
            message = f"vLLM {version} (image {resolved.image}) has no {', '.join(missing)}"
        elif _version(version) < _version(oldest):
            message = (
                f"image {resolved.image} runs vLLM {version}, older than the oldest release known to have vLLM's "
                f"multi-node flags {', '.join(VLLM_MULTINODE_FLAGS)} ({oldest}, the oldest vendored flag list)"
            )
        else:
            continue
        yield Finding(
            rule=MULTINODE_FLAGS,
            path=f"workloads[{resolved.index}].engine.image",
            message=message + ": the leader and the workers would exit on an unknown argument",
            fix="leave engine.image unset (the default vLLM image) or use a vLLM release ≥ " + oldest,
        )


def _has_flags(version: str) -> bool:
    return all(vllm_flags(version).spec(flag) is not None for flag in VLLM_MULTINODE_FLAGS)


RULES = (
    Rule(id=NIXL_LIBFABRIC, title="NIXL's LIBFABRIC backend needs libfabric in the image", check=check_nixl_libfabric),
    Rule(id=ACCELERATOR, title="The image is built for the pool's accelerator", check=check_accelerator),
    Rule(id=MULTINODE_FLAGS, title="vLLM's multi-node flags exist in the image's vLLM", check=check_multinode_flags),
)

# a pool whose hardware the image cannot use (a CPU pool for a CUDA image) rejects a suggestion too
register_viability_checks(check_accelerator)
