"""GATE: the NetworkPolicies every synthesized app applies admit the app's own paths and nothing else — evaluated
over the real manifests (policies and pod templates) with the small evaluator in
``inferstack.gates.network``.

Pods come from the synthesized pod templates and, for the NIM operator (which makes its pods from a NIMService and a
NIMCache without a template of ours), from its projection (:mod:`inferstack.gates.nim`). The operators' own calls
into the pods come from their sources (:mod:`inferstack.gates.operator_calls`), not from the kinds' declarations."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from inferstack.gates.network import Address, Pod, connection_allowed
from inferstack.gates.nim import nim_pods
from inferstack.gates.operator_calls import operator_calls
from inferstack.gates.pods import all_pod_templates
from inferstack.gates.projections import projected_pods
from inferstack.gates.references import selector_matches
from inferstack.plan import resolve
from inferstack.plan.endpoints import NoEndpointError, endpoint_of
from inferstack.plan.names import namespaces_to_create
from inferstack.plan.network import _backends, runtime_paths
from inferstack.plan.runtime_paths import RAY_INTERNAL

PROMETHEUS = Pod("monitoring", {"app.kubernetes.io/name": "prometheus"})
DNS = Pod("kube-system", {"k8s-app": "kube-dns"})
S3 = Address("52.216.8.1")
POD_IDENTITY = Address("169.254.170.23")
STRANGER_NAMESPACE = "someone-else"


def pods_by_workload(objects: list[dict[str, Any]]) -> dict[tuple[str, str], list[Pod]]:
    found: dict[tuple[str, str], list[Pod]] = {}
    templates = [*all_pod_templates(objects), *all_pod_templates(nim_pods(objects))]
    for pod in (Pod(t.namespace, dict(t.labels)) for t in templates):
        name = pod.labels.get("app.kubernetes.io/name")
        if name:
            found.setdefault((pod.namespace, name), []).append(pod)
    return found


def batch_pods(objects: list[dict[str, Any]]) -> list[Pod]:
    return [
        Pod(t.namespace, dict(t.labels))
        for t in all_pod_templates(objects)
        if t.labels.get("app.kubernetes.io/component") in ("model-sync", "neuron-compile")
    ]


def _owned(app) -> set[str]:
    return set(namespaces_to_create(app.config))


def test_the_default_platform_has_policies(default_app):
    policies = [o for o in default_app.kubernetes_objects() if o["kind"] == "NetworkPolicy"]
    names = sorted(p["metadata"]["name"] for p in policies)
    expected = ["inferstack-default-deny", "inferstack-dns", "inferstack-model-sync", "inferstack-namespace"]
    assert names == [*expected, "ministral"]


def test_vpc_cni_enforces_network_policies(default_app):
    addons = default_app.resources("cluster", "AWS::EKS::Addon").values()
    (addon,) = [r for r in addons if r["Properties"]["AddonName"] == "vpc-cni"]
    assert addon["Properties"]["ConfigurationValues"] == '{"enableNetworkPolicy": "true"}'


def _scraped_ports(objects: list[dict[str, Any]], workload) -> set[int]:
    """The container ports the workload's PodMonitors scrape, resolved on the pods that run (named ports looked up in
    the pod templates and the operators' projected pods)."""
    templates = [*all_pod_templates(objects), *all_pod_templates(projected_pods(objects))]
    ports: set[int] = set()
    for monitor in objects:
        if monitor.get("kind") != "PodMonitor" or monitor["metadata"]["namespace"] != workload.namespace:
            continue
        selector = monitor["spec"]["selector"]
        for template in templates:
            if template.namespace != workload.namespace or not selector_matches(selector, template.labels):
                continue
            if template.labels.get("app.kubernetes.io/name") != workload.name:
                continue
            named = {p.get("name"): p["containerPort"] for _, c in template.containers() for p in c.get("ports") or []}
            for endpoint in monitor["spec"]["podMetricsEndpoints"]:
                port = endpoint.get("portNumber") or named.get(endpoint.get("port"))
                assert port, f"{monitor['metadata']['name']}: port {endpoint.get('port')} is on no pod it selects"
                ports.add(int(port))
    return ports


