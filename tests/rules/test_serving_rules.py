"""Serving rules: compliant and non-compliant cases; each finding names the field and what would work."""

from __future__ import annotations

from typing import ClassVar

from inferstack.config import parse_config
from inferstack.plan import resolve
from inferstack.rules import serving, storage
from inferstack.rules.base import Severity

L40S = {"name": "l40s", "instance_types": ["g6e.2xlarge", "g6e.12xlarge"]}
A100 = {"name": "a100", "instance_types": ["p4d.24xlarge"]}
INF2 = {"name": "inf2", "instance_types": ["inf2.24xlarge"]}
LLAMA_70B = {"id": "meta-llama/Llama-3.1-70B-Instruct", "hf_token_secret": {"name": "hf"}}
QWEN = {"id": "Qwen/Qwen3-8B"}


def cfg(workload: dict, pools=(L40S, A100)):
    return parse_config(
        {
            "compute": {"karpenter_pools": list(pools)},
            "workloads": [{"name": "w", "pool": "l40s", "model": QWEN, **workload}],
        }
    )


class TestFit:
    def test_70b_on_one_l40s_fails_naming_a_fitting_alternative(self):
        (finding,) = serving.check_fit(cfg({"model": LLAMA_70B}))
        assert finding.rule == "MODEL-FIT" and finding.path == "workloads[0].engine.tensor_parallel_size"
        assert "131.4 GiB of weights" in finding.message
        assert "tensor_parallel_size 4 on g6e.12xlarge" in finding.fix

    def test_70b_at_tp8_on_p4d_fits(self):
        config = cfg({"model": LLAMA_70B, "pool": "a100", "engine": {"tensor_parallel_size": 8}})
        assert list(serving.check_fit(config)) == []

    def test_too_long_context_names_the_longest_that_fits(self):
        config = cfg(
            {"model": LLAMA_70B, "pool": "l40s", "engine": {"tensor_parallel_size": 4, "max_model_len": 131_072}}
        )
        (finding,) = serving.check_fit(config)
        assert finding.path == "workloads[0].engine.max_model_len"
        assert "max_model_len ≤" in finding.fix and "less than one max_model_len" in finding.message


class TestParallelism:
    def test_tp_that_fits_a_node_is_compliant(self):
        assert list(serving.check_parallel_node(cfg({"engine": {"tensor_parallel_size": 4}}))) == []

    def test_tp_beyond_the_largest_node_is_flagged(self):
        (finding,) = serving.check_parallel_node(cfg({"engine": {"tensor_parallel_size": 8}}))
        assert finding.rule == "PARALLEL-NODE" and "at most 4 GPUs per node" in finding.message
        assert "p4d.24xlarge" in finding.fix

    def test_tp_dividing_heads_is_compliant(self):
        assert list(serving.check_tp_heads(cfg({"engine": {"tensor_parallel_size": 4}}))) == []

    def test_tp_not_dividing_heads_is_flagged(self):
        (finding,) = serving.check_tp_heads(cfg({"engine": {"tensor_parallel_size": 3}}))
        assert finding.rule == "TP-HEADS" and "32 attention heads" in finding.message and "1, 2, 4, 8" in finding.fix


class TestNeuron:
    def test_whole_devices_are_compliant(self):
        config = cfg({"pool": "inf2", "engine": {"tensor_parallel_size": 4}}, pools=(INF2,))
        assert list(serving.check_neuron_cores(config)) == []
        assert resolve(config).workloads[0].server.pod.accelerators == 2  # 4 cores = 2 Inferentia2 devices

    def test_odd_core_count_is_flagged(self):
        config = cfg({"pool": "inf2", "engine": {"tensor_parallel_size": 1}}, pools=(INF2,))
        (finding,) = serving.check_neuron_cores(config)
        assert finding.rule == "NEURON-CORES" and "multiple of 2" in finding.fix

    def test_neuron_needs_bucket_source(self):
        model = {**QWEN, "source": {"type": "hf"}}
        config = cfg({"pool": "inf2", "model": model, "engine": {"tensor_parallel_size": 2}}, pools=(INF2,))
        (finding,) = serving.check_neuron_artifacts(config)
        assert finding.rule == "NEURON-ARTIFACTS" and finding.path == "workloads[0].model.source.type"


class TestScheduling:
    def test_pod_that_fits_its_pool_is_compliant(self):
        assert list(serving.check_scheduling(cfg({}))) == []

    def test_eight_gpus_on_a_four_gpu_pool_fails_and_names_a_pool_that_fits(self):
        config = cfg({"model": LLAMA_70B, "engine": {"tensor_parallel_size": 8}})
        (finding,) = serving.check_scheduling(config)
        assert finding.rule == "SCHEDULING" and finding.path == "workloads[0].pool"
        assert "at most 4 nvidia.com/gpu per node" in finding.message
        assert "a100 (p4d.24xlarge)" in finding.fix

    def test_memory_request_beyond_every_node_fails(self):
        (finding,) = serving.check_scheduling(cfg({"resources": {"memory_gib": 2000}}))
        assert "2000 GiB" in finding.message

    def test_efa_request_on_a_pool_without_efa_fails(self):
        config = cfg({"efa": True}, pools=({"name": "l40s", "instance_types": ["g6e.2xlarge"]}, A100))
        (finding,) = serving.check_scheduling(config)
        assert "at most 0 EFA devices, the pod requests 1" in finding.message
        assert "a100 (p4d.24xlarge)" in finding.fix

    def test_efa_request_takes_every_device_of_an_efa_node(self):
        config = cfg({"efa": True, "pool": "a100", "model": LLAMA_70B, "engine": {"tensor_parallel_size": 8}})
        assert resolve(config).workloads[0].server.pod.requests["vpc.amazonaws.com/efa"] == "4"
        assert list(serving.check_scheduling(config)) == []


