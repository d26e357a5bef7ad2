"""``workloads[].routing``: the endpoint picker + Envoy router, its InferencePool, the paths its pods use and the
endpoint clients call — judged on the rendered objects (what the picker, Envoy and the API server receive), with
the facts read at gateway-api-inference-extension v1.5.0 (:mod:`inferstack.catalog.routing`)."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import cdk8s
import pytest
import yaml

from inferstack.catalog.metrics import SGLANG_QUEUE, VLLM
from inferstack.catalog.routing import (
    DESTINATION_HEADER,
    ENGINE_CONFIG_FIELDS,
    ENGINE_METRICS,
    EPP_GRPC_PORT,
    EPP_METRICS_PORT,
    READY_PODS,
    ROUTER_PORT,
    inference_pool_crd,
)
from inferstack.catalog.versions import HELM_CHARTS, IMAGES
from inferstack.charts.network_policies import NetworkPoliciesChart
from inferstack.config import InferstackConfig
from inferstack.config.errors import ConfigError
from inferstack.config.loader import parse_config
from inferstack.constructs.endpoint_picker import EndpointPicker, EndpointPickerProps
from inferstack.constructs.promql import metric_names
from inferstack.constructs.validation import PropError
from inferstack.gates.network import Address, Pod, connection_allowed
from inferstack.gates.references import selector_matches
from inferstack.plan import resolve
from inferstack.plan.bench import bench_pods
from inferstack.plan.endpoints import endpoint_of
from inferstack.plan.network import network_flows
from inferstack.plan.workloads import workloads_plan
from tests.charts.conftest import ROOT, render

EXAMPLE = yaml.safe_load((ROOT / "examples" / "litellm-gateway.yaml").read_text())
#: A vLLM workload of two replicas with a router, on its own (no gateway in front).
PLAIN: dict[str, Any] = {
    "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]},
    "workloads": [{"name": "chat", "pool": "gpu", "replicas": 2, "routing": {}, "model": {"id": "Qwen/Qwen3-8B"}}],
}
MULTINODE: dict[str, Any] = {
    "compute": {"karpenter_pools": [{"name": "p5", "instance_types": ["p5.48xlarge"], "efa": True}]},
    "workloads": [
        {
            "name": "big",
            "kind": "vllm_multinode",
            "pool": "p5",
            "replicas": 2,
            "routing": {},
            "efa": True,
            "nodes": 2,
            "model": {"id": "meta-llama/Llama-3.1-405B-Instruct"},
            "engine": {"tensor_parallel_size": 8, "pipeline_parallel_size": 2},
        }
    ],
}


def with_workload(data: dict[str, Any], index: int, **fields: Any) -> dict[str, Any]:
    changed = copy.deepcopy(data)
    changed["workloads"][index] = {**changed["workloads"][index], **fields}
    return changed


def objects_named(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (found,) = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


def containers(deployment: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in deployment["spec"]["template"]["spec"]["containers"]}


def port_named(container: dict[str, Any], name: str) -> int:
    (port,) = [p["containerPort"] for p in container.get("ports", []) if p["name"] == name]
    return port


def picker_config(objects: list[dict[str, Any]], router: str) -> dict[str, Any]:
    return yaml.safe_load(objects_named(objects, "ConfigMap", f"{router}-config")["data"]["config.yaml"])


def envoy_config(objects: list[dict[str, Any]], router: str) -> dict[str, Any]:
    return yaml.safe_load(objects_named(objects, "ConfigMap", f"{router}-envoy")["data"]["envoy.yaml"])


def pod_labels(deployment: dict[str, Any]) -> dict[str, str]:
    return deployment["spec"]["template"]["metadata"]["labels"]


@pytest.fixture(scope="module")
def example() -> list[dict[str, Any]]:
    return render(EXAMPLE)


# --- the InferencePool and what the picker reads ---


def test_the_pool_selects_the_serving_pods_only(example):
    for workload, engine_port in (("qwen-vllm", 8000), ("qwen-sglang", 30000)):
        pool = objects_named(example, "InferencePool", f"{workload}-router")
        selector = pool["spec"]["selector"]
        server = objects_named(example, "Deployment", workload)
        assert selector_matches(selector, pod_labels(server))
        assert pool["spec"]["targetPorts"] == [{"number": engine_port}]
        assert port_named(server["spec"]["template"]["spec"]["containers"][0], "http") == engine_port
        others = [o for o in example if o["kind"] in ("Deployment", "Job", "CronJob") and o is not server]
        for other in others:  # the router, the other engine, model-sync and bench Jobs
            template = other["spec"].get("template") or other["spec"]["jobTemplate"]["spec"]["template"]
            assert not selector_matches(selector, template["metadata"].get("labels", {})), other["metadata"]["name"]


def test_a_multinode_pool_selects_the_leaders():
    objects = render(MULTINODE)
    pool = objects_named(objects, "InferencePool", "big-router")
    (group,) = [o for o in objects if o["kind"] == "LeaderWorkerSet"]
    leader = group["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["metadata"]["labels"]
    worker = group["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["labels"]
    assert selector_matches(pool["spec"]["selector"], leader)
    assert not selector_matches(pool["spec"]["selector"], worker)


def test_the_picker_watches_its_pool(example):
    for router in ("qwen-vllm-router", "qwen-sglang-router"):
        deployment = objects_named(example, "Deployment", router)
        args = containers(deployment)["epp"]["args"]
        flag = {args[i]: args[i + 1] for i in range(len(args) - 1) if args[i].startswith("--")}
        pool = objects_named(example, "InferencePool", router)
        assert flag["--pool-name"] == pool["metadata"]["name"]
        assert flag["--pool-namespace"] == pool["metadata"]["namespace"] == deployment["metadata"]["namespace"]
        assert flag["--pool-group"] == pool["apiVersion"].split("/")[0]
        # the config file is the ConfigMap key the pod mounts
        (mount,) = containers(deployment)["epp"]["volumeMounts"]
        (volume,) = [v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == mount["name"]]
        (item,) = volume["configMap"]["items"]
        assert flag["--config-file"] == f"{mount['mountPath']}/{item['path']}"
        assert item["key"] in objects_named(example, "ConfigMap", volume["configMap"]["name"])["data"]
        assert pool["spec"]["endpointPickerRef"]["name"] == router
        service = objects_named(example, "Service", router)
        assert pool["spec"]["endpointPickerRef"]["port"]["number"] in [p["port"] for p in service["spec"]["ports"]]


def _extractor(config: dict[str, Any]) -> dict[str, Any]:
    (plugin,) = [p for p in config["plugins"] if p["type"] == "core-metrics-extractor"]
    return plugin["parameters"]


def test_the_picker_reads_each_engines_own_metrics(example):
    vllm = _extractor(picker_config(example, "qwen-vllm-router"))
    assert vllm["defaultEngine"] == "vllm"
    (entry,) = vllm["engineConfigs"]
    for spec in ("queuedRequestsSpec", "runningRequestsSpec", "kvUsageSpec"):
        assert entry[spec] in VLLM.gauges, spec  # the series the vLLM catalog says the image exports
    assert entry["loraSpec"] == ""  # exported with --enable-lora only: an error at every scrape otherwise
    assert entry["cacheInfoSpec"] == "vllm:cache_config_info"
    sglang = _extractor(picker_config(example, "qwen-sglang-router"))
    (entry,) = sglang["engineConfigs"]
    assert sglang["defaultEngine"] == entry["name"] == "sglang"
    assert entry["queuedRequestsSpec"] == SGLANG_QUEUE
    # SGLang 0.5.19 exports no sglang:cache_config_info (the picker's own default): its block gauges instead
    assert entry["cacheInfoSpec"] == ""
    assert (entry["cacheBlockSizeSpec"], entry["cacheNumBlocksSpec"]) == ("sglang:page_size", "sglang:num_pages")


def test_engine_configs_use_the_extractors_fields(example):
    """The extractor decodes its parameters leniently: a misspelled key would be dropped and its default read."""
    for router in ("qwen-vllm-router", "qwen-sglang-router"):
        (entry,) = _extractor(picker_config(example, router))["engineConfigs"]
        assert set(entry) <= ENGINE_CONFIG_FIELDS
    props = EndpointPickerProps(
        name="r",
        namespace="ns",
        pool_selector={"app": "x"},
        target_port=8000,
        engine="vllm",
        engine_config={"name": "vllm", "kvUsage": "vllm:kv_cache_usage_perc"},
        picker_image=IMAGES["endpoint-picker"],
        envoy_image=IMAGES["envoy-router"],
    )
    with pytest.raises(PropError, match="kvUsage"):
        EndpointPicker(cdk8s.Chart(cdk8s.App(), "c"), "r", props)


def test_lora_servers_report_their_adapters():
    data = with_workload(PLAIN, 0, engine={"extra_args": ["--enable-lora", "--max-loras", "2"]})
    (entry,) = _extractor(picker_config(render(data), "chat-router"))["engineConfigs"]
    assert entry["loraSpec"] == ENGINE_METRICS["vllm"].lora == "vllm:lora_requests_info"


def test_scorer_weights_follow_the_config():
    profile = picker_config(render(PLAIN), "chat-router")["schedulingProfiles"][0]["plugins"]
    assert {p["pluginRef"]: p["weight"] for p in profile} == {
        "queue-scorer": 2,
        "kv-cache-utilization-scorer": 2,
        "prefix-cache-scorer": 3,
    }
    data = with_workload(PLAIN, 0, routing={"scorers": {"prefix_cache": 0, "queue": 5}})
    config = picker_config(render(data), "chat-router")
    profile = config["schedulingProfiles"][0]["plugins"]
    assert {p["pluginRef"]: p["weight"] for p in profile} == {"queue-scorer": 5, "kv-cache-utilization-scorer": 2}
    assert "prefix-cache-scorer" not in {p["type"] for p in config["plugins"]}
    declared = {p["type"] for p in config["plugins"]}
    assert {p["pluginRef"] for p in profile} <= declared  # every profile entry names a declared plugin


# --- Envoy and the picker in one pod ---


def test_envoy_sends_requests_where_the_picker_says(example):
    deployment = objects_named(example, "Deployment", "qwen-vllm-router")
    pod = containers(deployment)
    envoy = envoy_config(example, "qwen-vllm-router")
    listeners = {lst["name"]: lst for lst in envoy["static_resources"]["listeners"]}
    clusters = {c["name"]: c for c in envoy["static_resources"]["clusters"]}
    requests = listeners["requests"]
    assert requests["address"]["socket_address"]["port_value"] == port_named(pod["envoy"], "http") == ROUTER_PORT
    manager = requests["filter_chains"][0]["filters"][0]["typed_config"]
    ext_proc = manager["http_filters"][0]
    assert ext_proc["name"] == "envoy.filters.http.ext_proc"
    target = ext_proc["typed_config"]["grpc_service"]["envoy_grpc"]["cluster_name"]
    endpoint = clusters[target]["load_assignment"]["endpoints"][0]["lb_endpoints"][0]["endpoint"]["address"]
    assert endpoint["socket_address"] == {"address": "127.0.0.1", "port_value": port_named(pod["epp"], "grpc")}
    # the picker serves TLS (--secure-serving is on unless turned off) and streams bodies both ways
    assert "--secure-serving=false" not in pod["epp"]["args"]
    assert clusters[target]["transport_socket"]["name"] == "envoy.transport_sockets.tls"
    assert ext_proc["typed_config"]["processing_mode"] == {
        "request_header_mode": "SEND",
        "response_header_mode": "SEND",
        "request_body_mode": "FULL_DUPLEX_STREAMED",
        "response_body_mode": "FULL_DUPLEX_STREAMED",
        "request_trailer_mode": "SEND",
        "response_trailer_mode": "SEND",
    }
    # Envoy health-checks the ext_proc port over gRPC: the picker serves it with --health-checking only
    assert "grpc_health_check" in clusters[target]["health_checks"][0]
    assert "--health-checking" in pod["epp"]["args"]
    route = manager["route_config"]["virtual_hosts"][0]["routes"][0]["route"]
    destination = clusters[route["cluster"]]
    assert destination["type"] == "ORIGINAL_DST"
    assert destination["original_dst_lb_config"]["http_header_name"] == DESTINATION_HEADER
    ready = pod["envoy"]["readinessProbe"]["httpGet"]
    assert listeners["envoy-ready"]["address"]["socket_address"]["port_value"] == ready["port"]
    # Envoy reads the file its -c names, from the ConfigMap it mounts
    args = pod["envoy"]["args"]
    path = args[args.index("-c") + 1]
    (mount,) = pod["envoy"]["volumeMounts"]
    assert path.startswith(mount["mountPath"] + "/")
    assert "trace" not in args  # the chart's trace level logs every request


def test_one_picker_is_active():
    single = objects_named(render(PLAIN), "Deployment", "chat-router")
    epp = containers(single)["epp"]
    assert "--ha-enable-leader-election" not in epp["args"]
    assert epp["readinessProbe"]["grpc"]["service"] == epp["livenessProbe"]["grpc"]["service"] == "inference-extension"
    assert single["spec"]["strategy"] == {"type": "Recreate"}
    objects = render(with_workload(PLAIN, 0, routing={"replicas": 2}))
    ha = objects_named(objects, "Deployment", "chat-router")
    epp = containers(ha)["epp"]
    assert ha["spec"]["replicas"] == 2 and "--ha-enable-leader-election" in epp["args"]
    assert (epp["livenessProbe"]["grpc"]["service"], epp["readinessProbe"]["grpc"]["service"]) == (
        "liveness",
        "readiness",
    )
    rules = objects_named(objects, "Role", "chat-router")["rules"]
    assert any("leases" in r["resources"] for r in rules)
    assert not any("leases" in r["resources"] for r in objects_named(render(PLAIN), "Role", "chat-router")["rules"])


def test_the_picker_may_read_what_it_watches():
    objects = render(PLAIN)
    account = objects_named(objects, "ServiceAccount", "chat-router")
    assert account.get("automountServiceAccountToken", True) is True  # it calls the API server
    deployment = objects_named(objects, "Deployment", "chat-router")
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "chat-router"
    rules = objects_named(objects, "Role", "chat-router")["rules"]
    granted = {(group, resource) for r in rules for group in r["apiGroups"] for resource in r["resources"]}
    assert {("", "pods"), ("inference.networking.k8s.io", "inferencepools")} <= granted
    binding = objects_named(objects, "RoleBinding", "chat-router")
    assert binding["roleRef"]["name"] == "chat-router"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "chat-router", "namespace": "inference"}]


def test_the_router_runs_on_the_system_nodes():
    spec = objects_named(render(PLAIN), "Deployment", "chat-router")["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"inferstack.io/pool": "system"}
    assert "priorityClassName" not in spec  # the serving class would evict the controllers on the system nodes
    annotations = objects_named(render(PLAIN), "Deployment", "chat-router")["spec"]["template"]["metadata"]
    assert annotations["annotations"] == {"karpenter.sh/do-not-disrupt": "true"}
    pod = containers({"spec": {"template": {"spec": spec}}})
    assert pod["epp"]["resources"] == {"limits": {"memory": "8Gi"}, "requests": {"cpu": "2", "memory": "4Gi"}}
    assert pod["envoy"]["resources"] == {"limits": {"memory": "1024Mi"}, "requests": {"cpu": "100m", "memory": "512Mi"}}


def test_one_release_of_the_extension():
    """The picker's image is the release of the pinned inferencepool chart; the installed CRD is the file the
    vendored schema was compiled from."""
    assert IMAGES["endpoint-picker"].rsplit(":", 1)[1] == HELM_CHARTS["inferencepool"].version
    index = json.loads((ROOT / "inferstack/catalog/crd_schemas/index.json").read_text())
    packaged = (ROOT / "inferstack/catalog/crd_manifests/inference.networking.k8s.io_inferencepools.yaml").read_bytes()
    assert (
        hashlib.sha256(packaged).hexdigest() == index["inference.networking.k8s.io/v1/InferencePool"]["source_sha256"]
    )
    crd = inference_pool_crd()
    assert crd["spec"]["group"] == "inference.networking.k8s.io"
    assert [v["name"] for v in crd["spec"]["versions"] if v["served"]] == ["v1"]
    shared = (
        ROOT.parent
        / "shared"
        / "crds"
        / "gateway-api-inference-extension"
        / Path("inference.networking.k8s.io_inferencepools.yaml")
    )
    if shared.is_file():
        assert shared.read_bytes() == packaged


# --- the endpoint and the paths ---


def test_clients_and_gateways_call_the_router(example):
    config = parse_config(EXAMPLE)
    endpoint = endpoint_of(config.workloads[0])
    assert endpoint.api_base == f"http://qwen-vllm-router.gateway.svc.cluster.local:{ROUTER_PORT}/v1"
    service = objects_named(example, "Service", "qwen-vllm-router")
    (http,) = [p for p in service["spec"]["ports"] if p["name"] == "http"]
    assert http["port"] == ROUTER_PORT
    gateway = yaml.safe_load(objects_named(example, "ConfigMap", "llm-gateway-config")["data"]["config.yaml"])
    bases = {m["litellm_params"].get("api_base") for m in gateway["model_list"]}
    assert endpoint.api_base in bases
    assert "http://qwen-sglang-router.gateway.svc.cluster.local:8081/v1" in bases


def _policies(data: dict[str, Any]) -> list[dict[str, Any]]:
    return NetworkPoliciesChart(cdk8s.App(), "np", network_flows(InferstackConfig.model_validate(data))).to_json()


ROUTER = Pod("inference", {"app.kubernetes.io/name": "chat-router", "app.kubernetes.io/component": "router"})
SERVER = Pod("inference", {"app.kubernetes.io/name": "chat"})
NEIGHBOUR = Pod("inference", {"app": "client"})
PROMETHEUS = Pod("monitoring", {"app.kubernetes.io/name": "prometheus"})
API_SERVER = Address("10.0.0.1")


def test_clients_reach_the_replicas_through_the_router():
    policies = _policies(PLAIN)
    assert connection_allowed(policies, NEIGHBOUR, ROUTER, ROUTER_PORT)
    assert not connection_allowed(policies, NEIGHBOUR, SERVER, 8000)  # not around the router
    assert connection_allowed(policies, ROUTER, SERVER, 8000)  # requests and /metrics
    assert connection_allowed(policies, ROUTER, API_SERVER, 443)  # the picker's watches
    assert connection_allowed(policies, PROMETHEUS, ROUTER, EPP_METRICS_PORT)
    assert not connection_allowed(policies, NEIGHBOUR, ROUTER, EPP_METRICS_PORT)
    assert not connection_allowed(policies, NEIGHBOUR, ROUTER, 9002)  # the picker's ext_proc is Envoy's only
    assert not connection_allowed(policies, ROUTER, Pod("other", {"app": "x"}), 8000)


@pytest.mark.parametrize("namespace_clients", [True, False])
def test_a_gateway_reaches_the_router_and_only_it_does(namespace_clients):
    policies = _policies({**EXAMPLE, "network_policies": {"namespace_clients": namespace_clients}})
    proxy = Pod("gateway", {"app.kubernetes.io/name": "llm-gateway"})
    neighbour = Pod("gateway", {"app": "x"})
    for workload, port in (("qwen-vllm", 8000), ("qwen-sglang", 30000)):
        router = Pod("gateway", {"app.kubernetes.io/name": f"{workload}-router"})
        server = Pod("gateway", {"app.kubernetes.io/name": workload})
        assert connection_allowed(policies, proxy, router, ROUTER_PORT)  # the gateway's egress and the router's ingress
        assert not connection_allowed(policies, neighbour, router, ROUTER_PORT)  # behind the gateway
        assert not connection_allowed(policies, proxy, server, port)
        assert connection_allowed(policies, router, server, port)


def test_a_benchmark_measures_through_the_router():
    data = {**with_workload(PLAIN, 0, bench={}), "network_policies": {"namespace_clients": False}}
    policies = _policies(data)
    bench = Pod("inference", bench_pods("chat"))
    assert connection_allowed(policies, bench, ROUTER, ROUTER_PORT)
    (resolved,) = resolve(parse_config(data)).workloads
    assert (
        resolved.bench is not None
        and resolved.bench.base_url == f"http://chat-router.inference.svc.cluster.local:{ROUTER_PORT}"
    )


def test_the_pool_crd_is_installed_for_a_router():
    assert "inference-pool" in workloads_plan(parse_config(PLAIN)).operators
    plain = copy.deepcopy(PLAIN)
    del plain["workloads"][0]["routing"]
    assert "inference-pool" not in workloads_plan(parse_config(plain)).operators


# --- config ---


@pytest.mark.parametrize(
    ("routing", "field", "words"),
    [
        ({"scorers": {"queue": 0, "kv_cache_utilization": 0, "prefix_cache": 0}}, "prefix_cache", "every scorer"),
        ({"memory_gib": 8, "memory_limit_gib": 4}, "memory_limit_gib", "below memory_gib"),
        ({"replicas": 4}, "replicas", "3"),
        ({"cpu": 0.001}, "cpu", "0.1"),
        ({"replicas": 1, "pool": 5}, "pool", "string"),
    ],
)
def test_bad_routing_is_named(routing, field, words):
    with pytest.raises(ConfigError) as raised:
        parse_config(with_workload(PLAIN, 0, routing=routing))
    assert "workloads[0].routing" in str(raised.value) and field in str(raised.value)
    assert words in str(raised.value)


def test_a_router_name_taken_by_a_workload_is_named():
    data = copy.deepcopy(PLAIN)
    data["workloads"].append({"name": "chat-router", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}})
    with pytest.raises(ConfigError) as raised:
        parse_config(data)
    assert "workloads[0].routing" in str(raised.value) and "chat-router" in str(raised.value)


def test_sglang_admin_paths_stay_open_through_a_router():
    """The router forwards every path, SGLang's admin endpoints included: SGLANG-ADMIN still warns, naming it."""
    from inferstack.rules import evaluate

    data = with_workload(
        PLAIN, 0, kind="sglang", model={"id": "Qwen/Qwen3-8B", "source": {"type": "s3_mount"}}, routing={}
    )
    (finding,) = [f for f in evaluate(parse_config(data)).warnings if f.rule == "SGLANG-ADMIN"]
    assert "chat-router" in finding.message
    behind = copy.deepcopy(EXAMPLE)  # a LiteLLM gateway in front of the routed SGLang: closed
    assert not [f for f in evaluate(parse_config(behind)).warnings if f.rule == "SGLANG-ADMIN"]