def test_app_paths_are_admitted(any_app):
    """Every path a kind declares (inferstack/plan/runtime_paths.py), and every port a PodMonitor that runs scrapes."""
    objects = any_app.kubernetes_objects()
    platform = resolve(any_app.config)
    pods = pods_by_workload(objects)
    owned = _owned(any_app)
    behind_gateway = _behind_gateways(any_app.config)
    for workload in platform.workloads:
        if workload.namespace not in owned:
            continue
        paths = runtime_paths(platform, workload)
        mine = pods[(workload.namespace, workload.name)]
        for source in mine:
            assert connection_allowed(objects, source, DNS, 53, "UDP"), f"{workload.name}: DNS"
            for target in mine:
                for port in (6379, 29501, 19090) if paths.group is None else paths.group:
                    assert connection_allowed(objects, source, target, port), f"{workload.name}: own pods {port}"
        if workload.config.monitoring:
            for port in _scraped_ports(objects, workload) | set(paths.metrics):
                assert all(connection_allowed(objects, PROMETHEUS, pod, port) for pod in mine), (workload.name, port)
        client = Pod(workload.namespace, {"app": "client"})
        if (workload.namespace, workload.name) in behind_gateway:
            for port in paths.serving:  # the gateway's keys and limits cannot be bypassed (issue 24 §1)
                assert not any(connection_allowed(objects, client, pod, port) for pod in mine), (workload.name, port)
        elif paths.direct_clients:
            for port in paths.serving:
                assert all(connection_allowed(objects, client, pod, port) for pod in mine), f"{workload.name}: clients"
            # independently of the declarations: the port behind the workload's own endpoint Service
            target = _endpoint_target_port(objects, workload)
            if target is not None:
                assert all(connection_allowed(objects, client, pod, target) for pod in mine), (workload.name, target)
        for call in paths.calls:
            caller = Pod(call.namespace, dict(call.pods or {"app": "operator"}))
            for port in call.ports:
                assert all(connection_allowed(objects, caller, pod, port) for pod in mine), (workload.name, call)
        if paths.downloads or paths.api_server:
            assert all(connection_allowed(objects, pod, S3, 443) for pod in mine), f"{workload.name}: HTTPS out"
        if workload.readers:
            assert all(connection_allowed(objects, pod, POD_IDENTITY, 80) for pod in mine), workload.name
        if workload.kind == "litellm":
            for backend in _backends(platform, workload):
                router = backend.router
                port = router.port if router else runtime_paths(platform, backend).serving[0]
                name = router.name if router else backend.name
                for target in pods[(backend.namespace, name)]:
                    assert all(connection_allowed(objects, g, target, port) for g in mine), backend.name
    for job in batch_pods(objects):
        assert connection_allowed(objects, job, S3, 443)
        assert connection_allowed(objects, job, POD_IDENTITY, 80)


def _behind_gateways(config) -> set[tuple[str, str]]:
    """(namespace, name) of the workloads a LiteLLM gateway routes to without ``direct_clients``, read from the
    config (not from the policy generator)."""
    found: dict[tuple[str, str], bool] = {}
    for gateway in config.workloads:
        for route in getattr(gateway, "routes", ()):
            for backend in route.backends:
                if backend.workload is None:
                    continue
                for target in config.workloads:
                    if target.name == backend.workload and backend.namespace in (None, target.namespace):
                        key = (target.namespace, target.name)
                        found[key] = found.get(key, False) or backend.direct_clients
    return {key for key, direct in found.items() if not direct}


