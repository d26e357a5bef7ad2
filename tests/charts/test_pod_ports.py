"""``workloads[].pod.ports`` (issue 26 §2.7: ZMQ KV-event ports for llm-d's and AIBrix's routers): GIVEN an extra
port on every workload of every kind's examples, WHEN rendered, THEN the serving container of every pod that serves
it — as it runs, operators' pods included — declares it, its Jobs do not, NIM and KServe workloads get a named error,
a port the container has already is a named error, and the NetworkPolicies admit exactly the clients named (default:
the workload's namespace), with egress for a client namespace inferstack owns."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, ClassVar

import cdk8s
import pytest
import yaml

from inferstack.charts.network_policies import NetworkPoliciesChart
from inferstack.config import ConfigError, parse_config
from inferstack.config.kinds import KINDS
from inferstack.gates.network import Pod, connection_allowed
from inferstack.plan.network import network_flows
from tests.charts.conftest import render
from tests.charts.test_pod_customization import one_off, running_pods
from tests.synth import ROOT

EXAMPLES = sorted({example for kind in KINDS.values() for example in kind.examples})
#: Kinds whose operator builds the serving container (no extra port to give).
NO_PORTS = {"nim", "kserve"}
KV_EVENTS = {"name": "kv-events", "port": 5557}
ENTRY = {"name": "kv-events", "containerPort": 5557, "protocol": "TCP"}


def with_ports(example: str, ports: list[Mapping[str, Any]]) -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "examples" / example).read_text())
    for workload in data["workloads"]:
        workload["pod"] = {"ports": copy.deepcopy(ports)}
    return data


def _kinds(example: str) -> set[str]:
    data = yaml.safe_load((ROOT / "examples" / example).read_text())
    return {w.get("kind", "vllm") for w in data["workloads"]}


def _router(pod: Mapping[str, Any]) -> bool:
    return ((pod.get("metadata") or {}).get("labels") or {}).get("app.kubernetes.io/component") == "router"


PORTED = [e for e in EXAMPLES if not _kinds(e) & NO_PORTS]
REFUSED = [e for e in EXAMPLES if _kinds(e) & NO_PORTS]


@pytest.mark.parametrize("example", PORTED)
def test_every_serving_container_declares_the_port_and_no_job_does(example):
    objects = render(with_ports(example, [KV_EVENTS]))
    serving = [(where, pod) for where, pod in running_pods(objects) if not one_off(where, pod)]
    assert serving, example
    for where, pod in running_pods(objects):
        main = pod["spec"]["containers"][0]
        declared = ENTRY in (main.get("ports") or [])
        if _router(pod):  # a workload's router (routing) is its own component: the ports are the engine's
            assert not any(ENTRY in (c.get("ports") or []) for c in pod["spec"]["containers"]), where
            continue
        assert declared != one_off(where, pod), f"{example}: {where} {main.get('ports')}"
        others = [c for c in pod["spec"]["containers"][1:] if ENTRY in (c.get("ports") or [])]
        assert others == [], f"{example}: {where}: only the serving container"


@pytest.mark.parametrize("example", REFUSED)
def test_nim_and_kserve_workloads_name_the_field(example):
    with pytest.raises(ConfigError) as raised:
        render(with_ports(example, [KV_EVENTS]))
    assert ".pod.ports" in str(raised.value) and "remove ports" in str(raised.value)


def test_a_port_the_container_has_is_named():
    with pytest.raises(ConfigError) as raised:
        render(with_ports("vllm-gpu-tp4.yaml", [{"name": "kv-events", "port": 8000}]))
    assert "workloads[0].pod.ports[0]" in str(raised.value) and "has port" in str(raised.value)


@pytest.mark.parametrize(
    ("ports", "named"),
    [
        ([{"name": "KV_events", "port": 5557}], "is not a port name"),
        ([{"name": "kv-events-publisher", "port": 5557}], "is not a port name"),
        ([{"name": "kv\n", "port": 5557}], "is not a port name"),
        ([{"name": "kv", "port": 70000}], "less than or equal to 65535"),
        ([KV_EVENTS, {"name": "kv-events", "port": 5558}], "name kv-events appears twice"),
        ([KV_EVENTS, {"name": "other", "port": 5557}], "port 5557 appears twice"),
        ([{**KV_EVENTS, "clients": [{"pods": {"bad key!": "x"}}]}], "pod.ports[0].clients[0].pods"),
    ],
)
def test_bad_ports_are_named(ports, named):
    data = {"workloads": [{"name": "q", "model": {"id": "Qwen/Qwen3-8B"}, "pod": {"ports": ports}}]}
    with pytest.raises(ConfigError) as raised:
        parse_config(data)
    assert named in str(raised.value) and "workloads[0].pod.ports" in str(raised.value)


class TestNetworkPolicies:
    """Who reaches the port, judged by the NetworkPolicy evaluator on the rendered policies."""

    BASE: ClassVar[dict[str, Any]] = {
        "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]},
        "workloads": [
            {"name": "qwen", "namespace": "serving", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}},
            {"name": "other", "namespace": "routers", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}},
        ],
    }
    SERVER = Pod(namespace="serving", labels={"app.kubernetes.io/name": "qwen"})

    def _policies(self, clients: list[dict[str, Any]] | None, namespace_clients: bool = True) -> list[dict[str, Any]]:
        data = copy.deepcopy(self.BASE)
        data["network_policies"] = {"namespace_clients": namespace_clients}
        port = {**KV_EVENTS, **({"clients": clients} if clients is not None else {})}
        data["workloads"][0]["pod"] = {"ports": [port]}
        return NetworkPoliciesChart(cdk8s.App(), "np", network_flows(parse_config(data))).to_json()

    def test_by_default_the_workloads_namespace_reaches_it_and_no_other(self):
        policies = self._policies(None)
        assert connection_allowed(policies, Pod("serving", {"app": "indexer"}), self.SERVER, 5557)
        assert not connection_allowed(policies, Pod("elsewhere", {"app": "indexer"}), self.SERVER, 5557)

    def test_named_clients_reach_it_from_their_namespace_and_nobody_else(self):
        indexer = {"app.kubernetes.io/name": "kv-indexer"}
        policies = self._policies([{"namespace": "llm-d", "pods": indexer}])
        assert connection_allowed(policies, Pod("llm-d", indexer), self.SERVER, 5557)
        assert not connection_allowed(policies, Pod("llm-d", {"app": "other"}), self.SERVER, 5557)
        assert not connection_allowed(policies, Pod("serving", {"app": "indexer"}), self.SERVER, 5557)
        assert not connection_allowed(policies, Pod("llm-d", indexer), self.SERVER, 8000)  # the port only

    def test_a_client_namespace_inferstack_owns_gets_egress_to_it(self):
        policies = self._policies([{"namespace": "routers"}])
        router = Pod("routers", {"app": "router"})
        assert connection_allowed(policies, router, self.SERVER, 5557)
        assert not connection_allowed(policies, router, self.SERVER, 5558)
        without = self._policies(None)
        assert not connection_allowed(without, router, self.SERVER, 5557)

    def test_clients_reach_it_without_namespace_clients_too(self):
        """The client egress is a policy of its own, not the namespace-wide one ``namespace_clients`` turns off."""
        same = self._policies(None, namespace_clients=False)
        assert connection_allowed(same, Pod("serving", {"app": "indexer"}), self.SERVER, 5557)
        assert not connection_allowed(same, Pod("serving", {"app": "indexer"}), self.SERVER, 8000)
        indexer = {"app": "kv-indexer"}
        named = self._policies([{"namespace": "routers", "pods": indexer}], namespace_clients=False)
        assert connection_allowed(named, Pod("routers", indexer), self.SERVER, 5557)
        assert not connection_allowed(named, Pod("routers", {"app": "other"}), self.SERVER, 5557)


def test_pod_ports_names_a_port_the_kind_listens_on_undeclared():
    """POD-PORTS: Triton's metrics port (8002) — rendered on the container or not, the engine holds it."""
    from inferstack.rules import pod_ports

    data = with_ports("triton-vllm.yaml", [{"name": "extra", "port": 8002}])
    (finding,) = [f for f in pod_ports.check(parse_config(data)) if f.path.startswith("workloads[0]")]
    assert finding.path == "workloads[0].pod.ports[0].port" and "metrics port" in finding.message
    assert "8000, 8001, 8002" in finding.fix
    assert list(pod_ports.check(parse_config(with_ports("triton-vllm.yaml", [KV_EVENTS])))) == []
