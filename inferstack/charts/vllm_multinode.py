"""VllmMultinodeChart: the ``vllm_multinode`` kind — one vLLM replica across ``nodes`` nodes as a LeaderWorkerSet
group (:class:`~inferstack.constructs.vllm.VllmMultinodeServer`), each pod on its own node with its share of the
ranks, EFA devices and the libfabric environment on EFA pools."""

from __future__ import annotations

from inferstack.catalog.instances import AcceleratorKind
from inferstack.charts.vllm import engine_args_of, engine_env, server_fields
from inferstack.charts.workload import StorageRefs, WorkloadChart
from inferstack.config.vllm_multinode import VllmMultinodeWorkloadConfig
from inferstack.constructs.vllm import VllmMultinodeServer, VllmMultinodeServerProps
from inferstack.plan import ResolvedWorkload

#: libfabric settings for NCCL over EFA (aws-samples/awsome-distributed-training efa-cheatsheet and its p5 NCCL
#: tests): the EFA provider, device RDMA (p4d/p5; harmless where libfabric ≥ 1.18 defaults it). They take effect
#: only in an image with libfabric and the aws-ofi-nccl plugin (rule MULTINODE-EFA-IMAGE).
EFA_ENV = {"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1"}
# With an EFA-enabled image swapped in, libfabric registers memory under the node's memlock limit (containers here
# drop every capability; vLLM's GPUDirect RDMA doc asks for IPC_LOCK, which Pod Security baseline refuses) and AWS's
# p5 NCCL tests request hugepages-2Mi or set FI_EFA_USE_HUGE_PAGE=0: verify NET/OFI in NCCL_DEBUG=INFO output.


class VllmMultinodeChart(WorkloadChart):
    """The ``vllm_multinode`` kind: the workload's storage plumbing plus its LeaderWorkerSet of vLLM groups."""

    server: VllmMultinodeServer

    def serve(self, resolved: ResolvedWorkload, refs: StorageRefs) -> None:
        workload = resolved.config
        assert isinstance(workload, VllmMultinodeWorkloadConfig)
        plan = resolved.server.pod
        if plan.accelerator is not AcceleratorKind.NVIDIA:  # MULTINODE-ACCELERATOR refuses it before synth
            raise ValueError(f"{resolved.path}: vllm_multinode runs on NVIDIA GPU pools only")
        env = engine_env(workload)
        if plan.efa:
            env |= EFA_ENV
        self.server = VllmMultinodeServer(
            self,
            "server",
            VllmMultinodeServerProps(
                **server_fields(resolved),
                image=resolved.image,
                model=self.loading,
                engine=engine_args_of(workload, neuron=False, image=resolved.image),
                env=env,
                init_containers=self.wait_for_model(resolved, refs),
                nodes=workload.nodes,
            ),
        )
