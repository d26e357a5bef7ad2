"""GIVEN the default config and two examples, WHEN ``plan`` prices them, THEN each workload's and pool's cost is its
pods' (nodes') share of the vendored on-demand prices — asserted against the price table, not against itself."""

from __future__ import annotations

import pytest

from inferstack import cli
from inferstack.catalog.prices import HOURS_PER_MONTH, price
from inferstack.config import load_config, parse_config
from inferstack.plan.cost import pool_costs, workload_costs
from tests.synth import ROOT


def by_subject(costs):
    return {c.subject: c for c in costs}


def usd(instance: str) -> float:
    found = price(instance, "us-east-1")
    assert found is not None, instance
    return found.on_demand


def test_the_vendored_table_has_its_sources():
    found = price("p5.48xlarge", "us-east-1")
    assert found is not None and found.on_demand == 55.04  # after the June 2025 P5 price cut
    assert "karpenter-provider-aws" in found.source and found.date == "2026-07-20"
    assert price("p5.48xlarge", "us-west-2") is None  # not guessed: no post-cut source for it


def test_default_platform_costs_one_l40s_node():
    config = load_config(ROOT / "inferstack.yaml")
    (workload,) = workload_costs(config)
    assert workload.hourly == pytest.approx(usd("g6e.2xlarge"))
    assert workload.monthly == pytest.approx(usd("g6e.2xlarge") * HOURS_PER_MONTH)
    system = by_subject(pool_costs(config))["system"]
    assert system.hourly == pytest.approx(config.cluster.system_nodes.desired_size * usd("m6i.xlarge"))


def test_prefill_decode_takes_two_whole_p5_nodes_and_half_a_system_node():
    config = load_config(ROOT / "examples" / "ray-pd-efa-p5.yaml")
    (workload,) = workload_costs(config)
    # prefill + decode: an EFA pod each, a whole p5.48xlarge; the head (2 vCPU) alone on a system node (m6i.xlarge
    # has 3 allocatable vCPU: one head fits)
    assert workload.hourly == pytest.approx(2 * usd("p5.48xlarge") + usd("m6i.xlarge"))
    pool = by_subject(pool_costs(config))["p5-efa"]
    assert pool.hourly == pytest.approx(2 * usd("p5.48xlarge"))


def test_tensor_parallel_shares_of_a_node():
    config = load_config(ROOT / "examples" / "vllm-gpu-tp4.yaml")
    (workload,) = workload_costs(config)
    replicas = config.workloads[0].replicas
    assert workload.hourly == pytest.approx(replicas * usd("g6e.12xlarge"))  # TP 4 = all four GPUs


def test_a_missing_price_is_said_not_guessed():
    config = parse_config(
        {
            "env": {"region": "us-west-2"},
            "compute": {"node_groups": [{"name": "p5", "instance_type": "p5.48xlarge", "max_size": 1}]},
        }
    )
    (p5,) = [c for c in pool_costs(config) if c.subject == "p5"]
    assert p5.hourly is None and "no price for p5.48xlarge in us-west-2" in p5.detail


def test_plan_prints_the_cost_columns(capsys):
    assert cli.main(["plan", str(ROOT / "inferstack.yaml")]) == 0
    out = capsys.readouterr().out
    assert "$/hour" in out and "$/month" in out and f"{usd('g6e.2xlarge'):.2f}" in out


def test_a_stated_traffic_prices_a_thousand_requests():
    data = {
        "compute": {"karpenter_pools": [{"name": "l40s", "instance_types": ["g6e.2xlarge"]}]},
        "workloads": [
            {"name": "q", "pool": "l40s", "model": {"id": "Qwen/Qwen3-8B"}, "expected_requests_per_day": 1_000_000}
        ],
    }
    (workload,) = workload_costs(parse_config(data))
    monthly = usd("g6e.2xlarge") * HOURS_PER_MONTH
    assert workload.per_thousand_requests == pytest.approx(monthly / (1_000_000 * HOURS_PER_MONTH / 24 / 1000))
    assert workload_costs(load_config(ROOT / "inferstack.yaml"))[0].per_thousand_requests is None


def test_a_pod_costs_the_node_it_needs_and_its_neighbours_share():
    # Ollama's 8-vCPU pod needs an m7i.4xlarge (15 allocatable vCPU; an m7i.2xlarge gives 7), one per node
    config = load_config(ROOT / "examples" / "ollama-cpu.yaml")
    (workload,) = workload_costs(config)
    assert workload.hourly == pytest.approx(usd("m7i.4xlarge"))


def test_a_karpenter_ceiling_is_the_costliest_way_to_fill_the_limit():
    config = parse_config({"compute": {"karpenter_pools": [{"name": "g", "instance_families": ["g6e"]}]}})
    (pool,) = [c for c in pool_costs(config) if c.subject == "g"]
    worst = max(
        -(-64 // n) * usd(t)
        for t, n in (("g6e.xlarge", 1), ("g6e.16xlarge", 1), ("g6e.12xlarge", 4), ("g6e.48xlarge", 8))
    )
    assert f"${worst * HOURS_PER_MONTH:,.0f}/month" in pool.detail


def test_a_memory_limit_caps_the_karpenter_ceiling():
    """max_memory_gib (NodePool limits.memory): Karpenter launches no node past it, so the ceiling counts the nodes
    it admits — two g6e.2xlarge (64 GiB each) under 130 GiB, not the 64 the GPU limit alone would allow."""
    pool = {"name": "g", "instance_types": ["g6e.2xlarge"], "max_memory_gib": 130}
    (cost,) = [c for c in pool_costs(parse_config({"compute": {"karpenter_pools": [pool]}})) if c.subject == "g"]
    assert f"${2 * usd('g6e.2xlarge') * HOURS_PER_MONTH:,.0f}/month" in cost.detail


def test_a_router_costs_its_pods_on_their_pool():
    """A router pod (2 vCPU picker + Envoy) takes an m7i.xlarge of the CPU pool alone (3 allocatable vCPU), on the
    system nodes an m6i.xlarge; two replicas, two nodes."""
    config = load_config(ROOT / "examples" / "litellm-gateway.yaml")
    costs = by_subject(workload_costs(config))
    routed = costs["gateway/qwen-vllm"]
    assert routed.hourly == pytest.approx(2 * usd("g6e.2xlarge") + usd("m7i.xlarge"))
    assert "router 1×1 m7i.xlarge" in routed.detail
    data = config.model_dump(by_alias=True, exclude_unset=True)
    data["workloads"][0]["routing"] = {"replicas": 2}  # on the system nodes
    costs = by_subject(workload_costs(parse_config(data)))
    assert costs["gateway/qwen-vllm"].hourly == pytest.approx(2 * usd("g6e.2xlarge") + 2 * usd("m6i.xlarge"))
    del data["workloads"][0]["routing"]
    costs = by_subject(workload_costs(parse_config(data)))
    assert costs["gateway/qwen-vllm"].hourly == pytest.approx(2 * usd("g6e.2xlarge"))