def test_a_backend_behind_a_gateway_is_reached_only_through_it():
    """A LiteLLM backend admits the gateway, not the clients the gateway serves (they would skip its master key,
    virtual keys and rpm limits) — unless its backend entry sets direct_clients."""
    import cdk8s

    from inferstack.charts.network_policies import NetworkPoliciesChart
    from inferstack.config import InferstackConfig
    from inferstack.config.loader import load_config
    from inferstack.plan.network import network_flows

    data = load_config("examples/litellm-gateway.yaml").model_dump(by_alias=True, exclude_unset=True)
    data["network_policies"] = {"client_namespaces": ["apps"]}
    proxy = Pod("gateway", {"app.kubernetes.io/name": "llm-gateway"})
    neighbour, app = Pod("gateway", {"app": "x"}), Pod("apps", {"app": "x"})
    # both backends run behind their routers (routing): the routers are what clients and the gateway reach
    vllm, sglang = (Pod("gateway", {"app.kubernetes.io/name": f"{n}-router"}) for n in ("qwen-vllm", "qwen-sglang"))
    objects = NetworkPoliciesChart(cdk8s.App(), "np", network_flows(InferstackConfig.model_validate(data))).to_json()
    for backend, port in ((vllm, 8081), (sglang, 8081)):
        assert connection_allowed(objects, proxy, backend, port)
        assert not connection_allowed(objects, neighbour, backend, port)
        assert not connection_allowed(objects, app, backend, port)
    assert connection_allowed(objects, app, proxy, 4000)  # the gateway itself serves its clients
    data["workloads"][2]["routes"][0]["backends"][0]["direct_clients"] = True
    objects = NetworkPoliciesChart(cdk8s.App(), "np", network_flows(InferstackConfig.model_validate(data))).to_json()
    assert connection_allowed(objects, app, vllm, 8081) and connection_allowed(objects, neighbour, vllm, 8081)
    assert not connection_allowed(objects, app, sglang, 8081)
    for name, port in (("qwen-vllm", 8000), ("qwen-sglang", 30000)):  # never around the router
        assert not connection_allowed(objects, app, Pod("gateway", {"app.kubernetes.io/name": name}), port)


def _endpoint_target_port(objects: list[dict[str, Any]], workload) -> int | None:
    """The container port behind the OpenAI endpoint of ``workload`` (its Service's targetPort, a named port looked
    up in the pods it selects), when inferstack renders that Service; None for operator-made Services and kinds
    without an endpoint."""
    try:
        base = endpoint_of(workload.config).api_base
    except NoEndpointError:
        return None
    host, _, rest = base.split("//", 1)[1].partition(":")
    port = int(rest.split("/", 1)[0]) if rest else 80
    name = host.split(".", 1)[0]
    services = [
        o
        for o in objects
        if o["kind"] == "Service"
        and o["metadata"]["name"] == name
        and o["metadata"].get("namespace") == workload.namespace
    ]
    if not services:
        return None
    (entry,) = [p for p in services[0]["spec"]["ports"] if p["port"] == port]
    target = entry.get("targetPort", port)
    if isinstance(target, int):
        return target
    selector = services[0]["spec"].get("selector") or {}
    for template in all_pod_templates(objects):
        if template.namespace == workload.namespace and selector_matches({"matchLabels": selector}, template.labels):
            for _, container in template.containers():
                for declared in container.get("ports") or []:
                    if declared.get("name") == target:
                        return int(declared["containerPort"])
    raise AssertionError(f"{name}: targetPort {target!r} is on no pod the Service selects")


#: Ports no client may reach on any serving pod: Ray's GCS, dashboard, client server and dashboard agent, and a port
#: no kind serves on.
CONTROL_PORTS = (*RAY_INTERNAL, 7777)