class TestStartup:
    def test_default_startup_is_sized_from_the_model(self):
        config = cfg({"model": LLAMA_70B, "pool": "a100", "engine": {"tensor_parallel_size": 8}})
        assert list(serving.check_startup(config)) == []
        assert resolve(config).workloads[0].server.pod.startup_seconds >= 300

    def test_too_short_startup_is_flagged(self):
        config = cfg({"startup_timeout_seconds": 60})
        (finding,) = serving.check_startup(config)
        assert finding.rule == "STARTUP-PROBE" and "startup_timeout_seconds ≥" in finding.fix


class TestNeuronStack:
    """Every branch of NEURON-STACK, against the pinned Neuron stack (vLLM 0.16 + vllm-neuron 0.5)."""

    INF2: ClassVar[dict] = {"name": "inf2", "instance_types": ["inf2.24xlarge"]}
    TRN2: ClassVar[dict] = {"name": "inf2", "instance_types": ["trn2.48xlarge"]}
    LLAMA: ClassVar[dict] = {"id": "meta-llama/Llama-3.1-8B-Instruct", "hf_token_secret": {"name": "hf"}}

    def _findings(self, engine: dict, pool: dict = INF2):
        config = parse_config(
            {
                "compute": {"karpenter_pools": [pool]},
                "workloads": [
                    {"name": "w", "pool": "inf2", "model": self.LLAMA, "engine": {"tensor_parallel_size": 8, **engine}}
                ],
            }
        )
        return list(serving.check_neuron_stack(config))

    def test_the_pinned_stack_is_compliant(self):
        assert self._findings({}) == []

    def test_trn2_is_refused(self):
        (finding,) = self._findings({}, self.TRN2)
        assert finding.path == "workloads[0].pool" and "Trainium2" in finding.message

    def test_pipeline_parallelism_is_refused(self):
        (finding,) = self._findings({"pipeline_parallel_size": 2, "tensor_parallel_size": 4})
        assert finding.path == "workloads[0].engine.pipeline_parallel_size"

    def test_fp8_kv_cache_is_refused(self):
        (finding,) = self._findings({"kv_cache_dtype": "fp8"})
        assert finding.path == "workloads[0].engine.kv_cache_dtype"

    def test_kv_layout_flags_are_errors(self):
        (finding,) = self._findings({"extra_args": ["--block-size=16"]})
        assert finding.severity is Severity.ERROR and "--block-size=16" in finding.message

    def test_other_extra_args_are_a_warning(self):
        (finding,) = self._findings({"extra_args": ["--disable-log-stats"]})
        assert finding.severity is Severity.WARNING and "unchecked" in finding.message


class TestNeuronDisk:
    def test_compile_scratch_and_weights_must_fit_the_node_disk(self):
        pool = {"name": "inf2", "instance_types": ["inf2.24xlarge"], "root_volume_gib": 200}
        config = parse_config(
            {
                "compute": {"karpenter_pools": [pool]},
                "workloads": [
                    {
                        "name": "w",
                        "pool": "inf2",
                        "model": {"id": "meta-llama/Llama-3.1-8B-Instruct", "hf_token_secret": {"name": "hf"}},
                        "engine": {"tensor_parallel_size": 8},
                    }
                ],
            }
        )
        (finding,) = storage.check_disk(config)
        assert finding.rule == "MODEL-DISK" and "compile Job" in finding.message and "root_volume_gib" in finding.fix


class TestNeuronCompileCapacity:
    """Servers hold their devices while waiting for the compile Job: the pool must fit both at once."""

    def _findings(self, max_accelerators: int, replicas: int = 1):
        pool = {"name": "inf2", "instance_types": ["inf2.24xlarge"], "max_accelerators": max_accelerators}
        workload = {
            "name": "w",
            "pool": "inf2",
            "replicas": replicas,
            "model": {"id": "meta-llama/Llama-3.1-8B-Instruct", "hf_token_secret": {"name": "hf"}},
            "engine": {"tensor_parallel_size": 8},
        }
        config = parse_config({"compute": {"karpenter_pools": [pool]}, "workloads": [workload]})
        return [f for f in serving.check_neuron_stack(config) if "compile Job need" in f.message]

    def test_room_for_the_server_and_the_job(self):
        assert self._findings(12) == []  # 2 × inf2.24xlarge (6 devices each; 4 per pod)

    def test_a_limit_that_holds_only_the_servers_deadlocks(self):
        (finding,) = self._findings(6)
        assert "max_accelerators" in finding.fix and "≥ 12" in finding.fix