def test_the_router_alerts_when_it_reads_no_replica():
    objects = render(PLAIN)
    rule = objects_named(objects, "PrometheusRule", "chat-router")
    (group,) = rule["spec"]["groups"]
    alerts = {r["alert"]: r for r in group["rules"]}
    assert set(alerts) == {"InferstackRouterNoReplica", "InferstackRouterAbsent"}
    for alert in alerts.values():
        assert metric_names(alert["expr"]) == {READY_PODS}
        assert 'name="chat-router"' in alert["expr"] and 'namespace="inference"' in alert["expr"]
        assert alert["labels"]["inferstack_workload"] == "chat"  # routed with the workload's own alerts
    # the series is scraped: the PodMonitor selects the router pod on the port the picker serves metrics on
    monitor = objects_named(objects, "PodMonitor", "chat-router")
    deployment = objects_named(objects, "Deployment", "chat-router")
    assert selector_matches(monitor["spec"]["selector"], pod_labels(deployment))
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    assert port_named(containers(deployment)["epp"], endpoint["port"]) == EPP_METRICS_PORT
    quiet = render(with_workload(PLAIN, 0, monitoring=False))
    assert not [o for o in quiet if o["kind"] in ("PrometheusRule", "PodMonitor") and "router" in o["metadata"]["name"]]


