"""Compute config: validation of node groups and Karpenter pools."""

from __future__ import annotations

import pytest

from inferstack.config import ConfigError, parse_config


def problems(compute: dict, **top) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        parse_config({"compute": compute, **top})
    return [str(p) for p in exc.value.problems]


def test_cpu_type_refused_for_accelerated_node_group():
    (line,) = problems({"node_groups": [{"name": "x", "instance_type": "m6i.xlarge"}]})
    assert line.startswith("compute.node_groups[0].instance_type: 'm6i.xlarge' — has no GPU or Neuron device")


def test_reservation_required_for_capacity_block():
    (line,) = problems(
        {"node_groups": [{"name": "x", "instance_type": "p5.48xlarge", "capacity_type": "capacity_block"}]}
    )
    assert line.startswith("compute.node_groups[0].capacity_reservation_id: required with capacity_type capacity_block")


def test_zone_must_exist():
    (line,) = problems({"node_groups": [{"name": "x", "instance_type": "p5.48xlarge", "availability_zone": 2}]})
    assert line == "compute.node_groups[0].availability_zone: zone index 2 is outside the VPC's 2 zones — use 0 to 1"
    (line,) = problems(
        {"node_groups": [{"name": "x", "instance_type": "p5.48xlarge", "availability_zone": "us-east-1a"}]},
        network={"availability_zones": ["us-west-2a", "us-west-2b"]},
    )
    assert "use one of us-west-2a, us-west-2b" in line


def test_pool_needs_exactly_one_selection_and_one_accelerator_kind():
    lines = problems(
        {
            "karpenter_pools": [
                {"name": "a", "instance_families": ["g6e"], "instance_types": ["p5.48xlarge"]},
                {"name": "b", "instance_families": ["g6e", "inf2"]},
                {"name": "c", "instance_families": ["g9"]},
            ]
        }
    )
    assert lines[0].startswith("compute.karpenter_pools[0].instance_types: set exactly one of instance_families")
    assert lines[1].startswith("compute.karpenter_pools[1].instance_families: mixes neuron and nvidia")
    assert lines[2].startswith("compute.karpenter_pools[2].instance_families: ['g9'] — unknown instance family g9")


def test_pool_names_unique_and_not_system():
    (line,) = problems({"karpenter_pools": [{"name": "system", "instance_families": ["m7i"]}]})
    assert "not 'system'" in line


def test_budget_and_duration_validation():
    lines = problems(
        {
            "karpenter_pools": [
                {
                    "name": "gpu",
                    "instance_families": ["g6e"],
                    "consolidate_after": "soon",
                    "disruption_budgets": [{"nodes": "0", "schedule": "0 8 * * mon-fri"}],
                }
            ]
        }
    )
    assert any(
        line.startswith("compute.karpenter_pools[0].consolidate_after: 'soon' — not a duration") for line in lines
    )
    assert any("schedule and duration go together" in line for line in lines)


def test_accelerator_pool_defaults():
    pool = parse_config({"compute": {"karpenter_pools": [{"name": "gpu", "instance_families": ["g6e"]}]}})
    gpu = pool.compute.karpenter_pools[0]
    assert gpu.accelerator_limit == 64 and gpu.effective_root_volume_gib == 500
    assert gpu.effective_consolidation.value == "WhenEmpty"
    assert any(b.nodes == "0" and b.schedule for b in gpu.effective_budgets)


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({"bad key": "x"}, "bad key is not a valid label key"),
        ({"karpenter.sh/nodepool": "y"}, "karpenter.sh/nodepool is managed by inferstack, Karpenter or Kubernetes"),
        ({"team": "no way"}, "no way (label team) is not a valid label value"),
    ],
)
def test_pool_labels_are_valid_and_not_reserved(labels, expected):
    (line,) = problems({"karpenter_pools": [{"name": "gpu", "instance_families": ["g6e"], "labels": labels}]})
    assert line.startswith("compute.karpenter_pools[0].labels: ") and expected in line


def test_valid_labels_pass():
    config = parse_config(
        {
            "compute": {
                "karpenter_pools": [
                    {"name": "gpu", "instance_families": ["g6e"], "labels": {"example.com/tier": "large", "team": "ml"}}
                ]
            }
        }
    )
    assert config.compute.karpenter_pools[0].labels["team"] == "ml"
