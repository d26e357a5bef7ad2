"""Plan of the ``litellm`` kind: the gateway pod on its (CPU) pool, and each route's backends resolved against the
config — a workload's Service URL, provider prefix and served model (:mod:`inferstack.plan.endpoints`), or an
external provider with its key's environment variable. The rule LITELLM-BACKEND reports what does not resolve."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from inferstack.catalog.versions import IMAGES
from inferstack.config.errors import did_you_mean
from inferstack.config.litellm import DatabaseMode, LiteLLMBackend, LiteLLMWorkloadConfig
from inferstack.config.model import InferstackConfig
from inferstack.config.workloads import SecretRef, WorkloadBase
from inferstack.plan import ResolvedPool, ResolvedWorkload, Role, workload_plan
from inferstack.plan.endpoints import NoEndpointError, endpoint_of
from inferstack.plan.names import server_service_account
from inferstack.plan.placement import pod_plan

#: The gateway's start: Prisma migrations against its database, then the proxy, seconds.
LITELLM_START_SECONDS = 300


@dataclass(frozen=True)
class ResolvedBackend:
    """One ``model_list`` entry."""

    route: str
    model: str
    """``litellm_params.model``: ``hosted_vllm/<served>``, ``openai/<served>``, ``ollama_chat/<tag>``…"""
    api_base: str | None
    api_key_env: str | None
    """The environment variable holding the provider's key (``os.environ/<name>``)."""
    api_key_secret: SecretRef | None
    rpm: int | None
    tpm: int | None


@dataclass(frozen=True)
class BackendProblem:
    path: str
    message: str
    fix: str


def _env_name(route: int, backend: int) -> str:
    return f"LITELLM_PROVIDER_KEY_{route}_{backend}"


def _workload(config: InferstackConfig, backend: LiteLLMBackend) -> list[WorkloadBase]:
    return [
        w
        for w in config.workloads
        if w.name == backend.workload and (backend.namespace is None or w.namespace == backend.namespace)
    ]


def _unresolved(
    config: InferstackConfig, gateway: LiteLLMWorkloadConfig, backend: LiteLLMBackend, path: str, names: list[str]
) -> BackendProblem:
    """Why ``backend`` names no workload, at the field that is wrong: it names the gateway itself, a workload of
    another namespace than its ``namespace``, or no workload (with the nearest name)."""
    valid = f"name one of {', '.join(names) or 'none'}"
    if backend.workload == gateway.name and backend.namespace in (None, gateway.namespace):
        return BackendProblem(
            f"{path}.workload",
            f"{backend.workload!r} is this gateway itself — a backend is a workload that serves the model",
            valid,
        )
    elsewhere = sorted({w.namespace for w in config.workloads if w.name == backend.workload and w is not gateway})
    if elsewhere:
        where = ", ".join(elsewhere)
        return BackendProblem(
            f"{path}.namespace",
            f"{backend.namespace!r} — {backend.workload!r} is in namespace {where}",
            f"set namespace: {where}" if len(elsewhere) == 1 else f"set namespace to one of {where}",
        )
    return BackendProblem(
        f"{path}.workload",
        f"{backend.workload!r} is not a workload of this config{did_you_mean(backend.workload, names)}",
        valid,
    )


def resolve_backends(
    config: InferstackConfig, workload: LiteLLMWorkloadConfig, index: int
) -> tuple[list[ResolvedBackend], list[BackendProblem]]:
    """Every backend of every route, and what keeps any from resolving (paths relative to the config)."""
    resolved: list[ResolvedBackend] = []
    problems: list[BackendProblem] = []
    names = sorted({w.name for w in config.workloads if w is not workload})
    for r, route in enumerate(workload.routes):
        for b, backend in enumerate(route.backends):
            path = f"workloads[{index}].routes[{r}].backends[{b}]"
            if backend.provider is not None:
                provider = backend.provider
                env = _env_name(r, b)
                resolved.append(
                    ResolvedBackend(
                        route.name,
                        provider.model,
                        provider.api_base,
                        env,
                        provider.api_key_secret,
                        backend.rpm,
                        backend.tpm,
                    )
                )
                continue
            matches = [w for w in _workload(config, backend) if w is not workload]
            if not matches:
                problems.append(_unresolved(config, workload, backend, path, names))
                continue
            if len(matches) > 1:
                problems.append(
                    BackendProblem(
                        f"{path}.namespace",
                        f"{backend.workload!r} names workloads in {', '.join(w.namespace for w in matches)}",
                        "set namespace",
                    )
                )
                continue
            target = matches[0]
            try:
                endpoint = endpoint_of(target)
            except NoEndpointError as error:
                problems.append(
                    BackendProblem(
                        f"{path}.workload",
                        f"{target.name!r} ({target.kind}): {error}",
                        "route to a workload with an OpenAI-compatible API",
                    )
                )
                continue
            model = backend.model or (endpoint.models[0] if endpoint.models else None)
            if model is None:
                problems.append(
                    BackendProblem(
                        f"{path}.model",
                        f"{target.kind} workload {target.name!r} does not say its served model name",
                        "set model (the name it serves)",
                    )
                )
                continue
            if endpoint.models and model not in endpoint.models:
                problems.append(
                    BackendProblem(
                        f"{path}.model",
                        f"{model!r} is not served by {target.name!r}",
                        f"use one of {', '.join(endpoint.models)}",
                    )
                )
                continue
            resolved.append(
                ResolvedBackend(
                    route.name, f"{endpoint.provider}/{model}", endpoint.api_base, None, None, backend.rpm, backend.tpm
                )
            )
    return resolved, problems


def _operators(workload: LiteLLMWorkloadConfig) -> frozenset[str]:
    needed = set()
    if workload.scaling is not None:
        needed.add("metrics-server")
    if workload.database.mode is DatabaseMode.DEPLOY:
        needed.add("gp3-storage")
    return frozenset(needed)


def plan_litellm(
    config: InferstackConfig, pools: Mapping[str, ResolvedPool], index: int, workload: WorkloadBase
) -> ResolvedWorkload:
    assert isinstance(workload, LiteLLMWorkloadConfig)
    pod = pod_plan(config, workload, ranks=0, startup_estimate_seconds=LITELLM_START_SECONDS)
    server = Role(name="server", pod=pod, service_account=server_service_account(workload), reads_bucket=False)
    return workload_plan(
        config,
        pools,
        index,
        workload,
        roles={"server": server},
        image=IMAGES["litellm"],
        operators=_operators(workload),
        details=resolve_backends(config, workload, index),
    )
