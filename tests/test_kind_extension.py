"""The extension path: a kind registered here, in the test alone — config model, plan function, rule and chart
factory — is accepted by the config, judged by its rule, planned, and rendered through the shared serving pod,
without a line changed anywhere else."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Literal

import cdk8s
import pytest

from inferstack.charts.workload import StorageRefs, WorkloadChart
from inferstack.config import ConfigError, InferstackConfig, parse_config
from inferstack.config.kinds import WorkloadKind, register_kind, unregister_kind
from inferstack.config.workloads import SingleModelWorkload, WorkloadBase
from inferstack.constructs.pod import QueueMetric, ServingPodProps, ServingWorkload
from inferstack.gates.pod_security import Level, check_manifests
from inferstack.gates.references import External, check_references
from inferstack.plan import ResolvedPlatform, ResolvedPool, ResolvedWorkload, resolve, server_role, workload_plan
from inferstack.plan.runtime_paths import RuntimePaths
from inferstack.rules import Finding, Rule, evaluate


class EchoWorkloadConfig(SingleModelWorkload):
    """A toy engine: one GPU, an image, a port."""

    kind: Literal["echo"] = "echo"
    image: str = "registry.example.com/echo:1.0.0"
    port: int = 9000


def plan_echo(
    config: InferstackConfig, pools: Mapping[str, ResolvedPool], index: int, workload: WorkloadBase
) -> ResolvedWorkload:
    assert isinstance(workload, EchoWorkloadConfig)
    return workload_plan(
        config,
        pools,
        index,
        workload,
        roles={"server": server_role(config, pools, workload, ranks=1)},
        image=workload.image,
    )


def check_port(config: InferstackConfig) -> Iterator[Finding]:
    for index, workload in enumerate(config.workloads):
        if isinstance(workload, EchoWorkloadConfig) and workload.port < 1024:
            yield Finding(rule="ECHO-PORT", path=f"workloads[{index}].port", message="privileged", fix="use ≥ 1024")


ECHO_RULES = (Rule(id="ECHO-PORT", title="Echo listens on an unprivileged port", check=check_port),)


class EchoChart(WorkloadChart):
    def serve(self, resolved: ResolvedWorkload, refs: StorageRefs) -> None:
        workload, pod = resolved.config, resolved.server.pod
        assert isinstance(workload, EchoWorkloadConfig)
        self.server = ServingWorkload(
            self,
            "server",
            ServingPodProps(
                name=workload.name,
                namespace=workload.namespace,
                component="echo",
                image=resolved.image,
                command=["echo-server"],
                args=["--model", self.loading.model],
                container_name="echo",
                port=workload.port,
                home="/home/echo",
                user="echo",
                queue_metric=QueueMetric(prometheus="echo:queue", pods="echo_queue"),
                service_account=resolved.server.service_account,
                requests=pod.requests,
                limits=pod.limits,
                node_selector=pod.node_selector,
                tolerations=sorted(pod.tolerations),
                startup_seconds=pod.startup_seconds,
                volumes=list(self.loading.volumes),
                mounts=list(self.loading.mounts),
                monitoring=workload.monitoring,
            ),
        )


CONFIG = {
    "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]},
    "workloads": [
        {"name": "qwen", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}},
        {"name": "echo", "kind": "echo", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}, "sync_model": False},
    ],
}


def echo_paths(platform: ResolvedPlatform, workload: ResolvedWorkload) -> RuntimePaths:
    """Clients and Prometheus reach the echo port; nothing goes out."""
    port = workload.config.port  # type: ignore[attr-defined]
    return RuntimePaths(serving=(port,), metrics=(port,))


@pytest.fixture
def echo_kind() -> Iterator[None]:
    register_kind(
        WorkloadKind(
            name="echo",
            config=EchoWorkloadConfig,
            plan=plan_echo,
            chart=EchoChart,
            rules=(ECHO_RULES,),
            paths=echo_paths,
        )
    )
    yield
    unregister_kind("echo")


def test_the_kind_is_unknown_until_registered():
    with pytest.raises(ConfigError, match="unknown workload kind"):
        parse_config(CONFIG)


def test_a_registered_kind_is_configured_planned_judged_and_rendered(echo_kind):
    config = parse_config(CONFIG)
    assert isinstance(config.workloads[1], EchoWorkloadConfig)
    qwen, echo = resolve(config).workloads
    assert echo.kind == "echo" and echo.server.pod.requests["nvidia.com/gpu"] == "1" and echo.image.endswith("1.0.0")
    assert "prometheus" in echo.operators and qwen.kind == "vllm"
    assert evaluate(config).errors == []
    bad = parse_config({**CONFIG, "workloads": [CONFIG["workloads"][0], {**CONFIG["workloads"][1], "port": 80}]})
    assert [f.rule for f in evaluate(bad).errors] == ["ECHO-PORT"]

    objects = EchoChart(cdk8s.App(), "echo", echo, StorageRefs(region="us-east-1", bucket="b")).to_json()
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.example.com/echo:1.0.0"
    assert container["securityContext"]["runAsNonRoot"] and container["startupProbe"]["httpGet"]["port"] == 9000
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"
    on_cluster = External(namespaces=External().namespaces | {"inference"})
    assert check_references(objects, on_cluster) == []
    assert [str(f) for f in check_manifests(objects, {"inference": Level.RESTRICTED})] == []


def test_unregistering_restores_the_built_in_kinds(echo_kind):
    unregister_kind("echo")
    with pytest.raises(ConfigError, match="valid kinds: vllm, vllm_multinode, ray_serve"):
        parse_config(CONFIG)
    register_kind(
        WorkloadKind(name="echo", config=EchoWorkloadConfig, plan=plan_echo, chart=EchoChart, paths=echo_paths)
    )


def test_a_kind_without_runtime_paths_is_refused():
    with pytest.raises(ValueError, match="paths — declare the network paths"):
        register_kind(WorkloadKind(name="echo", config=EchoWorkloadConfig, plan=plan_echo, chart=EchoChart))
