"""Compute rules, each with a compliant and a non-compliant case; findings name the config path and the fix."""

from __future__ import annotations

from typing import ClassVar

from inferstack.config import parse_config
from inferstack.plan import resolve
from inferstack.rules import ami, efa, evaluate, karpenter_limits, karpenter_nodes, node_daemons, placement


def cfg(node_groups=(), pools=(), **compute):
    return parse_config({"compute": {"node_groups": list(node_groups), "karpenter_pools": list(pools), **compute}})


P5 = {"name": "p5", "instance_type": "p5.48xlarge", "efa": True, "availability_zone": 0}


class TestEfaSupported:
    def test_efa_on_p5_is_compliant(self):
        assert list(efa.check_supported(cfg([P5]))) == []

    def test_efa_on_g6e_2xlarge_lists_capable_types(self):
        (finding,) = efa.check_supported(cfg([{**P5, "instance_type": "g6e.2xlarge"}]))
        assert finding.rule == "EFA-UNSUPPORTED"
        assert finding.path == "compute.node_groups[0].instance_type"
        assert "g6e.2xlarge has no EFA" in finding.message
        assert "g6e.12xlarge" in finding.fix and "efa: false" in finding.fix

    def test_efa_pool_of_a_non_efa_type(self):
        pool = {"name": "inf", "instance_types": ["inf2.48xlarge"], "efa": True, "availability_zone": 0}
        (finding,) = efa.check_supported(cfg(pools=[pool]))
        assert finding.path == "compute.karpenter_pools[0].efa"


class TestEfaSingleAz:
    def test_pinned_is_compliant(self):
        assert list(efa.check_single_az(cfg([P5]))) == []

    def test_unpinned_efa_group_is_flagged(self):
        group = {k: v for k, v in P5.items() if k != "availability_zone"}
        (finding,) = efa.check_single_az(cfg([group]))
        assert finding.rule == "EFA-AZ" and finding.path == "compute.node_groups[0].availability_zone"
        assert "2 zones" in finding.message and "availability_zone: 0" in finding.fix

    def test_unpinned_efa_pool_is_flagged(self):
        (finding,) = efa.check_single_az(cfg(pools=[{"name": "p5", "instance_types": ["p5.48xlarge"], "efa": True}]))
        assert finding.path == "compute.karpenter_pools[0].availability_zone"
        assert "placement group" in finding.message and "placement_group: false" in finding.fix

    SPREAD: ClassVar[dict] = {"name": "p5", "instance_types": ["p5.48xlarge"], "efa": True, "placement_group": False}
    MODEL: ClassVar[dict] = {"id": "meta-llama/Llama-3.1-405B-Instruct", "source": {"type": "s3"}}

    def _with(self, workload: dict):
        return parse_config({"compute": {"karpenter_pools": [self.SPREAD]}, "workloads": [workload]})

    def test_a_spread_pool_of_single_node_workloads_is_compliant(self):
        """EFA within one pod's node only: the pool may span zones (issue 26 §2.5's false positive)."""
        one_node = {
            "name": "one",
            "pool": "p5",
            "efa": True,
            "model": self.MODEL,
            "engine": {"tensor_parallel_size": 8},
        }
        assert list(efa.check_single_az(self._with(one_node))) == []

    def test_a_spread_pool_of_a_multinode_workload_is_flagged_by_name(self):
        group = {
            "name": "big",
            "kind": "vllm_multinode",
            "nodes": 2,
            "efa": True,
            "pool": "p5",
            "model": self.MODEL,
            "engine": {"tensor_parallel_size": 8, "pipeline_parallel_size": 2},
        }
        (finding,) = efa.check_single_az(self._with(group))
        assert finding.path == "compute.karpenter_pools[0].availability_zone"
        assert "big talk EFA between nodes" in finding.message and "availability_zone: 0" in finding.fix

    def test_a_spread_pool_of_prefill_and_decode_pods_is_flagged(self):
        """Prefill and decode pods move the KV cache over EFA between nodes."""
        engine = {"tensor_parallel_size": 8, "max_model_len": 16384}
        pd = {
            "name": "pd",
            "kind": "ray_serve",
            "pool": "p5",
            "efa": True,
            "models": [{"model": {"id": "meta-llama/Llama-3.1-70B-Instruct", "source": {"type": "s3_mount"}}}],
            "prefill_decode": {"prefill": {"engine": engine}, "decode": {"engine": engine}},
            "workers": {"max_pods": 1},
        }
        (finding,) = efa.check_single_az(self._with(pd))
        assert "pd talk EFA between nodes" in finding.message


