"""``pod`` of a workload: labels, annotations, environment variables and extra ports its serving pods carry besides
what inferstack renders — on every pod that serves it, whichever kind and operator makes the pod (a Deployment's, a
LeaderWorkerSet's leader and workers, a RayService's head and workers, a DynamoGraphDeployment's components, a
NIMService's and a KServe predictor's pods). Not on its one-off Jobs (model sync, Neuron compile, benchmark) nor a
gateway's Postgres.

Keys another owner sets are refused here, by name: the Kubernetes domains (``kubernetes.io``, ``k8s.io`` and their
subdomains: AppArmor and seccomp annotations, well-known labels), inferstack's, and those the operators select or
act on (``ray.io``, ``serving.kserve.io``, ``serving.knative.dev``, ``autoscaling.knative.dev``, ``model.aibrix.ai``,
``nvidia.com``, ``karpenter.sh``…, the bare ``app`` and ``component`` that the NIM operator's and KServe's Deployments
select). A key or variable the kind renders already is refused when the workload renders (``workloads[i].pod…``).
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from inferstack.config.base import StrictModel
from inferstack.config.labels import check_key, check_label, in_domains
from inferstack.config.pod_ports import PodPort, check_unique_ports
from inferstack.config.secret_ref import SecretRef
from inferstack.config.types import check_plain

#: Domains (with their subdomains) whose label and annotation keys belong to Kubernetes, inferstack or an operator.
RESERVED_DOMAINS = (
    "kubernetes.io",
    "k8s.io",
    "inferstack.io",
    "karpenter.sh",
    "karpenter.k8s.aws",
    "ray.io",
    "kserve.io",
    "knative.dev",
    "aibrix.ai",
    "nvidia.com",
    "envoyproxy.io",
    "x-k8s.io",
    "eks.amazonaws.com",
)
#: Bare keys operators select on: the NIM operator's Deployment (``app: <name>``) and KServe's (``app``,
#: ``component``).
RESERVED_BARE_KEYS = frozenset({"app", "component"})
#: An environment variable name: a C identifier (what every shell and engine reads).
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: What the serving pod sets for every kind (the shared pod's HOME, USER, LOGNAME).
RESERVED_ENV = frozenset({"HOME", "USER", "LOGNAME"})
#: Switches that open an engine's control endpoints on its serving port, which every admitted client reaches:
#: vLLM's runtime LoRA loading (inferstack sets it only with AIBrix, whose pods admit no client) and its
#: development endpoints (``VLLM_SERVER_DEV_MODE``: /reset_prefix_cache, /sleep, /collective_rpc…).
CONTROL_ENV = frozenset({"VLLM_ALLOW_RUNTIME_LORA_UPDATING", "VLLM_SERVER_DEV_MODE"})


def _reserved(key: str, what: str) -> None:
    domain = in_domains(key, RESERVED_DOMAINS)
    if domain is not None or key in RESERVED_BARE_KEYS:
        owner = f"the {domain} domain" if domain else f"the bare key {key!r}"
        raise PydanticCustomError(
            f"{what}_reserved",
            "{key}: {owner} belongs to Kubernetes, inferstack or an operator it runs (they set it, select on it or "
            "act on it) — use a key of your own domain, e.g. 'example.com/team'",
            {"key": key, "owner": owner},
        )


class EnvFromSecret(StrictModel):
    """An environment variable read from a key of a Secret in the workload's namespace (created outside
    inferstack)."""

    secret: SecretRef
    """The Secret and key, e.g. ``{name: tracing, key: api-key}``."""


class PodConfig(StrictModel):
    """Labels, annotations and environment of the workload's serving pods (module docstring: which pods, which keys
    are refused)."""

    labels: dict[str, str] = Field(default_factory=dict, max_length=64)
    """Extra pod labels, e.g. ``{example.com/team: search}``. Default none."""
    annotations: dict[str, str] = Field(default_factory=dict, max_length=64)
    """Extra pod annotations, e.g. ``{example.com/owner: search-oncall}``. Values up to 4,096 characters. Default
    none."""
    env: dict[str, str | EnvFromSecret] = Field(default_factory=dict, max_length=128)
    """Extra environment variables of the serving containers: a literal value, or ``{secret: {name, key}}``. A
    credential belongs in a Secret (rule SECRET-INLINE refuses one written here). Default none."""
    ports: tuple[PodPort, ...] = Field(default=(), max_length=16)
    """Extra TCP ports of the serving container, each with the pods its NetworkPolicy admits, e.g. ``[{name:
    kv-events, port: 5557, clients: [{namespace: llm-d}]}]`` for vLLM's KV-cache events (:mod:`inferstack.config.
    pod_ports`). Not on NIM and KServe workloads: their operators build the containers. Default none."""

    @field_validator("labels")
    @classmethod
    def _labels(cls, labels: dict[str, str]) -> dict[str, str]:
        for key, value in labels.items():
            check_label(key, value)
            _reserved(key, "label")
        return labels

    @field_validator("annotations")
    @classmethod
    def _annotations(cls, annotations: dict[str, str]) -> dict[str, str]:
        for key, value in annotations.items():
            check_key(key, "annotation")
            _reserved(key, "annotation")
            if len(value) > 4096:
                raise PydanticCustomError(
                    "annotation_value",
                    "the value of annotation {key} has {length} characters — at most 4,096",
                    {"key": key, "length": len(value)},
                )
        return annotations

    @field_validator("env")
    @classmethod
    def _env(cls, env: dict[str, str | EnvFromSecret]) -> dict[str, str | EnvFromSecret]:
        for name, value in env.items():
            check_plain(name, "an environment variable name", subject=f"env {name[:60]!r}: ")
            if not _ENV_NAME.match(name) or len(name) > 256:
                raise PydanticCustomError(
                    "env_name",
                    "{name} is not an environment variable name — letters, digits and '_', not starting with a "
                    "digit, e.g. OTEL_SERVICE_NAME",
                    {"name": name},
                )
            if name in CONTROL_ENV:
                raise PydanticCustomError(
                    "env_control",
                    "{name} opens the engine's control endpoints on the serving port, which every client the "
                    "workload admits reaches — runtime LoRA comes with aibrix (its pods admit no client)",
                    {"name": name},
                )
            if name in RESERVED_ENV:
                raise PydanticCustomError(
                    "env_reserved",
                    "{name} is set by the serving pod (its writable HOME and user) — leave it to inferstack",
                    {"name": name},
                )
            if isinstance(value, str) and len(value) > 32768:
                raise PydanticCustomError(
                    "env_value",
                    "the value of {name} has {length} characters — at most 32,768",
                    {"name": name, "length": len(value)},
                )
        return env

    @field_validator("ports")
    @classmethod
    def _ports(cls, ports: tuple[PodPort, ...]) -> tuple[PodPort, ...]:
        return check_unique_ports(ports)

    @property
    def empty(self) -> bool:
        """Nothing to add (the default)."""
        return not (self.labels or self.annotations or self.env or self.ports)