def test_nothing_else_is_admitted(any_app):
    objects = any_app.kubernetes_objects()
    platform = resolve(any_app.config)
    pods = pods_by_workload(objects)
    owned = _owned(any_app)
    stranger = Pod(STRANGER_NAMESPACE, {"app": "client"})
    impostor = Pod("monitoring", {"app.kubernetes.io/name": "grafana"})
    gateways = {
        (b.namespace, b.name) for w in platform.workloads if w.kind == "litellm" for b in _backends(platform, w)
    }
    for workload in platform.workloads:
        if workload.namespace not in owned:
            continue
        paths = runtime_paths(platform, workload)
        mine = pods[(workload.namespace, workload.name)]
        neighbour = Pod(workload.namespace, {"app": "client"})
        assert not connection_allowed(objects, neighbour, S3, 443), f"{workload.namespace}: default deny egress"
        for pod in mine:
            for port in (*CONTROL_PORTS, *paths.metrics):
                if port in paths.serving:
                    continue
                assert not connection_allowed(objects, neighbour, pod, port), f"{workload.name}: a client on {port}"
            if not paths.direct_clients:
                assert not any(connection_allowed(objects, neighbour, pod, p) for p in paths.serving), workload.name
            if paths.group == ():
                for other in mine:
                    assert not connection_allowed(objects, pod, other, 6379), f"{workload.name}: replicas apart"
            assert not connection_allowed(objects, stranger, pod, 8000), f"{workload.name}: another namespace"
            assert not connection_allowed(objects, impostor, pod, 8000), f"{workload.name}: not Prometheus"
            assert not connection_allowed(objects, pod, S3, 80), f"{workload.name}: plain HTTP out"
            assert not connection_allowed(objects, pod, stranger, 8000), f"{workload.name}: out to another namespace"
            if not (paths.downloads or paths.api_server or workload.kind == "litellm"):
                assert not connection_allowed(objects, pod, S3, 443), f"{workload.name}: HTTPS out it never uses"
            for job in batch_pods(objects):
                assert not connection_allowed(objects, job, pod, 8000), f"{workload.name}: from a batch Job"
        for other in platform.workloads:
            if other is workload or other.namespace not in owned or (other.namespace, other.name) in gateways:
                continue
            if other.namespace == workload.namespace and any_app.config.network_policies.namespace_clients:
                continue  # neighbours are clients (namespace_clients); test_client_namespaces_open_the_endpoints
            for source in mine:
                for target in pods[(other.namespace, other.name)]:
                    if workload.kind == "litellm":
                        continue
                    assert not connection_allowed(objects, source, target, 8000), f"{workload.name} → {other.name}"


def test_a_ray_client_reaches_serve_and_nothing_of_the_cluster(ray_multi_app):
    """Defect: client ingress listed no ports, so a client of the Ray app reached the Jobs API on 8265 (Ray 2.58 runs
    with authentication off by default) and could run code in a cluster holding HF_TOKEN."""
    objects = ray_multi_app.kubernetes_objects()
    platform = resolve(ray_multi_app.config)
    (workload,) = [w for w in platform.workloads if w.kind == "ray_serve"]
    client = Pod(workload.namespace, {"app": "client"})
    kuberay = Pod("kuberay-system", {"app.kubernetes.io/name": "kuberay-operator"})
    for pod in pods_by_workload(objects)[(workload.namespace, workload.name)]:
        assert connection_allowed(objects, client, pod, 8000)
        for port in RAY_INTERNAL:
            assert not connection_allowed(objects, client, pod, port), port
        assert connection_allowed(objects, kuberay, pod, 8265)
        assert not connection_allowed(objects, kuberay, pod, 6379)


def test_aibrix_adapters_reach_the_hub(aibrix_app):
    """Defect: vLLM downloads a huggingface:// adapter itself when AIBrix's controller loads it
    (pkg/controller/modeladapter/lora_client.go, v0.7.0); the pod had no egress to 443."""
    objects = aibrix_app.kubernetes_objects()
    platform = resolve(aibrix_app.config)
    (workload,) = [w for w in platform.workloads if getattr(w.config, "aibrix", None) is not None]
    controller = Pod("aibrix-system", {"app": "aibrix-controller-manager"})
    for pod in pods_by_workload(objects)[(workload.namespace, workload.name)]:
        assert connection_allowed(objects, pod, S3, 443)
        assert connection_allowed(objects, controller, pod, 8000)
        assert not connection_allowed(objects, controller, pod, 9999)


