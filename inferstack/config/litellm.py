"""Kind ``litellm``: the LiteLLM proxy as the one OpenAI-compatible gateway in front of the app's own workloads
(their Service URLs taken from the plan) and, by Secret reference, external providers — routes (``model_list``
groups), routing strategy, retries, fallbacks between routes, per-backend and per-key rate limits, the master key,
and its Postgres for virtual keys, teams and spend (an existing database, or one the app deploys)."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from inferstack.config.base import StrictModel, refuse_unread
from inferstack.config.engine import ResourcesConfig
from inferstack.config.types import KubernetesName, ServiceName
from inferstack.config.workloads import ModelConfig, SecretRef, WorkloadBase

_ROUTE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$")
#: An external provider's model as LiteLLM names it: ``<provider>/<model>`` (``openai/gpt-4o``, ``bedrock/…``).
_PROVIDER_MODEL = re.compile(r"^[a-z0-9_]+/[A-Za-z0-9._:/@-]+$")


class RoutingStrategy(StrEnum):
    """``router_settings.routing_strategy`` of LiteLLM."""

    SIMPLE_SHUFFLE = "simple-shuffle"
    """Random by rpm/tpm weight. LiteLLM's default."""
    LEAST_BUSY = "least-busy"
    USAGE_BASED = "usage-based-routing-v2"
    """Below each backend's rpm/tpm (shared across replicas only through Redis)."""
    LATENCY_BASED = "latency-based-routing"


class ExternalProvider(StrictModel):
    """A hosted model outside the cluster, its API key in a Secret."""

    model: str
    """LiteLLM's ``<provider>/<model>``, e.g. ``openai/gpt-4o-mini``."""
    api_key_secret: SecretRef
    """Secret key holding the provider's API key (passed as ``os.environ/…``, never in the config map)."""
    api_base: str | None = Field(default=None, pattern=r"^https://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~/-]*)?$")
    """The provider's endpoint, when not its default (https only). Default: LiteLLM's for the provider."""

    @field_validator("model")
    @classmethod
    def _model(cls, value: str) -> str:
        if not _PROVIDER_MODEL.match(value):
            raise PydanticCustomError(
                "provider_model", "not a LiteLLM model — '<provider>/<model>', e.g. openai/gpt-4o"
            )
        return value


class LiteLLMBackend(StrictModel):
    """One deployment of a route: a workload of this config, or an external provider."""

    workload: ServiceName | None = None
    """Name of a workload of this config (its Service URL and served model name come from the plan)."""
    namespace: KubernetesName | None = None
    """The workload's namespace, when the name alone is ambiguous. Default: the one workload of that name."""
    model: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/@-]*$")
    """Which of the workload's models (Ollama's tag, a Ray app's model, a NIM's served name). Default: its primary
    served model (required for NIM and Ollama)."""
    provider: ExternalProvider | None = None
    """An external provider instead of a workload."""
    rpm: int | None = Field(default=None, ge=1)
    """Requests per minute this backend takes (LiteLLM's ``litellm_params.rpm``). Default: unlimited."""
    tpm: int | None = Field(default=None, ge=1)
    """Tokens per minute. Default: unlimited."""
    direct_clients: bool = False
    """Let clients call the workload directly too, beside the gateway: they then bypass the gateway's master key,
    virtual keys and rate limits. Default False: the workload's NetworkPolicy admits only the gateway (and
    Prometheus, its benchmark and the operators' calls), whatever ``network_policies.client_namespaces`` says. A
    KServe predictor in Knative mode is reached through Knative's gateway, which every client of its namespace may
    call: no NetworkPolicy on the predictor can tell the gateway's forwarded requests apart."""

    @model_validator(mode="after")
    def _one(self) -> LiteLLMBackend:
        if (self.workload is None) == (self.provider is None):
            raise PydanticCustomError(
                "litellm_backend", "a backend is a workload or a provider — set exactly one", {"field": "workload"}
            )
        if self.provider is not None and self.direct_clients:
            raise PydanticCustomError(
                "litellm_direct_clients",
                "direct_clients is about a workload of this config's NetworkPolicy — remove it from a provider",
                {"field": "direct_clients"},
            )
        return self


class LiteLLMRoute(StrictModel):
    """A public model name (a ``model_list`` group): the backends it balances over and its fallbacks."""

    name: str
    """What clients put in ``model``."""
    backends: tuple[LiteLLMBackend, ...] = Field(min_length=1)
    """The deployments LiteLLM balances this name over (``routing_strategy``)."""
    fallbacks: tuple[str, ...] = ()
    """Routes tried, in order, when every backend of this one failed."""

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _ROUTE.match(value):
            raise PydanticCustomError("route_name", "not a route name — letters, digits, '.', '_', ':', '/', '-'")
        return value


class DatabaseMode(StrEnum):
    NONE = "none"
    """No database: a stateless proxy (the master key only: no virtual keys, teams or spend). Default."""
    EXISTING = "existing"
    """A Postgres you run (RDS…), its ``DATABASE_URL`` in a Secret."""
    DEPLOY = "deploy"
    """A Postgres StatefulSet with a retained volume, deployed with the gateway (one replica, no backups)."""


