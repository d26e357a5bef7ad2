"""``inferstack endpoints``: the Service, port and model names each workload is called by, and the commands that
try it, are the Services the cluster runs (rendered by the charts or made by the operators) — and a backend behind
a gateway says so, with the gateway's key."""

from __future__ import annotations

import subprocess
import sys

from inferstack.config import load_config
from inferstack.config.edit import with_changes
from inferstack.gates.operator_services import operator_services
from inferstack.plan.access import access_report, workload_access
from inferstack.plan.kserve import knative_serving
from tests.synth import ROOT

EXAMPLES = ROOT / "examples"


def test_every_port_forward_names_a_service_and_port_the_cluster_runs(any_app):
    objects = any_app.kubernetes_objects()
    services = {
        (o["metadata"]["namespace"], o["metadata"]["name"]): {p["port"] for p in o["spec"].get("ports", [])}
        for o in objects
        if o["kind"] == "Service"
    }
    for made in operator_services(objects):
        services.setdefault((made.namespace, made.name), set()).update(port for port, _ in made.ports)
    for access in workload_access(any_app.config):
        if access.service is None:
            continue
        if access.aibrix_gateway:  # the Service Envoy Gateway makes for AIBrix's Gateway (installed by the user)
            continue
        if access.knative_gateway is not None:  # Knative's own Services, routed by Host at its gateway
            knative = knative_serving(any_app.config)
            assert knative is not None and access.knative_gateway == (knative.gateway_ns, "kourier-internal"), access
            continue
        ports = services.get((access.namespace, access.service))
        assert ports is not None, f"{access.namespace}/{access.service}: no such Service"
        assert (access.port or 80) in ports, (access, ports)


def test_the_default_platform_is_called_by_its_served_name():
    (access,) = workload_access(load_config(ROOT / "inferstack.yaml"))
    assert (access.namespace, access.service, access.port, access.path) == ("inference", "ministral", 8000, "/v1")
    assert access.models == ("mistralai/Ministral-3-8B-Instruct-2512",) and not access.gateways
    report = access_report(load_config(ROOT / "inferstack.yaml"))
    assert "kubectl -n inference port-forward svc/ministral 8080:8000" in report
    assert '"model": "mistralai/Ministral-3-8B-Instruct-2512"' in report


def test_a_backend_behind_a_gateway_says_so_and_the_gateway_carries_its_key():
    config = load_config(EXAMPLES / "litellm-gateway.yaml")
    by_name = {a.name: a for a in workload_access(config)}
    assert by_name["qwen-vllm"].only_through_gateways and by_name["qwen-vllm"].gateways == ("gateway/llm-gateway",)
    gateway = by_name["llm-gateway"]
    assert gateway.port == 4000 and gateway.models[0] == config.workloads[-1].routes[0].name
    secret = config.workloads[-1].master_key_secret
    report = access_report(config)
    assert f"get secret {secret.name} -o jsonpath='{{.data.{secret.key}}}'" in report
    assert "clients reach it only through gateway/llm-gateway" in report


def test_a_secret_key_with_dots_is_one_jsonpath_segment():
    config = load_config(EXAMPLES / "litellm-gateway.yaml")
    gateway = config.workloads[-1]
    dotted = gateway.model_copy(
        update={"master_key_secret": gateway.master_key_secret.model_copy(update={"key": "master.key"})}
    )
    report = access_report(config.model_copy(update={"workloads": (*config.workloads[:-1], dotted)}))
    # kubectl's JSONPath reads `.data.master.key` as data → master → key, which prints nothing
    assert "-o jsonpath='{.data.master\\.key}'" in report


def test_a_kind_without_an_openai_api_says_why():
    (access,) = workload_access(load_config(EXAMPLES / "triton-vllm.yaml"))
    assert access.service is None and "KServe v2" in (access.no_endpoint or "")


def test_the_command_prints_the_report_and_names_a_bad_config(tmp_path):
    command = [sys.executable, "-m", "inferstack.cli", "endpoints"]
    ok = subprocess.run([*command, str(ROOT / "inferstack.yaml")], cwd=ROOT, capture_output=True, text=True)
    assert ok.returncode == 0 and "port-forward svc/ministral" in ok.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("workloads: [{name: x}]\n")
    failed = subprocess.run([*command, str(bad)], cwd=ROOT, capture_output=True, text=True)
    assert failed.returncode == 1 and "workloads[0]" in failed.stderr and "Traceback" not in failed.stderr


def test_a_knative_service_is_called_through_knatives_local_gateway_by_host():
    report = access_report(load_config(EXAMPLES / "kserve-scale-to-zero.yaml"))
    # the Knative Operator runs Kourier in knative-serving (the KnativeServing's namespace)
    assert "kubectl -n knative-serving port-forward svc/kourier-internal 8080:80" in report
    assert "-H 'Host: qwen-predictor.kserve-models.svc.cluster.local'" in report


def test_a_clusters_own_knative_is_called_through_its_gateway_namespace():
    config = load_config(EXAMPLES / "kserve-scale-to-zero.yaml")
    declared = with_changes(config, {"cluster.knative_serving": {"podspec_features_enabled": True}})
    assert "kubectl -n kourier-system port-forward svc/kourier-internal" in access_report(declared)
    elsewhere = with_changes(
        config, {"cluster.knative_serving": {"podspec_features_enabled": True, "gateway_namespace": "edge"}}
    )
    assert "kubectl -n edge port-forward svc/kourier-internal" in access_report(elsewhere)


def test_an_aibrix_workload_is_called_through_aibrixs_gateway():
    """Its pods admit no client (their serving port also loads LoRA adapters): the commands go through the Service
    Envoy Gateway makes for AIBrix's Gateway, found by the owning Gateway's labels (its name carries a hash)."""
    report = access_report(load_config(EXAMPLES / "aibrix-lora.yaml"))
    selector = ",".join(
        (
            "gateway.envoyproxy.io/owning-gateway-name=aibrix-eg",
            "gateway.envoyproxy.io/owning-gateway-namespace=aibrix-system",
        )
    )
    assert f'kubectl -n envoy-gateway-system port-forward "$(kubectl -n envoy-gateway-system get svc -l {selector}' in (
        report
    )
    assert "8080:80" in report and "clients reach it through AIBrix's gateway" in report
    assert "port-forward svc/qwen-coder" not in report
