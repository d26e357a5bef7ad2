"""KV-EVENTS-PORT: a vLLM workload that publishes KV-cache events (``--kv-events-config``, what llm-d's and AIBrix's
KV-aware routers subscribe to) lets its subscribers reach them.

vLLM 0.19.0's ``KVEventsConfig`` (``vllm/config/kv_events.py``): ``enable_kv_cache_events`` (default false) turns
publishing on, ``publisher`` then defaults to ``zmq``, ``endpoint`` to ``tcp://*:5557`` and ``replay_endpoint`` to
none. The ZMQ publisher binds its PUB endpoint when it contains ``*`` or ``::`` (else it connects: ``tcp://0.0.0.0:P``
connects to the pod itself) and always binds the replay ROUTER (``vllm/distributed/kv_events.py``
``ZmqEventPublisher._socket_setup``); each engine core offsets both ports by its data-parallel rank
(``offset_endpoint_port``; ``scheduler.py`` passes ``parallel_config.data_parallel_index``, the DP rank). With
NetworkPolicies on:

* a bound port is reachable only when ``pod.ports`` declares it (with the subscribers as its clients): the
  workload's policy admits nothing else;
* a connecting endpoint needs egress to the subscriber, which the workload's policy does not give (it reaches only
  its group, the Pod Identity agent and HTTPS): bind instead, and let the subscriber connect.

The config is read from ``engine.extra_args`` as vLLM reads it: ``--kv-events-config JSON`` (or ``=JSON``), the
last one winning (argparse), and the dotted sub-keys ``--kv-events-config.<key> value``, which vLLM's
``FlexibleArgumentParser`` gathers into one more JSON value after the others (``vllm/utils/argparse_utils.py``): with
any dotted key, only the dotted keys count. A loopback endpoint (``localhost``, ``127.0.0.0/8``, ``[::1]``: a
subscriber in the same pod) crosses no NetworkPolicy and is not judged. Booleans are read as pydantic reads them
(``true``, ``1``, ``on``, ``t``, ``y``, ``yes``, any case). The data-parallel ranks come from
``--data-parallel-rank`` (one rank per pod) or ``--data-parallel-start-rank`` and ``--data-parallel-size-local`` /
``--data-parallel-size`` (local ranks).
"""

from __future__ import annotations

import ipaddress
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
#: pydantic's lax true values (KVEventsConfig is a pydantic dataclass).
_TRUE = frozenset({"true", "1", "on", "t", "y", "yes"})
#: vLLM's data-parallel flags (0.19.0) and their short spellings.
_DP = {
    "--data-parallel-size": "size",
    "-dp": "size",
    "--data-parallel-size-local": "local",
    "-dpl": "local",
    "--data-parallel-start-rank": "start",
    "-dpr": "start",
    "--data-parallel-rank": "rank",
    "-dpn": "rank",
}


def kv_events_config(args: Sequence[str]) -> dict[str, Any] | None:
    """The ``KVEventsConfig`` fields ``args`` set — the dotted sub-keys when there are any (vLLM appends them as one
    last JSON value, which argparse keeps: every JSON form is then dropped), else the last JSON value — or None when
    the flag is absent or its JSON does not parse (the flag check reports that)."""
    whole: dict[str, Any] | None = None
    dotted: dict[str, Any] = {}
    seen = False
    index = 0
    while index < len(args):
        name, eq, inline = args[index].partition("=")
        normal = name.split(".", 1)[0].replace("_", "-")
        if normal != FLAG:
            index += 1
            continue
        seen = True
        value = inline if eq else (args[index + 1] if index + 1 < len(args) else "")
        index += 1 if eq else 2
        if "." in name:
            dotted[name.split(".", 1)[1]] = value
            continue
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return None
        if not isinstance(parsed, dict):
            return None
        whole = parsed
    return (dotted or whole or {}) if seen else None


def _true(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value == 1
    return isinstance(value, str) and value.strip().lower() in _TRUE


def endpoints(config: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """``(field, endpoint, binds)`` of the ZMQ sockets vLLM opens for ``config`` (none unless publishing over zmq):
    the PUB endpoint binds with ``*`` or ``::`` in it, the replay ROUTER always."""
    if not _true(config.get("enable_kv_cache_events", False)):
        return []
    if (config.get("publisher") or "zmq") != "zmq":
        return []
    endpoint = str(config.get("endpoint", "tcp://*:5557"))
    found = [("endpoint", endpoint, "*" in endpoint or "::" in endpoint)]
    if config.get("replay_endpoint"):
        found.append(("replay_endpoint", str(config["replay_endpoint"]), True))
    return found


def _loopback(host: str) -> bool:
    """``localhost``, an address of 127.0.0.0/8, or ``[::1]``."""
    if host in ("localhost", "[::1]"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def dp_ranks(args: Sequence[str]) -> range:
    """The data-parallel ranks of one pod's engine cores (each offsets the ports by its rank)."""
    values: dict[str, int] = {}
    for index, arg in enumerate(args):
        name, eq, inline = arg.partition("=")
        key = _DP.get(name.replace("_", "-") if name.startswith("--") else name)
        if key is None:
            continue
        raw = inline if eq else (args[index + 1] if index + 1 < len(args) else "")
        if raw.isdigit():
            values[key] = int(raw)
    if "rank" in values:
        return range(values["rank"], values["rank"] + 1)
    start = values.get("start", 0)
    return range(start, start + values.get("local", values.get("size", 1)))


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
        ranks = dp_ranks(workload.engine.extra_args)
        for field, endpoint, binds in endpoints(events):
            match = _ENDPOINT.match(endpoint)
            if match is None:
                continue  # ipc:// or inproc://: nothing crosses the network
            host, port = match.group("host"), int(match.group("port"))
            if _loopback(host):
                continue  # a subscriber in the same pod: no NetworkPolicy between
            if not binds:
                yield Finding(
                    rule=RULE_ID,
                    path=path,
                    message=f"the KV-cache event {field} {endpoint} has no '*': vLLM connects it out to {host} "
                    "(0.0.0.0 is the pod itself), and the workload's NetworkPolicy gives its pods no such egress: no "
                    "event leaves",
                    fix=f"bind instead ({field} tcp://*:{port}), declare the port in pod.ports with the subscribers as "
                    "its clients, and let them connect",
                )
                continue
            missing = [port + rank for rank in ranks if port + rank not in declared]
            if missing:
                ports = ", ".join(str(p) for p in missing)
                yield Finding(
                    rule=RULE_ID,
                    path=path,
                    message=f"vLLM publishes KV-cache events on port {ports} ({field} {endpoint}"
                    + (f", offset by the data-parallel ranks {ranks.start}-{ranks.stop - 1}" if len(ranks) > 1 else "")
                    + "), and the workload's NetworkPolicy admits no subscriber there: the router never gets them",
                    fix=f"add to workloads[{index}].pod.ports {{name: kv-events, port: {missing[0]}, clients: "
                    "[{namespace: <router's>, pods: {<its labels>}}]}"
                    + (" and the other ports" if len(missing) > 1 else ""),
                )


RULE = Rule(id=RULE_ID, title="vLLM's KV-cache events reach their subscribers", check=check)
RULES = (RULE,)