def test_a_router_name_beyond_a_dns_label_is_named():
    data = with_workload(PLAIN, 0, name="a" * 57)
    with pytest.raises(ConfigError) as raised:
        parse_config(data)
    assert "workloads[0].name" in str(raised.value) and "at most 56" in str(raised.value)
    parse_config(with_workload(PLAIN, 0, name="a" * 56))


def test_pods_serving_tls_cannot_sit_behind_a_router():
    """Envoy sends plain HTTP to the replica and the picker scrapes /metrics over http."""
    with pytest.raises(ConfigError) as raised:
        parse_config(with_workload(PLAIN, 0, monitoring=False, probes={"scheme": "HTTPS"}))
    assert "routing" in str(raised.value) and "probes.scheme" in str(raised.value)


def test_the_router_runs_on_its_pool_with_its_taints():
    data = copy.deepcopy(PLAIN)
    data["compute"]["karpenter_pools"].append(
        {
            "name": "cpu",
            "instance_families": ["m7i"],
            "taints": [{"key": "team", "value": "ml", "effect": "NoSchedule"}],
        }
    )
    data["workloads"][0]["routing"] = {"pool": "cpu"}
    spec = objects_named(render(data), "Deployment", "chat-router")["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"inferstack.io/pool": "cpu"}
    assert {"key": "team", "operator": "Exists", "effect": "NoSchedule"} in spec["tolerations"]


def test_a_parked_workload_has_no_router_alerts():
    objects = render(with_workload(PLAIN, 0, replicas=0))
    assert not [o for o in objects if o["kind"] == "PrometheusRule" and o["metadata"]["name"] == "chat-router"]


def test_the_router_replicas_are_named_at_their_field():
    data = with_workload(PLAIN, 0, overrides={"Deployment/chat-router": {"spec": {"replicas": 3}}})
    with pytest.raises(ConfigError) as raised:
        render(data)
    assert "routing.replicas" in str(raised.value)
    data = with_workload(PLAIN, 0, overrides={"Deployment/chat": {"spec": {"replicas": 3}}})
    with pytest.raises(ConfigError) as raised:
        render(data)
    assert "routing.replicas" not in str(raised.value) and "replicas (or autoscaling)" in str(raised.value)


def test_the_pools_target_ports_cannot_be_overridden():
    """Another port on the InferencePool would have the picker scrape and route to a port the server does not
    serve: schema-valid, and every request fails."""
    patch = {"spec": {"targetPorts": [{"number": 9000}]}}
    with pytest.raises(ConfigError) as raised:
        render(with_workload(PLAIN, 0, overrides={"InferencePool/chat-router": patch}))
    assert "InferencePool/chat-router.spec.targetPorts" in str(raised.value) and "cannot be overridden" in str(
        raised.value
    )


def test_endpoints_name_the_router_for_a_gateway_backend():
    from inferstack.plan.access import access_report

    text = access_report(parse_config(EXAMPLE))
    assert "its router qwen-vllm-router admits the gateway" in text


def test_a_router_pool_that_is_no_pool_is_named():
    with pytest.raises(ConfigError) as raised:
        parse_config(with_workload(PLAIN, 0, routing={"pool": "gpuu"}))
    assert "workloads[0].routing.pool" in str(raised.value) and "did you mean" in str(raised.value).lower()


def test_the_applied_crd_says_it_is_inferstacks():
    from inferstack.stacks.workload_operators import InferencePoolCrdChart

    (crd,) = InferencePoolCrdChart(cdk8s.App(), "crd").to_json()
    assert crd["metadata"]["labels"] == {"app.kubernetes.io/part-of": "inferstack"}
    assert crd["spec"] == inference_pool_crd()["spec"]


def test_the_picker_matches_the_vendored_chart_values():
    """The pinned inferencepool chart's own values (tests/upstream, copied from ../shared/upstream): the picker's
    image, its ext_proc port, and the scheme and path it scrapes the servers' metrics on."""
    values = yaml.safe_load((ROOT / "tests/upstream/charts/inferencepool/v1.5.0/values.yaml").read_text())
    extension = values["inferenceExtension"]
    image = extension["image"]
    assert IMAGES["endpoint-picker"] == f"{image['registry']}/{image['repository']}:{image['tag']}"
    assert extension["extProcPort"] == EPP_GRPC_PORT
    source = extension["metricsDataSource"]
    (plugin,) = [
        p for p in picker_config(render(PLAIN), "chat-router")["plugins"] if p["type"] == "metrics-data-source"
    ]
    assert (plugin["parameters"]["scheme"], plugin["parameters"]["path"]) == (source["scheme"], source["path"])
