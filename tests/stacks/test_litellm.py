"""GIVEN a ``litellm`` gateway (examples/litellm-gateway.yaml), WHEN synthesized, THEN its backends are exactly the
Services the app's workloads expose, secrets are referenced and never written, fallbacks and limits reach LiteLLM's
config, and the proxy and its Postgres run with their probes, volume and autoscaler."""

from __future__ import annotations

import pytest
import yaml

from inferstack.config import ConfigError, parse_config
from inferstack.plan.endpoints import NoEndpointError, endpoint_of

HELM_ADDON = "AWS::EKS::Addon"


def objects_of(app, kind: str) -> list[dict]:
    return [o for o in app.kubernetes_objects() if o["kind"] == kind]


def gateway_config(app) -> dict:
    (config_map,) = [o for o in objects_of(app, "ConfigMap") if o["metadata"]["name"] == "llm-gateway-config"]
    return yaml.safe_load(config_map["data"]["config.yaml"])


def proxy(app) -> dict:
    (deployment,) = [o for o in objects_of(app, "Deployment") if o["metadata"]["name"] == "llm-gateway"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container


def test_backends_are_the_apps_service_urls(gateway_app):
    services = {(s["metadata"]["namespace"], s["metadata"]["name"]): s for s in objects_of(gateway_app, "Service")}
    entries = [e for e in gateway_config(gateway_app)["model_list"] if e["model_name"] == "qwen3-8b"]
    bases = sorted(e["litellm_params"]["api_base"] for e in entries)
    assert bases == [
        # both run behind their routers (routing): the endpoint picker chooses the replica
        "http://qwen-sglang-router.gateway.svc.cluster.local:8081/v1",
        "http://qwen-vllm-router.gateway.svc.cluster.local:8081/v1",
    ]
    for entry in entries:  # each URL names a Service the app creates, on a port it exposes
        host = entry["litellm_params"]["api_base"].split("//")[1].split("/")[0]
        name, namespace = host.split(".")[:2]
        port = int(host.rsplit(":", 1)[1])
        assert port in {p["port"] for p in services[(namespace, name)]["spec"]["ports"]}
    models = {e["litellm_params"]["model"] for e in entries}
    assert models == {"hosted_vllm/Qwen/Qwen3-8B", "openai/Qwen/Qwen3-8B"}  # their --served-model-name


def test_every_workload_kind_answers_where_its_chart_serves(gateway_app):
    for workload in gateway_app.config.workloads:
        if workload.kind == "litellm":
            continue
        endpoint = endpoint_of(workload)
        host = endpoint.api_base.split("//")[1].split(".")[0]
        assert host in {s["metadata"]["name"] for s in objects_of(gateway_app, "Service")}


def test_triton_has_no_openai_endpoint():
    from inferstack.config.triton import TritonWorkloadConfig

    triton = TritonWorkloadConfig(name="t", pool="gpu", model={"id": "Qwen/Qwen3-8B", "source": {"type": "hf"}})
    with pytest.raises(NoEndpointError, match="KServe v2"):
        endpoint_of(triton)


def test_routing_fallbacks_and_limits(gateway_app):
    config = gateway_config(gateway_app)
    assert config["router_settings"]["routing_strategy"] == "least-busy"
    assert config["router_settings"]["fallbacks"] == [{"qwen3-8b": ["gpt-4o-mini"]}]
    assert config["litellm_settings"]["upperbound_key_generate_params"] == {"rpm_limit": 600}
    (openai,) = [e for e in config["model_list"] if e["model_name"] == "gpt-4o-mini"]
    assert openai["litellm_params"]["rpm"] == 500


def test_secrets_are_environment_references(gateway_app):
    config = gateway_config(gateway_app)
    assert config["general_settings"]["master_key"] == "os.environ/LITELLM_MASTER_KEY"
    env = {e["name"]: e for e in proxy(gateway_app)["env"]}
    named = {v.removeprefix("os.environ/") for v in yaml.safe_dump(config).split() if v.startswith("os.environ/")}
    for name in named | {"LITELLM_SALT_KEY", "DATABASE_PASSWORD"}:
        assert "secretKeyRef" in env[name]["valueFrom"], name
    assert env["LITELLM_MASTER_KEY"]["valueFrom"]["secretKeyRef"] == {"name": "litellm", "key": "master-key"}


def test_prisma_finds_the_images_engines(gateway_app):
    env = {e["name"]: e.get("value") for e in proxy(gateway_app)["env"]}
    assert env["PRISMA_HOME_DIR"] == "/root"  # HOME is the pod's emptyDir; the engines were generated under /root
    assert "PRISMA_BINARY_CACHE_DIR" not in env  # it would replace the versioned path prisma derives


def test_probes_avoid_the_authenticated_health(gateway_app):
    c = proxy(gateway_app)
    assert c["readinessProbe"]["httpGet"] == {"path": "/health/readiness", "port": 4000}
    assert c["livenessProbe"]["httpGet"] == {"path": "/health/liveliness", "port": 4000}
    assert c["args"] == ["--config", "/etc/litellm/config.yaml", "--port", "4000"]


def test_postgres_keeps_its_data(gateway_app):
    (postgres,) = objects_of(gateway_app, "StatefulSet")
    (claim,) = postgres["spec"]["volumeClaimTemplates"]
    assert claim["spec"]["storageClassName"] == "inferstack-gp3"  # Retain
    env = {e["name"]: e for e in proxy(gateway_app)["env"]}
    assert env["DATABASE_HOST"]["value"].startswith("llm-gateway-postgres.gateway.svc")
    (pg,) = postgres["spec"]["template"]["spec"]["containers"]
    assert pg["securityContext"]["runAsUser"] == 999


def test_hpa_on_cpu_with_metrics_server(gateway_app):
    (deployment,) = [o for o in objects_of(gateway_app, "Deployment") if o["metadata"]["name"] == "llm-gateway"]
    assert "replicas" not in deployment["spec"]  # the HPA owns them
    (hpa,) = objects_of(gateway_app, "HorizontalPodAutoscaler")
    assert hpa["spec"]["minReplicas"] == 2 and hpa["spec"]["maxReplicas"] == 6
    assert hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"
    addons = [
        r["Properties"]["AddonName"]
        for r in gateway_app.template("workloads")["Resources"].values()
        if r["Type"] == HELM_ADDON
    ]
    assert "metrics-server" in addons


@pytest.mark.parametrize(
    ("change", "path", "words"),
    [
        (
            {"routes": [{"name": "a", "backends": [{"workload": "x"}], "fallbacks": ["b"]}]},
            "routes[0].fallbacks[0]",
            "not another route",
        ),
        ({"routes": [{"name": "a", "backends": [{}]}]}, "routes[0].backends[0].workload", "exactly one"),
        ({"database": {"mode": "deploy"}}, "database.password_secret", "required"),
        ({"database": {"mode": "existing", "url_secret": {"name": "db"}}}, "salt_key_secret", "LITELLM_SALT_KEY"),
        (
            {
                "routes": [
                    {"name": "a", "backends": [{"provider": {"model": "gpt-4o", "api_key_secret": {"name": "k"}}}]}
                ]
            },
            "routes[0].backends[0].provider.model",
            "<provider>/<model>",
        ),
        (
            {
                "routes": [
                    {
                        "name": "a",
                        "backends": [
                            {
                                "provider": {"model": "openai/gpt-4o", "api_key_secret": {"name": "k"}},
                                "direct_clients": True,
                            }
                        ],
                    }
                ]
            },
            "routes[0].backends[0].direct_clients",
            "remove it from a provider",
        ),
    ],
)
def test_bad_gateway_fields_are_named(change, path, words):
    gateway = {
        "kind": "litellm",
        "name": "gw",
        "pool": "cpu",
        "master_key_secret": {"name": "litellm"},
        "routes": [{"name": "a", "backends": [{"workload": "x"}]}],
        **change,
    }
    with pytest.raises(ConfigError) as error:
        parse_config(
            {"compute": {"karpenter_pools": [{"name": "cpu", "instance_families": ["m7i"]}]}, "workloads": [gateway]}
        )
    problems = {p.path: p.message for p in error.value.problems}
    assert f"workloads[0].{path}" in problems, problems
    assert words in problems[f"workloads[0].{path}"]


def test_the_routers_crd_is_applied_unless_the_cluster_has_it(gateway_app, synth_config):
    """Both backends have routers: the workloads stack applies the InferencePool CRD (before the pools, which
    follow it), and not when ``observability.install_inference_pool_crd`` is off."""
    crds = [o for o in gateway_app.kubernetes_objects() if o["kind"] == "CustomResourceDefinition"]
    assert [c["metadata"]["name"] for c in crds] == ["inferencepools.inference.networking.k8s.io"]
    pools = [o for o in gateway_app.kubernetes_objects() if o["kind"] == "InferencePool"]
    assert len(pools) == 2
    off = gateway_app.config.model_copy(
        update={
            "observability": gateway_app.config.observability.model_copy(update={"install_inference_pool_crd": False})
        }
    )
    assert not [o for o in synth_config(off, nag=False).kubernetes_objects() if o["kind"] == "CustomResourceDefinition"]
