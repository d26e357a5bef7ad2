"""The extension path: a kind registered here, in the test alone — config model, plan function, rule, chart factory,
runtime paths, endpoint and metrics decision — is accepted by the config, judged by its rule, planned, rendered
through the shared serving pod, routed to by a LiteLLM gateway at its declared endpoint and admitted by the
NetworkPolicies on its declared port, without a line changed anywhere else."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Literal

import cdk8s
import pytest

from inferstack.charts.workload import StorageRefs, WorkloadChart, pod_placement
from inferstack.config import ConfigError, InferstackConfig, parse_config
from inferstack.config.kinds import KindEndpoint, WorkloadKind, register_kind, unregister_kind
from inferstack.config.workloads import SingleModelWorkload, WorkloadBase
from inferstack.constructs.pod import QueueMetric, ServingPodProps, ServingWorkload
from inferstack.gates.pod_security import Level, check_manifests
from inferstack.gates.references import External, check_references
from inferstack.plan import ResolvedPlatform, ResolvedPool, ResolvedWorkload, resolve, server_role, workload_plan
from inferstack.plan.network import network_flows
from inferstack.plan.runtime_paths import RuntimePaths
from inferstack.rules import Finding, Rule, evaluate
from tests.synth import SYNC_IMAGE


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
                placement=pod_placement(pod),
                startup_seconds=pod.startup_seconds,
                mounts=list(self.loading.mounts),
                monitoring=workload.monitoring,
            ),
        )


GATEWAY = {
    "name": "gateway",
    "kind": "litellm",
    "pool": "cpu",
    "routes": [{"name": "echo", "backends": [{"workload": "echo"}]}],
    "master_key_secret": {"name": "litellm", "key": "master-key"},
}
CONFIG = {
    "compute": {
        "karpenter_pools": [
            {"name": "gpu", "instance_types": ["g6e.2xlarge"]},
            {"name": "cpu", "instance_families": ["m7i"]},
        ]
    },
    "workloads": [
        {"name": "qwen", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}},
        {"name": "echo", "kind": "echo", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}, "sync_model": False},
    ],
}


def echo_paths(platform: ResolvedPlatform, workload: ResolvedWorkload) -> RuntimePaths:
    """Clients and Prometheus reach the echo port; nothing goes out."""
    port = workload.config.port  # type: ignore[attr-defined]
    return RuntimePaths(serving=(port,), metrics=(port,))


def echo_kind_value(**changes: object) -> WorkloadKind:
    parts: dict = {
        "name": "echo",
        "config": EchoWorkloadConfig,
        "plan": plan_echo,
        "chart": EchoChart,
        "rules": (ECHO_RULES,),
        "paths": echo_paths,
        "endpoint": KindEndpoint(port=9000, path="/v1", provider="openai"),
        "scrapeable": False,
    }
    return WorkloadKind(**{**parts, **changes})


@pytest.fixture
def echo_kind() -> Iterator[None]:
    register_kind(echo_kind_value())
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

    objects = EchoChart(
        cdk8s.App(), "echo", echo, StorageRefs(region="us-east-1", bucket="b", sync_image=SYNC_IMAGE)
    ).to_json()
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.example.com/echo:1.0.0"
    assert container["securityContext"]["runAsNonRoot"] and container["startupProbe"]["httpGet"]["port"] == 9000
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"
    on_cluster = External(namespaces=External().namespaces | {"inference"})
    assert check_references(objects, on_cluster) == []
    assert [str(f) for f in check_manifests(objects, {"inference": Level.RESTRICTED})] == []


def test_a_gateway_routes_to_the_declared_endpoint_and_the_policies_admit_it(echo_kind):
    config = parse_config({**CONFIG, "workloads": [*CONFIG["workloads"], GATEWAY]})
    assert evaluate(config).errors == []
    gateway = resolve(config).workloads[2]
    (backend,), problems = gateway.details
    assert problems == []
    assert backend.api_base == "http://echo.inference.svc.cluster.local:9000/v1"
    assert backend.model == "openai/Qwen/Qwen3-8B"
    (namespace,) = network_flows(config)
    echo = next(f for f in namespace.workloads if f.name == "echo")
    assert any(peer.pods == gateway_pods(namespace) and peer.ports == (9000,) for peer in echo.ingress)


def gateway_pods(namespace) -> dict[str, str] | None:
    return next(f.pods for f in namespace.workloads if f.name == "gateway")


def test_the_metrics_decision_is_the_kinds(echo_kind):
    """``scrapeable=False``: monitoring off is not warned about (nothing to scrape); a scrapeable kind is."""
    quiet = parse_config({**CONFIG, "workloads": [{**CONFIG["workloads"][1], "monitoring": False}]})
    assert [f.rule for f in evaluate(quiet).warnings if f.rule == "CHECKLIST-MONITORING"] == []
    register_kind(echo_kind_value(scrapeable=True))
    assert [f.path for f in evaluate(quiet).warnings if f.rule == "CHECKLIST-MONITORING"] == ["workloads[0].monitoring"]


def test_a_kind_without_an_endpoint_says_why(echo_kind):
    register_kind(echo_kind_value(endpoint=None, no_endpoint="echo speaks its own protocol"))
    config = parse_config({**CONFIG, "workloads": [*CONFIG["workloads"], GATEWAY]})
    (error,) = evaluate(config).errors
    assert error.path == "workloads[2].routes[0].backends[0].workload" and "its own protocol" in error.message


def test_unregistering_restores_the_built_in_kinds(echo_kind):
    unregister_kind("echo")
    with pytest.raises(ConfigError, match="valid kinds: vllm, vllm_multinode, ray_serve"):
        parse_config(CONFIG)
    register_kind(echo_kind_value())


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"endpoint": None}, "endpoint — give its OpenAI-compatible endpoint, or no_endpoint"),
        ({"paths": None}, "paths must be callable"),
        ({"operators": ("istio",)}, "operators ['istio'] — inferstack installs"),
        ({"images": ("echo",)}, "images ['echo'] — pinned images:"),
    ],
)
def test_a_kind_missing_a_part_is_refused_naming_it(changes, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        register_kind(echo_kind_value(**changes))


def test_built_in_kinds_cannot_be_unregistered():
    with pytest.raises(ValueError, match="vllm is a built-in kind"):
        unregister_kind("vllm")
