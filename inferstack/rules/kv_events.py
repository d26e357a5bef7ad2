"""KV-EVENTS-PORT: a vLLM workload that publishes KV-cache events (``--kv-events-config``, what llm-d's and AIBrix's
KV-aware routers subscribe to) lets its subscribers reach them.

vLLM 0.19.0's ``KVEventsConfig`` (``vllm/config/kv_events.py``): ``enable_kv_cache_events`` (default false) turns
publishing on, ``publisher`` then defaults to ``zmq``, ``endpoint`` to ``tcp://*:5557`` and ``replay_endpoint`` to
none. The ZMQ publisher binds an endpoint whose host is ``*`` and connects to any other
(``vllm/distributed/kv_events.py`` ``ZmqEventPublisher``). With NetworkPolicies on:

* a bound port is reachable only when ``pod.ports`` declares it (with the subscribers as its clients): the
  workload's policy admits nothing else;
* a connecting endpoint needs egress to the subscriber, which the workload's policy does not give (it reaches only
  its group, the Pod Identity agent and HTTPS): bind instead, and let the subscriber connect.

The config is read from ``engine.extra_args`` as vLLM reads it: ``--kv-events-config JSON`` (or ``=JSON``) and the
dotted sub-keys ``--kv-events-config.<key> value`` merged into it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from inferstack.config.model import InferstackConfig
from inferstack.config.workloads import VllmWorkloadConfig
from inferstack.rules.base import Finding, Rule

RULE_ID = "KV-EVENTS-PORT"
FLAG = "--kv-events-config"
_ENDPOINT = re.compile(r"^tcp://(?P<host>\[[^\]]+\]|[^:/]+):(?P<port>\d{1,5})$")
#: Hosts a ZMQ endpoint binds on (read, not opened here).
_BIND_HOSTS = frozenset({"*", "0.0.0.0", "[::]"})  # noqa: S104
_TRUE = frozenset({"true", "1", "yes"})


def kv_events_config(args: Sequence[str]) -> dict[str, Any] | None:
    """The ``KVEventsConfig`` fields ``args`` set (the JSON value, then dotted sub-keys over it), or None when the
    flag is absent or its JSON does not parse (the flag check reports that)."""
    config: dict[str, Any] | None = None
    index = 0
    while index < len(args):
        arg = args[index]
        name, eq, inline = arg.partition("=")
        if name.replace("_", "-") == FLAG or name.replace("_", "-").startswith(FLAG + "."):
            value = inline if eq else (args[index + 1] if index + 1 < len(args) else "")
            index += 1 if eq else 2
            key = name.split(".", 1)[1] if "." in name else None
            config = config or {}
            if key is None:
                try:
                    parsed = json.loads(value)
                except json.JSONDecodeError:
                    return None
                if not isinstance(parsed, dict):
                    return None
                config.update(parsed)
            else:
                config[key] = value
            continue
        index += 1
    return config


def _enabled(config: dict[str, Any]) -> bool:
    value = config.get("enable_kv_cache_events", False)
    return value is True or (isinstance(value, str) and value.lower() in _TRUE)


def endpoints(config: dict[str, Any]) -> list[tuple[str, str]]:
    """``(field, endpoint)`` of the ZMQ sockets vLLM opens for ``config`` (none unless publishing over zmq)."""
    if not _enabled(config):
        return []
    if config.get("publisher", "zmq") != "zmq":
        return []
    found = [("endpoint", str(config.get("endpoint", "tcp://*:5557")))]
    if config.get("replay_endpoint"):
        found.append(("replay_endpoint", str(config["replay_endpoint"])))
    return found


def check(config: InferstackConfig) -> Iterator[Finding]:
    if not config.network_policies.enabled:
        return
    for index, workload in enumerate(config.workloads):
        if not isinstance(workload, VllmWorkloadConfig):
            continue
        events = kv_events_config(workload.engine.extra_args)
        if events is None:
            continue
        declared = {p.port for p in workload.pod.ports}
        path = f"workloads[{index}].engine.extra_args"
        for field, endpoint in endpoints(events):
            match = _ENDPOINT.match(endpoint)
            if match is None:
                continue  # ipc:// or inproc://: nothing crosses the network
            host, port = match.group("host"), int(match.group("port"))
            if host not in _BIND_HOSTS:
                yield Finding(
                    rule=RULE_ID,
                    path=path,
                    message=f"the KV-cache event {field} {endpoint} makes vLLM connect out to {host}, and the "
                    "workload's NetworkPolicy gives its pods no such egress: no event leaves",
                    fix=f"bind instead ({field} tcp://*:{port}), declare the port in pod.ports with the subscribers as "
                    "its clients, and let them connect",
                )
            elif port not in declared:
                yield Finding(
                    rule=RULE_ID,
                    path=path,
                    message=f"vLLM publishes KV-cache events on port {port} ({field} {endpoint}), and the workload's "
                    "NetworkPolicy admits no subscriber there: the router never gets them",
                    fix=f"add to workloads[{index}].pod.ports {{name: kv-events, port: {port}, clients: [{{namespace: "
                    "<router's>, pods: {<its labels>}}]}",
                )


RULE = Rule(id=RULE_ID, title="vLLM's KV-cache events reach their subscribers", check=check)
RULES = (RULE,)
