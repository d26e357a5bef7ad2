"""KV-EVENTS-PORT: vLLM's KV-cache events (vLLM 0.19.0 ``KVEventsConfig``: off by default; on, ZMQ publishing on
``tcp://*:5557``) reach their subscribers only through a declared ``pod.ports`` entry, and a connecting endpoint has
no egress."""

from __future__ import annotations

import json

import pytest

from inferstack.config import parse_config
from inferstack.rules import kv_events

ON = json.dumps({"enable_kv_cache_events": True})


def _config(extra_args: list[str], ports: tuple[int, ...] = (), policies: bool = True) -> object:
    workload = {"name": "q", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}, "engine": {"extra_args": extra_args}}
    if ports:
        workload["pod"] = {"ports": [{"name": f"p{p}", "port": p} for p in ports]}
    return parse_config(
        {
            "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]},
            "network_policies": {"enabled": policies},
            "workloads": [workload],
        }
    )


def _findings(*args, **kwargs) -> list:
    return list(kv_events.check(_config(*args, **kwargs)))


def test_events_on_the_default_port_need_it_declared():
    (finding,) = _findings(["--kv-events-config", ON])
    assert finding.path == "workloads[0].engine.extra_args" and "port 5557" in finding.message
    assert "pod.ports" in finding.fix and "kv-events" in finding.fix
    assert _findings(["--kv-events-config", ON], ports=(5557,)) == []


@pytest.mark.parametrize(
    "args",
    [
        ["--kv-events-config", json.dumps({"enable_kv_cache_events": True, "endpoint": "tcp://*:6000"})],
        [f"--kv-events-config={json.dumps({'enable_kv_cache_events': True, 'endpoint': 'tcp://*:6000'})}"],
        ["--kv-events-config.enable_kv_cache_events", "true", "--kv-events-config.endpoint", "tcp://*:6000"],
        ["--kv_events_config.enable_kv_cache_events=On", "--kv-events-config.endpoint=tcp://[::]:6000"],
    ],
)
def test_every_spelling_vllm_reads_is_read(args):
    (finding,) = _findings(args)
    assert "port 6000" in finding.message
    assert _findings(args, ports=(6000,)) == []


def test_the_replay_endpoint_is_a_port_too():
    args = ["--kv-events-config", json.dumps({"enable_kv_cache_events": True, "replay_endpoint": "tcp://*:5558"})]
    assert ["port 5558" in f.message for f in _findings(args, ports=(5557,))] == [True]
    assert _findings(args, ports=(5557, 5558)) == []


@pytest.mark.parametrize("endpoint", ["tcp://indexer:5557", "tcp://0.0.0.0:5557"])
def test_an_endpoint_without_a_wildcard_connects_out_and_has_no_egress(endpoint):
    """vLLM binds the PUB socket only when the endpoint holds '*' or '::': 0.0.0.0 connects to the pod itself."""
    args = ["--kv-events-config", json.dumps({"enable_kv_cache_events": True, "endpoint": endpoint})]
    (finding,) = _findings(args, ports=(5557,))
    assert "connects it out" in finding.message and "tcp://*:5557" in finding.fix


def test_the_replay_socket_always_binds():
    replay = {"enable_kv_cache_events": True, "replay_endpoint": "tcp://10.0.0.1:5558"}
    (finding,) = _findings(["--kv-events-config", json.dumps(replay)], ports=(5557,))
    assert "port 5558" in finding.message


def test_each_data_parallel_rank_publishes_on_its_own_port():
    args = ["--kv-events-config", ON, "--data-parallel-size", "2"]
    (finding,) = _findings(args, ports=(5557,))
    assert "port 5558" in finding.message and "data-parallel ranks 0-1" in finding.message
    assert _findings(args, ports=(5557, 5558)) == []
    (one_rank,) = _findings(["--kv-events-config", ON, "-dpn", "3"], ports=(5557,))
    assert "port 5560" in one_rank.message


def test_dotted_keys_replace_the_json_and_the_last_json_wins():
    """vLLM 0.19.0's FlexibleArgumentParser appends the dotted keys as one last JSON value: argparse keeps it alone."""
    off, on = json.dumps({"enable_kv_cache_events": False}), ON
    assert _findings(["--kv-events-config", on, "--kv-events-config", off]) == []
    assert len(_findings(["--kv-events-config.enable_kv_cache_events", "1", "--kv-events-config", off])) == 1
    both = json.dumps({"enable_kv_cache_events": True, "endpoint": "tcp://*:6000"})
    assert _findings(["--kv-events-config", both, "--kv-events-config.replay_endpoint", "tcp://*:6001"]) == []


@pytest.mark.parametrize("endpoint", ["tcp://127.0.0.1:5557", "tcp://localhost:5557", "tcp://[::1]:5557"])
def test_a_loopback_endpoint_crosses_no_policy(endpoint):
    args = ["--kv-events-config", json.dumps({"enable_kv_cache_events": True, "endpoint": endpoint})]
    assert _findings(args) == []
    assert len(_findings(["--kv-events-config", json.dumps({"enable_kv_cache_events": 1, "publisher": None})])) == 1


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--kv-events-config", json.dumps({"enable_kv_cache_events": False})],
        ["--kv-events-config", json.dumps({"enable_kv_cache_events": True, "publisher": "null"})],
        ["--kv-events-config", json.dumps({"enable_kv_cache_events": True, "endpoint": "ipc:///tmp/kv"})],
    ],
)
def test_nothing_published_over_tcp_is_compliant(args):
    assert _findings(args) == []


def test_without_network_policies_nothing_blocks_them():
    assert _findings(["--kv-events-config", ON], policies=False) == []