def test_aibrix_pods_admit_the_gateway_not_the_clients(aibrix_app):
    """vLLM's runtime LoRA endpoints share the serving port (issue 24 §5): an AIBrix workload's pods admit AIBrix's
    gateway proxies and controller, not the namespace's clients, who reach the gateway instead (which forwards only
    inference paths: aibrix v0.7.0 modelrouter_controller.go:67-79, pkg/plugins/gateway/util.go:159-180)."""
    objects = aibrix_app.kubernetes_objects()
    platform = resolve(aibrix_app.config)
    (workload,) = [w for w in platform.workloads if getattr(w.config, "aibrix", None) is not None]
    client = Pod(workload.namespace, {"app": "client"})
    proxy = Pod(
        "envoy-gateway-system",
        {
            "app.kubernetes.io/name": "envoy",
            "gateway.envoyproxy.io/owning-gateway-name": "aibrix-eg",
            "gateway.envoyproxy.io/owning-gateway-namespace": "aibrix-system",
        },
    )
    other_proxy = Pod("envoy-gateway-system", {"gateway.envoyproxy.io/owning-gateway-name": "someone-elses"})
    for pod in pods_by_workload(objects)[(workload.namespace, workload.name)]:
        assert not connection_allowed(objects, client, pod, 8000)
        assert connection_allowed(objects, proxy, pod, 8000)
        assert not connection_allowed(objects, other_proxy, pod, 8000)  # another team's Gateway there
    assert connection_allowed(objects, client, proxy, 10080)  # the listener's port 80 on the proxy pods
    assert not connection_allowed(objects, client, other_proxy, 10080)
    assert not connection_allowed(objects, client, proxy, 19000)  # Envoy's admin port


def test_pods_without_downloads_get_no_https(s3_mount_app):
    """An s3_mount model is read by the CSI driver on the node: the engine pods reach nothing outside."""
    objects = s3_mount_app.kubernetes_objects()
    platform = resolve(s3_mount_app.config)
    pods = pods_by_workload(objects)
    quiet = [w for w in platform.workloads if not (lambda p: p.downloads or p.api_server)(runtime_paths(platform, w))]
    assert quiet
    for workload in quiet:
        for pod in pods[(workload.namespace, workload.name)]:
            assert not connection_allowed(objects, pod, S3, 443)


def test_client_namespaces_open_the_endpoints():
    import cdk8s

    from inferstack.charts.network_policies import NetworkPoliciesChart
    from inferstack.config import InferstackConfig
    from inferstack.config.loader import load_config
    from inferstack.plan.network import network_flows

    base = load_config("inferstack.yaml").model_dump(by_alias=True, exclude_unset=True)
    shut = InferstackConfig.model_validate({**base, "network_policies": {"namespace_clients": False}})
    opened = InferstackConfig.model_validate({**base, "network_policies": {"client_namespaces": ["apps"]}})
    server = Pod("inference", {"app.kubernetes.io/name": "ministral"})
    neighbour, app = Pod("inference", {"app": "x"}), Pod("apps", {"app": "x"})
    for config, expect_neighbour, expect_app in ((shut, False, False), (opened, True, True)):
        objects = NetworkPoliciesChart(cdk8s.App(), "np", network_flows(config)).to_json()
        assert connection_allowed(objects, neighbour, server, 8000) is expect_neighbour
        assert connection_allowed(objects, app, server, 8000) is expect_app
        assert not connection_allowed(objects, neighbour, S3, 443)  # default deny, whichever policies select it
    gateway = load_config("examples/litellm-gateway.yaml").model_dump(by_alias=True, exclude_unset=True)
    strict = InferstackConfig.model_validate({**gateway, "network_policies": {"namespace_clients": False}})
    objects = NetworkPoliciesChart(cdk8s.App(), "np", network_flows(strict)).to_json()
    proxy = Pod("gateway", {"app.kubernetes.io/name": "llm-gateway"})
    backend = Pod("gateway", {"app.kubernetes.io/name": "qwen-vllm-router"})  # its router (routing)
    assert connection_allowed(objects, proxy, backend, 8081)
    assert not connection_allowed(objects, Pod("gateway", {"app": "x"}), backend, 8081)
    off = InferstackConfig.model_validate({**base, "network_policies": {"enabled": False}})
    assert network_flows(off) == ()


