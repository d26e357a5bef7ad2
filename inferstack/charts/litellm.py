"""LiteLLMChart: the ``litellm`` kind — the gateway's config built from the plan (each route's backends: the app's
Service URLs and served names, external providers by Secret), then the proxy (:class:`~inferstack.constructs.
litellm.LiteLLMGateway`) with its Secrets referenced and, for ``database.mode: deploy``, its Postgres."""

from __future__ import annotations

from typing import Any

from inferstack.catalog.kubernetes import GP3_STORAGE_CLASS
from inferstack.catalog.versions import IMAGES
from inferstack.charts.engine import engine_placement
from inferstack.charts.workload import StorageRefs, WorkloadChart
from inferstack.config.litellm import DatabaseMode, LiteLLMWorkloadConfig
from inferstack.constructs.litellm import LiteLLMGateway, LiteLLMGatewayProps, PostgresProps, SecretEnv
from inferstack.constructs.validation import PropError
from inferstack.plan import ResolvedWorkload
from inferstack.plan.litellm import BackendProblem, ResolvedBackend

#: Where the image's Prisma CLI and engines were generated at build (as root: Dockerfile.database ``prisma
#: generate``): prisma-client-py derives its versioned cache paths from PRISMA_HOME_DIR (default HOME), and the pod's
#: HOME is an emptyDir — so the home is named (src/prisma/_config.py ``Config.from_base``).
PRISMA_ENV = {"PRISMA_HOME_DIR": "/root", "PRISMA_NODEENV_CACHE_DIR": "/root/.cache/prisma-python/nodeenv"}
#: What a self-hosted backend gets as ``api_key`` (they check none; LiteLLM's openai provider wants one set).
NO_KEY = "EMPTY"


def gateway_config(
    workload: LiteLLMWorkloadConfig, resolved: tuple[list[ResolvedBackend], list[BackendProblem]]
) -> tuple[dict[str, Any], list[SecretEnv]]:
    """``config.yaml`` and the Secret-backed variables it names, from the plan's resolved backends."""
    backends, problems = resolved
    if problems:  # rule LITELLM-BACKEND reports each with its fix
        raise PropError(f"{problems[0].path}: {problems[0].message} — {problems[0].fix} (rule LITELLM-BACKEND)")
    secrets = [
        SecretEnv(name="LITELLM_MASTER_KEY", secret=workload.master_key_secret.name, key=workload.master_key_secret.key)
    ]
    model_list = []
    for backend in backends:
        params: dict[str, Any] = {"model": backend.model}
        if backend.api_base:
            params["api_base"] = backend.api_base
        if backend.api_key_env and backend.api_key_secret:
            params["api_key"] = f"os.environ/{backend.api_key_env}"
            secrets.append(
                SecretEnv(name=backend.api_key_env, secret=backend.api_key_secret.name, key=backend.api_key_secret.key)
            )
        elif not backend.model.startswith("ollama"):
            params["api_key"] = NO_KEY
        if backend.rpm:
            params["rpm"] = backend.rpm
        if backend.tpm:
            params["tpm"] = backend.tpm
        model_list.append({"model_name": backend.route, "litellm_params": params})
    router: dict[str, Any] = {"routing_strategy": workload.routing_strategy.value, "num_retries": workload.num_retries}
    fallbacks = [{route.name: list(route.fallbacks)} for route in workload.routes if route.fallbacks]
    if fallbacks:
        router["fallbacks"] = fallbacks
    settings: dict[str, Any] = {}
    if workload.monitoring:
        settings["callbacks"] = ["prometheus"]
    limits = {
        k: v for k, v in (("rpm_limit", workload.key_limits.max_rpm), ("tpm_limit", workload.key_limits.max_tpm)) if v
    }
    if limits:
        settings["upperbound_key_generate_params"] = limits
    general: dict[str, Any] = {"master_key": "os.environ/LITELLM_MASTER_KEY"}
    rendered: dict[str, Any] = {"model_list": model_list, "router_settings": router}
    if settings:
        rendered["litellm_settings"] = settings
    rendered["general_settings"] = general
    database = workload.database
    if workload.salt_key_secret is not None:
        secrets.append(
            SecretEnv(name="LITELLM_SALT_KEY", secret=workload.salt_key_secret.name, key=workload.salt_key_secret.key)
        )
    if database.mode is DatabaseMode.EXISTING and database.url_secret is not None:
        secrets.append(SecretEnv(name="DATABASE_URL", secret=database.url_secret.name, key=database.url_secret.key))
    if database.mode is DatabaseMode.DEPLOY and database.password_secret is not None:
        secrets.append(
            SecretEnv(name="DATABASE_PASSWORD", secret=database.password_secret.name, key=database.password_secret.key)
        )
    return rendered, secrets


class LiteLLMChart(WorkloadChart):
    """The ``litellm`` kind: the gateway's ConfigMap, proxy, HPA and (optionally) Postgres."""

    gateway: LiteLLMGateway

    def serve(self, resolved: ResolvedWorkload, refs: StorageRefs) -> None:
        workload = resolved.config
        assert isinstance(workload, LiteLLMWorkloadConfig)
        rendered, secrets = gateway_config(workload, resolved.details)
        database = workload.database
        postgres = None
        if database.mode is DatabaseMode.DEPLOY and database.password_secret is not None:
            postgres = PostgresProps(
                image=IMAGES["postgres"],
                password=SecretEnv(
                    name="POSTGRES_PASSWORD", secret=database.password_secret.name, key=database.password_secret.key
                ),
                storage_gib=database.storage_gib,
                storage_class=GP3_STORAGE_CLASS,
            )
        scaling = workload.scaling
        self.gateway = LiteLLMGateway(
            self,
            "litellm",
            LiteLLMGatewayProps(
                image=resolved.image,
                config=rendered,
                secret_env=secrets,
                placement=engine_placement(self, resolved, refs),
                env={**PRISMA_ENV, "USE_PRISMA_MIGRATE": "True"} if database.mode is not DatabaseMode.NONE else {},
                hpa=(scaling.min_replicas, scaling.max_replicas, scaling.cpu_utilization) if scaling else None,
                postgres=postgres,
            ),
        )