class LiteLLMDatabase(StrictModel):
    """Postgres for virtual keys, teams and spend."""

    mode: DatabaseMode = DatabaseMode.NONE
    """Default ``none``."""
    url_secret: SecretRef | None = None
    """``existing``: the Secret key holding ``postgresql://user:password@host:5432/db``."""
    password_secret: SecretRef | None = None
    """``deploy``: the Secret key holding the database password (a password you created; URL-safe characters)."""
    storage_gib: int = Field(default=20, ge=1, le=16384)
    """``deploy``: the database volume, GiB. Default 20."""

    @model_validator(mode="after")
    def _secrets(self) -> LiteLLMDatabase:
        needed = {DatabaseMode.EXISTING: "url_secret", DatabaseMode.DEPLOY: "password_secret"}.get(self.mode)
        for field in ("url_secret", "password_secret"):
            if field == needed and getattr(self, field) is None:
                raise PydanticCustomError(
                    "database_secret", "required with mode {mode}", {"mode": self.mode.value, "field": field}
                )
            if field != needed and getattr(self, field) is not None:
                raise PydanticCustomError(
                    "database_secret_unused",
                    "applies to mode {mode} only",
                    {"mode": "existing" if field == "url_secret" else "deploy", "field": field},
                )
        if self.mode is not DatabaseMode.DEPLOY:
            refuse_unread(
                self,
                ("storage_gib",),
                f"with mode deploy (the volume of the Postgres the app deploys), and the mode is {self.mode.value}",
                "set mode: deploy",
            )
        return self


class KeyLimits(StrictModel):
    """The most a virtual key (or team) may be given (``litellm_settings.upperbound_key_generate_params``)."""

    max_rpm: int | None = Field(default=None, ge=1)
    """Most requests per minute a key may be given. Default: no bound."""
    max_tpm: int | None = Field(default=None, ge=1)
    """Most tokens per minute a key may be given. Default: no bound."""


class GatewayScaling(StrictModel):
    """An HPA on the gateway's CPU (metrics-server, installed when used)."""

    min_replicas: int = Field(default=2, ge=1)
    """Default 2 (one gateway pod is a single point of failure for every model)."""
    max_replicas: int = Field(default=6, ge=1)
    """Default 6."""
    cpu_utilization: int = Field(default=70, ge=10, le=100)
    """Target CPU utilization, %. Default 70."""

    @model_validator(mode="after")
    def _range(self) -> GatewayScaling:
        if self.min_replicas > self.max_replicas:
            raise PydanticCustomError("replicas", "min_replicas must be ≤ max_replicas", {"field": "min_replicas"})
        return self


class LiteLLMWorkloadConfig(WorkloadBase):
    """The LiteLLM proxy in front of the app's workloads (a CPU workload)."""

    kind: Literal["litellm"] = "litellm"  # type: ignore[assignment]
    """``litellm``: the LiteLLM proxy (a gateway, not an engine)."""
    routes: tuple[LiteLLMRoute, ...] = Field(min_length=1)
    """Public model names and their backends."""
    routing_strategy: RoutingStrategy = RoutingStrategy.SIMPLE_SHUFFLE
    """Default ``simple-shuffle`` (LiteLLM's)."""
    num_retries: int = Field(default=2, ge=0, le=10)
    """Retries on one route before its fallbacks. Default 2."""
    master_key_secret: SecretRef
    """The admin key (it must start with ``sk-``), by Secret reference."""
    salt_key_secret: SecretRef | None = None
    """``LITELLM_SALT_KEY``: encrypts stored provider credentials; required with a database and never changed after
    models are added."""
    database: LiteLLMDatabase = LiteLLMDatabase()
    """Default: none (stateless)."""
    key_limits: KeyLimits = KeyLimits()
    """Upper bounds of per-key rpm/tpm. Default: none."""
    scaling: GatewayScaling | None = None
    """An HPA on CPU. Default none (``replicas``)."""
    resources: ResourcesConfig = ResourcesConfig(cpu=2, memory_gib=4)
    """Per gateway pod. Default 2 vCPU / 4 GiB."""

    @model_validator(mode="after")
    def _gateway(self) -> LiteLLMWorkloadConfig:
        names = [r.name for r in self.routes]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise PydanticCustomError(
                "route_names",
                "{names} appear twice — one route per public model name",
                {"names": ", ".join(duplicates), "field": "routes"},
            )
        for index, route in enumerate(self.routes):
            for position, fallback in enumerate(route.fallbacks):
                if fallback not in names or fallback == route.name:
                    raise PydanticCustomError(
                        "route_fallback",
                        "{fallback} is not another route — valid: {valid}",
                        {
                            "fallback": repr(fallback),
                            "valid": ", ".join(n for n in names if n != route.name) or "none",
                            "field": f"routes[{index}].fallbacks[{position}]",
                        },
                    )
        if self.database.mode is not DatabaseMode.NONE and self.salt_key_secret is None:
            raise PydanticCustomError(
                "salt_key",
                "required with a database: LiteLLM encrypts the credentials it stores with LITELLM_SALT_KEY",
                {"field": "salt_key_secret"},
            )
        if self.autoscaling is not None:
            raise PydanticCustomError(
                "litellm_autoscaling", "the gateway scales on CPU — use scaling instead", {"field": "autoscaling"}
            )
        return self

    @property
    def model_entries(self) -> tuple[tuple[str, ModelConfig], ...]:
        """None: a gateway serves no model itself."""
        return ()