@pytest.mark.parametrize("mutation", ["drop-dns", "drop-self", "widen-deny"])
def test_the_gate_catches_a_broken_policy(default_app, mutation):
    objects = copy.deepcopy(default_app.kubernetes_objects())
    policies = {o["metadata"]["name"]: o for o in objects if o["kind"] == "NetworkPolicy"}
    server = Pod("inference", {"app.kubernetes.io/name": "ministral"})
    if mutation == "drop-dns":
        objects.remove(policies["inferstack-dns"])
        assert not connection_allowed(objects, server, DNS, 53, "UDP")
    elif mutation == "drop-self":
        policies["ministral"]["spec"]["ingress"] = policies["ministral"]["spec"]["ingress"][2:]
        assert not connection_allowed(objects, Pod("inference", {"app": "client"}), server, 8000)
    else:
        policies["ministral"]["spec"]["ingress"].append({})
        assert connection_allowed(objects, Pod(STRANGER_NAMESPACE, {}), server, 8000)


def test_operator_services_are_reachable_by_their_cluster_ip():
    """The VPC CNI resolves an egress peer to a Service's ClusterIP only when the peer's pod selector is a subset of
    the Service's selector: operator-made Services (here KServe's predictor) get a namespace peer on their ports;
    inferstack's own Services (selector includes app.kubernetes.io/name) need none."""
    from inferstack.config import InferstackConfig
    from inferstack.config.loader import load_config
    from inferstack.plan.network import Peer, network_flows

    def bench_flows(path):
        data = load_config(path).model_dump(by_alias=True, exclude_unset=True)
        data["workloads"][0]["bench"] = {}
        flows = network_flows(InferstackConfig.model_validate(data))
        return next(w for ns in flows for w in ns.workloads if w.name.endswith("-bench"))

    kserve = bench_flows("examples/kserve-scale-to-zero.yaml")
    assert Peer(namespace="kserve-models", ports=(80, 8080)) in kserve.egress
    vllm = bench_flows("inferstack.yaml")
    assert all(p.pods is not None or p.cidr is not None for p in vllm.egress)


def test_knative_predictors_are_reached_through_the_gateway(kserve_app):
    """A Knative predictor's Service is an ExternalName for the networking layer's gateway (kourier-internal; the
    Knative Operator inferstack installs runs it in knative-serving): clients of its namespace may reach the
    gateway and the activator, which may reach the pods."""
    objects = kserve_app.kubernetes_objects()
    client = Pod("kserve-models", {"app": "client"})
    gateway = Pod("knative-serving", {"app": "3scale-kourier-gateway"})
    activator = Pod("knative-serving", {"app": "activator"})
    predictor = Pod("kserve-models", {"app.kubernetes.io/name": "qwen"})
    assert connection_allowed(objects, client, gateway, 8081)
    assert connection_allowed(objects, client, activator, 8012)
    assert connection_allowed(objects, gateway, predictor, 8012)
    assert not connection_allowed(objects, Pod("elsewhere", {}), predictor, 8012)


def test_operators_reach_the_pods_they_call(any_app):
    """Every call an operator makes into the pods (read from its source: NIM's model status, KubeRay's dashboard and
    health checks, AIBrix's adapter loads) is admitted, from any pod of the operator's namespace."""
    objects = any_app.kubernetes_objects()
    owned = _owned(any_app)
    pods = [*all_pod_templates(objects), *all_pod_templates(projected_pods(objects))]
    for call in operator_calls(objects):
        if call.namespace not in owned:
            continue
        targets = [
            Pod(t.namespace, dict(t.labels))
            for t in pods
            if t.namespace == call.namespace and all(t.labels.get(k) == v for k, v in call.pods.items())
        ]
        assert targets, f"{call.what}: no pod in {call.namespace} carries {dict(call.pods)}"
        caller = Pod(call.caller, {"app": "operator"})
        for target in targets:
            assert connection_allowed(objects, caller, target, call.port), (call.what, call.port, target.labels)
