"""Plan of the ``dynamo`` kind: the ``frontend`` role (CPU, on the system nodes) and one GPU role per worker kind —
``worker``, or ``prefill`` and ``decode`` — on the workload's pool. Every pod runs as the ServiceAccount the Dynamo
operator creates per graph for its Kubernetes service discovery (``<name>-k8s-service-discovery``, bound to a Role
that lists endpoints, pods and DynamoWorkerMetadata): a ServiceAccount of inferstack's would lack that Role."""

from __future__ import annotations

from collections.abc import Mapping

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.kubernetes import POOL_LABEL, SYSTEM_POOL
from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.config.dynamo import DynamoWorkloadConfig
from inferstack.config.model import InferstackConfig
from inferstack.config.workloads import WorkloadBase
from inferstack.plan import ResolvedPool, ResolvedWorkload, Role, workload_plan
from inferstack.plan.names import needs_reader
from inferstack.plan.placement import PodPlan, pod_plan


def runtime_image(workload: WorkloadBase, accelerator: AcceleratorKind = AcceleratorKind.NVIDIA) -> str:
    """The vLLM runtime image: the workload's ``image``, else the catalog's — its ``-efa`` build (libfabric,
    aws-ofi-nccl) when the workers request EFA."""
    assert isinstance(workload, DynamoWorkloadConfig)
    return workload.image or ENGINE_IMAGES["dynamo-vllm-efa" if workload.efa else "dynamo-vllm"]


def _frontend(workload: DynamoWorkloadConfig, account: str) -> Role:
    frontend = workload.frontend
    memory = f"{frontend.memory_gib:g}Gi"
    cpu = str(int(frontend.cpu)) if float(frontend.cpu).is_integer() else f"{int(frontend.cpu * 1000)}m"
    pod = PodPlan(
        accelerator=AcceleratorKind.NONE,
        accelerators=0,
        neuron_cores=0,
        cpu=frontend.cpu,
        memory_gib=frontend.memory_gib,
        efa=0,
        node_selector={POOL_LABEL: SYSTEM_POOL},
        tolerations=frozenset(),
        startup_seconds=0,
        estimated_startup_seconds=0,
        requests={"cpu": cpu, "memory": memory},
        limits={"memory": memory},
    )
    return Role(
        name="frontend",
        pod=pod,
        service_account=account,
        reads_bucket=False,
        pods_per_replica=frontend.replicas,
        pool=SYSTEM_POOL,
        creates_service_account=False,
    )


def plan_dynamo(
    config: InferstackConfig, pools: Mapping[str, ResolvedPool], index: int, workload: WorkloadBase
) -> ResolvedWorkload:
    assert isinstance(workload, DynamoWorkloadConfig)
    account = workload.serving_account  # the operator's discovery account (config/dynamo.py)
    reads = needs_reader(workload, pools[workload.pool].accelerator)
    roles: dict[str, Role] = {"frontend": _frontend(workload, account)}
    for name, role in workload.roles.items():
        engine = role.engine
        roles[name] = Role(
            name=name,
            pod=pod_plan(config, workload, ranks=engine.tensor_parallel_size * engine.pipeline_parallel_size),
            service_account=account,
            reads_bucket=reads,
            serves=False,
            pods_per_replica=role.replicas,
            creates_service_account=False,
        )
    return workload_plan(config, pools, index, workload, roles=roles, image=runtime_image(workload))
