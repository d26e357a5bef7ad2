"""DynamoChart: the ``dynamo`` kind — a DynamoGraphDeployment (:class:`~inferstack.constructs.dynamo.DynamoGraph`):
the frontend on the system nodes and ``dynamo.vllm`` workers on the workload's pool, their command lines built from
the typed engine settings — aggregated, or prefill and decode with NIXL's KV transfer (LIBFABRIC on EFA) and KV
events for the router."""

from __future__ import annotations

import json
from typing import Any

from cdk8s_plus_36 import k8s

from inferstack.catalog.versions import ENGINE_IMAGES
from inferstack.charts.ray_serve import EFA_ENV
from inferstack.charts.vllm import engine_args_for, engine_env_for
from inferstack.charts.workload import StorageRefs, WorkloadChart, pod_placement
from inferstack.config.dynamo import DynamoMode, DynamoWorkloadConfig, RouterMode
from inferstack.constructs.dynamo import DynamoComponentProps, DynamoGraph, DynamoGraphProps
from inferstack.constructs.pod import PodPlacement
from inferstack.plan import ResolvedWorkload, Role

#: Labels the operator puts on every pod of a graph and of a component type (deploy/operator/internal/consts).
GRAPH_LABEL = "nvidia.com/dynamo-graph-deployment-name"
COMPONENT_TYPE_LABEL = "nvidia.com/dynamo-component-type"
#: Where a worker publishes its KV-cache events for the KV router (ZMQ; examples/backends/vllm/deploy/
#: disagg_router.yaml at 1.4.0: the workers the router picks — aggregated workers, or prefill — publish).
KV_EVENTS_CONFIG = {
    "publisher": "zmq",
    "topic": "kv-events",
    "endpoint": "tcp://*:20080",
    "enable_kv_cache_events": True,
}
#: libfabric settings the Dynamo EFA guide requires beyond FI_PROVIDER / FI_EFA_USE_DEVICE_RDMA (efa-on-aws.mdx): the
#: shared-memory provider off, so intra-node transfers also take the EFA path NIXL registered.
DYNAMO_EFA_ENV = {**EFA_ENV, "FI_EFA_ENABLE_SHM_TRANSFER": "0", "FI_EFA_ENABLE_SHM": "0"}


#: The frontend's /dev/shm, GiB (it runs no engine; the operator's default is 8).
FRONTEND_SHM_GIB = 1


def kv_transfer_config(backends: tuple[str, ...]) -> dict[str, Any]:
    """NIXL KV transfer of prefill and decode (both ``kv_both``, the backends named)."""
    return {
        "kv_connector": "NixlConnector",
        "kv_role": "kv_both",
        "kv_connector_extra_config": {"backends": list(backends)},
    }


def _json(value: dict[str, Any]) -> str:
    return json.dumps(value, separators=(",", ":"))


def _env(values: dict[str, str]) -> list[k8s.EnvVar]:
    return [k8s.EnvVar(name=name, value=value) for name, value in sorted(values.items())]


def zone_affinity(name: str) -> dict[str, Any]:
    """Prefill and decode pods in one zone (EFA does not cross zones): each pod requires a zone holding a prefill or
    decode pod of its graph (the first one places freely: it matches its own term)."""
    return {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {
                        "matchLabels": {GRAPH_LABEL: name},
                        "matchExpressions": [
                            {"key": COMPONENT_TYPE_LABEL, "operator": "In", "values": ["decode", "prefill"]}
                        ],
                    },
                    "topologyKey": "topology.kubernetes.io/zone",
                }
            ]
        }
    }


class DynamoChart(WorkloadChart):
    """The ``dynamo`` kind: storage plumbing, then the DynamoGraphDeployment and its PodMonitors."""

    graph: DynamoGraph

    def serve(self, resolved: ResolvedWorkload, refs: StorageRefs) -> None:
        workload = resolved.config
        assert isinstance(workload, DynamoWorkloadConfig)
        frontend: Role = resolved.roles["frontend"]
        components = [
            DynamoComponentProps(
                name="frontend",
                type="frontend",
                replicas=workload.frontend.replicas,
                image=workload.frontend.image or ENGINE_IMAGES["dynamo-frontend"],
                command=["python3", "-m", "dynamo.frontend"],
                args=["--router-mode", workload.frontend.router_mode.value],
                requests=frontend.pod.requests,
                limits=frontend.pod.limits,
                placement=PodPlacement(node_selector=frontend.pod.node_selector),
                shm_gib=FRONTEND_SHM_GIB,
            )
        ]
        components += [self._worker(resolved, refs, workload, name) for name in workload.roles]
        self.graph = DynamoGraph(
            self,
            "dynamo",
            DynamoGraphProps(
                name=workload.name,
                namespace=workload.namespace,
                components=components,
                pull_secrets=(workload.image_pull_secret,) if workload.image_pull_secret else (),
                monitoring=workload.monitoring,
            ),
        )

    def _worker(
        self, resolved: ResolvedWorkload, refs: StorageRefs, workload: DynamoWorkloadConfig, name: str
    ) -> DynamoComponentProps:
        role, settings = resolved.roles[name], workload.roles[name]
        loading = self.loading
        assert loading is not None
        engine = settings.engine
        flags = engine_args_for(engine, workload.model).render(port=False)
        args = ["--model", loading.model, "--served-model-name", workload.model.name, *flags, *loading.args]
        disaggregated = workload.mode is DynamoMode.DISAGGREGATED
        if disaggregated:
            backends = tuple(b.value for b in workload.kv_backends)
            args += ["--disaggregation-mode", name, "--kv-transfer-config", _json(kv_transfer_config(backends))]
        if workload.frontend.router_mode is RouterMode.KV and name in ("worker", "prefill"):
            args += ["--kv-events-config", _json(KV_EVENTS_CONFIG)]
        env = [*loading.env, *_env(engine_env_for(engine, workload.model))]
        if role.pod.efa:
            env += _env(DYNAMO_EFA_ENV)
        return DynamoComponentProps(
            name=name,
            type=name,
            replicas=settings.replicas,
            image=resolved.image,
            command=["python3", "-m", "dynamo.vllm"],
            args=args,
            env=env,
            requests=role.pod.requests,
            limits=role.pod.limits,
            placement=pod_placement(role.pod, affinity=zone_affinity(workload.name) if disaggregated else None),
            mounts=loading.mounts,
            init_containers=self.wait_for_model(resolved, refs),
            shm_gib=workload.resources.shm_gib,
            compilation_cache=self.caches.compile_claim,
        )