class TestEfaOneType:
    def test_one_type_is_compliant(self):
        pool = {"name": "p5", "instance_types": ["p5.48xlarge"], "efa": True, "availability_zone": 0}
        assert list(efa.check_one_type(cfg(pools=[pool]))) == []

    def test_family_is_flagged(self):
        pool = {"name": "p5", "instance_families": ["p5"], "efa": True, "availability_zone": 0}
        (finding,) = efa.check_one_type(cfg(pools=[pool]))
        assert finding.rule == "EFA-ONE-TYPE" and "2 instance types" in finding.message


class TestPlacementWithCapacityBlock:
    BLOCK: ClassVar[dict] = {**P5, "capacity_type": "capacity_block", "capacity_reservation_id": "cr-0123456789abcdef0"}

    def test_block_without_placement_group_is_compliant(self):
        assert list(placement.check(cfg([self.BLOCK]))) == []
        assert not parse_config({"compute": {"node_groups": [self.BLOCK]}}).compute.node_groups[0].uses_placement_group

    def test_block_with_placement_group_is_flagged(self):
        (finding,) = placement.check(cfg([{**self.BLOCK, "placement_group": True}]))
        assert finding.rule == "PLACEMENT-CAPACITY-BLOCK"
        assert finding.path == "compute.node_groups[0].placement_group"


class TestAmi:
    def test_default_and_matching_are_compliant(self):
        assert list(ami.check(cfg([P5, {**P5, "name": "br", "ami": "bottlerocket_nvidia"}]))) == []

    def test_neuron_ami_on_gpu_is_flagged(self):
        (finding,) = ami.check(cfg([{**P5, "ami": "al2023_neuron"}]))
        assert finding.rule == "AMI-ACCELERATOR" and finding.path == "compute.node_groups[0].ami"
        assert "al2023_nvidia" in finding.fix

    def test_nvidia_ami_on_inferentia_is_flagged(self):
        group = {"name": "inf2", "instance_type": "inf2.24xlarge", "ami": "al2023_nvidia"}
        (finding,) = ami.check(cfg([group]))
        assert "neuron accelerators" in finding.message and "al2023_neuron" in finding.fix


class TestNodeDaemonTaints:
    POOL: ClassVar[dict] = {
        "name": "gpu",
        "instance_families": ["g6e"],
        "taints": [{"key": "dedicated", "value": "llm"}],
    }

    def test_tolerated_taint_is_compliant(self):
        config = cfg(pools=[self.POOL], gpu_operator={"extra_tolerations": [{"key": "dedicated"}]})
        assert list(node_daemons.check(config)) == []

    def test_untolerated_taint_is_flagged(self):
        (finding,) = node_daemons.check(cfg(pools=[self.POOL]))
        assert finding.rule == "NODE-DAEMON-TAINTS"
        assert finding.path == "compute.karpenter_pools[0].taints[0]"
        assert "extra_tolerations" in finding.fix

    def test_a_neuron_pool_taint_must_be_tolerated_by_the_neuron_plugin(self):
        pool = {**self.POOL, "instance_families": ["inf2"]}
        (finding,) = node_daemons.check(cfg(pools=[pool]))
        assert "Neuron device plugin" in finding.message and "compute.neuron_plugin.extra_tolerations" in finding.fix
        tolerated = cfg(pools=[pool], neuron_plugin={"extra_tolerations": [{"key": "dedicated"}]})
        assert list(node_daemons.check(tolerated)) == []

    def test_an_efa_pool_taint_must_be_tolerated_by_the_efa_plugin(self):
        pool = {
            "name": "efa",
            "instance_families": ["p5"],
            "efa": True,
            "availability_zone": 0,
            "taints": [{"key": "dedicated", "value": "llm"}],
        }
        gpu_only = cfg(pools=[pool], gpu_operator={"extra_tolerations": [{"key": "dedicated"}]})
        (finding,) = node_daemons.check(gpu_only)
        assert "EFA device plugin" in finding.message and "compute.efa_plugin" in finding.fix
        both = cfg(
            pools=[pool],
            gpu_operator={"extra_tolerations": [{"key": "dedicated"}]},
            efa_plugin={"extra_tolerations": [{"key": "dedicated"}]},
        )
        assert list(node_daemons.check(both)) == []

    def test_tolerating_another_effect_does_not_count(self):
        config = cfg(
            pools=[{**self.POOL, "taints": [{"key": "dedicated", "effect": "NoExecute"}]}],
            gpu_operator={"extra_tolerations": [{"key": "dedicated", "effect": "NoSchedule"}]},
        )
        (finding,) = node_daemons.check(config)
        assert "dedicated:NoExecute" in finding.message

    def test_prefer_no_schedule_taints_never_block_a_daemon(self):
        config = cfg(pools=[{**self.POOL, "taints": [{"key": "dedicated", "effect": "PreferNoSchedule"}]}])
        assert list(node_daemons.check(config)) == []


