"""``pod.ports`` of a workload: TCP ports its serving container listens on besides the engine's own — e.g. vLLM's
ZMQ KV-cache event publisher (``--kv-events-config``, ``tcp://*:5557``) that llm-d's and AIBrix's KV-aware routers
subscribe to — each with the pods that may connect to it.

A port is declared on the serving container of every pod that serves the workload and admitted by its NetworkPolicy
from ``clients`` only (default: the pods of the workload's own namespace). Ports are TCP: ZMQ, gRPC and HTTP are.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from inferstack.config.base import StrictModel
from inferstack.config.labels import check_label
from inferstack.config.types import KubernetesName

#: A container port name (IANA_SVC_NAME, Kubernetes validation ``IsValidPortName``): 1-15 lowercase letters, digits
#: and '-', at least one letter, no leading, trailing or double '-'.
_PORT_NAME = re.compile(r"^(?=.*[a-z])[a-z0-9]([a-z0-9]|-(?!-))*[a-z0-9]$|^[a-z]$")


class PortClient(StrictModel):
    """Pods that may connect to the port: those of ``namespace`` matching ``pods``."""

    namespace: KubernetesName | None = None
    """Their namespace. Default: the workload's."""
    pods: dict[str, str] = Field(default_factory=dict, max_length=16)
    """Their labels (every one must match), e.g. ``{app.kubernetes.io/name: kv-indexer}``. Default: every pod of
    the namespace."""

    @field_validator("pods")
    @classmethod
    def _pods(cls, pods: dict[str, str]) -> dict[str, str]:
        for key, value in pods.items():
            check_label(key, value)
        return pods


class PodPort(StrictModel):
    """A TCP port the serving container listens on, and who may connect to it."""

    name: str
    """Port name, e.g. ``kv-events``: 1-15 lowercase letters, digits and '-' (a container port name), unique in the
    pod."""
    port: int = Field(ge=1, le=65535)
    """The port number, e.g. ``5557``."""
    clients: tuple[PortClient, ...] = Field(default=(), max_length=16)
    """Who may connect (NetworkPolicy ingress), e.g. ``[{namespace: llm-d, pods: {app: kv-indexer}}]``. Default:
    the pods of the workload's own namespace."""

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if len(name) > 15 or not _PORT_NAME.fullmatch(name):
            raise PydanticCustomError(
                "port_name",
                "{name} is not a port name — 1-15 lowercase letters, digits and '-', with a letter, not starting or "
                "ending with '-', e.g. kv-events",
                {"name": repr(name)[:40]},
            )
        return name


def check_unique_ports(ports: tuple[PodPort, ...]) -> tuple[PodPort, ...]:
    """Each name and number once."""
    for what in ("name", "port"):
        seen: set[object] = set()
        for port in ports:
            value = getattr(port, what)
            if value in seen:
                raise PydanticCustomError(
                    "port_twice", "{what} {value} appears twice — each port once", {"what": what, "value": value}
                )
            seen.add(value)
    return ports