class TestKarpenterLimits:
    def test_default_limits_are_compliant(self):
        pools = [{"name": "gpu", "instance_families": ["g6e"]}, {"name": "cpu", "instance_families": ["m7i"]}]
        assert list(karpenter_limits.check(cfg(pools=pools))) == []

    def test_accelerator_limit_below_one_instance(self):
        pool = {"name": "p4d", "instance_types": ["p4d.24xlarge"], "max_accelerators": 4}
        (finding,) = karpenter_limits.check(cfg(pools=[pool]))
        assert finding.rule == "KARPENTER-LIMITS" and finding.path == "compute.karpenter_pools[0].max_accelerators"
        assert "8 accelerators" in finding.message and "≥ 8" in finding.fix

    def test_cpu_limit_below_one_instance(self):
        pool = {"name": "cpu", "instance_types": ["m7i.8xlarge"], "max_cpu": 16}
        (finding,) = karpenter_limits.check(cfg(pools=[pool]))
        assert finding.path == "compute.karpenter_pools[0].max_cpu"


def test_rules_run_in_evaluate():
    config = cfg([{**P5, "instance_type": "g6e.2xlarge", "ami": "al2023_neuron"}])
    assert {f.rule for f in evaluate(config).errors} == {"EFA-UNSUPPORTED", "AMI-ACCELERATOR"}


class TestKarpenterNodes:
    """KARPENTER-INSTANCE-STORE and KARPENTER-TERMINATION-GRACE, with the fields they judge."""

    G6E: ClassVar[dict] = {"name": "gpu", "instance_families": ["g6e"]}

    def test_raid0_on_types_with_nvme_is_compliant(self):
        assert (
            list(karpenter_nodes.check_instance_store(cfg(pools=[{**self.G6E, "instance_store_policy": "RAID0"}])))
            == []
        )

    def test_raid0_on_a_type_without_nvme_names_it_and_the_ones_with(self):
        pool = {"name": "neuron", "instance_types": ["inf2.8xlarge", "trn1.32xlarge"], "instance_store_policy": "RAID0"}
        (finding,) = karpenter_nodes.check_instance_store(cfg(pools=[pool]))
        assert finding.path == "compute.karpenter_pools[0].instance_store_policy"
        assert (
            "inf2.8xlarge has none" in finding.message
            and finding.fix == "keep only types with instance store (trn1.32xlarge)"
        )
        (none,) = karpenter_nodes.check_instance_store(cfg(pools=[{**pool, "instance_types": ["m7i.large"]}]))
        assert "drop instance_store_policy" in none.fix

    def test_a_grace_period_shorter_than_the_pods_is_flagged(self):
        (finding,) = karpenter_nodes.check_termination_grace(
            cfg(pools=[{**self.G6E, "termination_grace_period": "1m59s"}])
        )
        assert finding.path == "compute.karpenter_pools[0].termination_grace_period"
        assert "120 s" in finding.message and "at least 120s" in finding.fix
        assert (
            list(karpenter_nodes.check_termination_grace(cfg(pools=[{**self.G6E, "termination_grace_period": "2m"}])))
            == []
        )
        assert list(karpenter_nodes.check_termination_grace(cfg(pools=[self.G6E]))) == []

    def test_durations_read_as_karpenter_reads_them(self):
        assert karpenter_nodes.duration_seconds("1h30m15s") == 5415


class TestPoolSelection:
    """instance_categories, min_instance_generation and instance_sizes select exact catalog types (issue 26 §2.5)."""

    def _types(self, **pool):
        (parsed,) = cfg(pools=[{"name": "p", **pool}]).compute.karpenter_pools
        return [t.name for t in parsed.instances]

    def test_sizes_narrow_a_family(self):
        assert self._types(instance_families=["g6e"], instance_sizes=["12xlarge", "48xlarge"]) == [
            "g6e.12xlarge",
            "g6e.48xlarge",
        ]

    def test_a_category_from_a_generation_on(self):
        types = self._types(instance_categories=["g"], min_instance_generation=6, instance_sizes=["xlarge"])
        assert types == ["g6.xlarge", "g6e.xlarge"]  # g5 is generation 5

    def test_the_nodepool_lists_the_selected_types(self):
        from inferstack.charts.karpenter_pools import node_pool_props

        (pool,) = cfg(
            pools=[{"name": "p", "instance_families": ["g6e"], "instance_sizes": ["24xlarge"]}]
        ).compute.karpenter_pools
        (types,) = [
            r.values for r in node_pool_props(pool, None).requirements if r.key == "node.kubernetes.io/instance-type"
        ]
        assert types == ("g6e.24xlarge",)

    def test_bad_selections_are_named(self):
        import pytest

        from inferstack.config import ConfigError

        cases = {
            "unknown instance size 13xlarge": {"instance_families": ["g6e"], "instance_sizes": ["13xlarge"]},
            "unknown instance category zz": {"instance_categories": ["zz"]},
            "leave no instance type of the catalog": {"instance_families": ["g5"], "min_instance_generation": 6},
            "narrows instance_families or instance_categories": {
                "instance_types": ["g6e.2xlarge"],
                "instance_sizes": ["2xlarge"],
            },
            "set exactly one of": {"instance_families": ["g6e"], "instance_categories": ["g"]},
        }
        for expected, pool in cases.items():
            with pytest.raises(ConfigError, match=expected):
                cfg(pools=[{"name": "p", **pool}])


def test_a_multinode_group_without_efa_on_a_spread_efa_pool_is_warned_of_zones():
    """EFA-AZ judges groups that request EFA; a group that does not, on an EFA pool that may span zones, is judged
    by MULTINODE-ZONE (its NCCL traffic may cross zones)."""
    from inferstack.rules import multinode

    pool = {"name": "p5", "instance_types": ["p5.48xlarge"], "efa": True, "placement_group": False}
    group = {
        "name": "big",
        "kind": "vllm_multinode",
        "nodes": 2,
        "pool": "p5",
        "model": {"id": "meta-llama/Llama-3.1-405B-Instruct", "source": {"type": "s3"}},
        "engine": {"tensor_parallel_size": 8, "pipeline_parallel_size": 2},
    }
    config = parse_config({"compute": {"karpenter_pools": [pool]}, "workloads": [group]})
    (finding,) = multinode.check_zone(config)
    assert finding.path == "workloads[0].pool" and "spans all" in finding.message
    with_efa = parse_config({"compute": {"karpenter_pools": [pool]}, "workloads": [{**group, "efa": True}]})
    assert list(multinode.check_zone(with_efa)) == []  # EFA-AZ's to judge


def test_the_termination_grace_fix_names_a_period_that_outlasts_a_replacements_start():
    model = {"id": "Qwen/Qwen3-8B", "source": {"type": "s3"}}
    pool = {"name": "gpu", "instance_families": ["g6e"], "termination_grace_period": "60s"}
    config = parse_config(
        {"compute": {"karpenter_pools": [pool]}, "workloads": [{"name": "q", "pool": "gpu", "model": model}]}
    )
    (finding,) = karpenter_nodes.check_termination_grace(config)
    startup = next(iter(resolve(config).workloads[0].roles.values())).pod.startup_seconds
    assert f"{120 + startup}s lets a replacement start" in finding.fix


def test_raid0_moves_the_disk_rules_to_the_instance_store():
    """With RAID0 the kubelet's data (an hf cache) lives on the NVMe array, not the root volume."""
    from inferstack.rules import storage

    model = {"id": "Qwen/Qwen3-8B", "source": {"type": "hf", "cache_size_gib": 600}}
    pool = {"name": "gpu", "instance_types": ["g6e.12xlarge"], "root_volume_gib": 100}
    workload = {"name": "q", "pool": "gpu", "model": model}

    def disk(**extra):
        config = parse_config({"compute": {"karpenter_pools": [{**pool, **extra}]}, "workloads": [workload]})
        return [f for f in storage.check_disk(config) if "node disk" in f.message]

    (root,) = disk()
    assert "raise the pool's root_volume_gib" in root.fix
    assert disk(instance_store_policy="RAID0") == []  # 3,800 GB of NVMe


def test_gp3_iops_need_a_root_volume_of_their_size():
    import pytest

    from inferstack.config import ConfigError

    pool = {"name": "p", "instance_families": ["m7i"], "root_volume_gib": 20, "root_volume_iops": 16000}
    with pytest.raises(ConfigError, match="needs a root volume of at least 32 GiB"):
        cfg(pools=[pool])
    cfg(pools=[{**pool, "root_volume_gib": 32}])


class TestPlacementZone:
    def test_a_placement_group_spanning_zones_is_flagged(self):
        from inferstack.rules import placement_zone

        pool = {"name": "gpu", "instance_families": ["g6e"], "placement_group": True}
        (finding,) = placement_zone.check(cfg(pools=[pool]))
        assert (
            finding.path == "compute.karpenter_pools[0].availability_zone" and "placement_group: false" in finding.fix
        )
        assert list(placement_zone.check(cfg(pools=[{**pool, "availability_zone": 0}]))) == []
        assert list(placement_zone.check(cfg(pools=[{**pool, "placement_group": False}]))) == []
        efa = {"name": "p5", "instance_types": ["p5.48xlarge"], "efa": True}
        assert list(placement_zone.check(cfg(pools=[efa]))) == []  # EFA-AZ's to judge


def test_a_memory_limit_that_admits_too_few_nodes_for_a_group_is_named():
    """MULTINODE-CAPACITY with max_memory_gib: a 2-node group on g6e.12xlarge (384 GiB each) under 500 GiB gets one
    node and waits for the second forever."""
    from inferstack.catalog.instances import INSTANCE_TYPES
    from inferstack.config import parse_config
    from inferstack.rules import multinode

    node = INSTANCE_TYPES["g6e.12xlarge"].memory_gib

    def findings(limit: int) -> list:
        pool = {"name": "gpu", "instance_types": ["g6e.12xlarge"], "availability_zone": 0, "max_memory_gib": limit}
        workload = {
            "name": "llama",
            "kind": "vllm_multinode",
            "pool": "gpu",
            "nodes": 2,
            "model": {"id": "meta-llama/Llama-3.1-70B-Instruct", "hf_token_secret": {"name": "hf"}},
            "engine": {"tensor_parallel_size": 4, "pipeline_parallel_size": 2},
        }
        config = parse_config({"compute": {"karpenter_pools": [pool]}, "workloads": [workload]})
        return [f for f in multinode.check_capacity(config) if "max_memory_gib" in f.message]

    (finding,) = findings(int(node * 1.5))
    assert (
        finding.path == "workloads[0].replicas"
        and f"raise max_memory_gib of pool 'gpu' to ≥ {2 * node:g}" in finding.fix
    )
    assert findings(int(node * 2)) == []
