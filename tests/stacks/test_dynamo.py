"""GIVEN a ``dynamo`` workload (examples/dynamo-disagg-efa.yaml: prefill/decode on a p5 EFA node group), WHEN
synthesized, THEN the DynamoGraphDeployment waits for the operator's webhooks, each role asks for its GPUs and EFA
devices, the KV cache moves over NIXL with LIBFABRIC, prefill and decode share a zone, and the workers' command lines
are ones the runtime's vLLM accepts."""

from __future__ import annotations

import json

import pytest
from pydantic_core import PydanticCustomError

from inferstack.catalog.engine_flags import vllm_flags
from inferstack.catalog.kubernetes import DYNAMO_NAMESPACE
from inferstack.charts.workload import StorageRefs
from inferstack.config import ConfigError, parse_config
from inferstack.config.dynamo import DYNAMO_VLLM_FLAGS
from inferstack.plan.workloads import workloads_plan
from inferstack.stacks.workloads import render_workloads

HELM = "Custom::AWSCDK-EKS-HelmChart"
GATE = "Custom::AWSCDK-EKS-KubernetesObjectValue"
#: Flags of dynamo.vllm itself (components/src/dynamo/vllm/args.py at 1.4.0), not vLLM's.
DYNAMO_FLAGS = {"--disaggregation-mode"}
POOLS = {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.12xlarge"]}]}
AGGREGATED = {
    "kind": "dynamo",
    "name": "qwen",
    "pool": "gpu",
    "model": {"id": "Qwen/Qwen3-8B", "source": {"type": "hf"}},
    "workers": {"replicas": 2, "engine": {"tensor_parallel_size": 2}},
}


def graph(app) -> dict:
    (obj,) = [o for o in app.kubernetes_objects() if o["kind"] == "DynamoGraphDeployment"]
    return obj


def components(obj: dict) -> dict[str, dict]:
    return {c["name"]: c for c in obj["spec"]["components"]}


def main(component: dict) -> dict:
    (container,) = [c for c in component["podTemplate"]["spec"]["containers"] if c["name"] == "main"]
    return container


def arg(container: dict, flag: str) -> str:
    args = container["args"]
    return args[args.index(flag) + 1]


def rendered(workload: dict) -> dict:
    config = parse_config({"compute": POOLS, "workloads": [workload]})
    (item,) = render_workloads(workloads_plan(config), None, StorageRefs(region="us-east-1"))
    (obj,) = [o for o in item.manifest if o["kind"] == "DynamoGraphDeployment"]
    return obj


class TestDisaggregated:
    def test_roles_and_their_gpus_and_efa(self, dynamo_app):
        parts = components(graph(dynamo_app))
        assert {name: c["type"] for name, c in parts.items()} == {
            "frontend": "frontend",
            "prefill": "prefill",
            "decode": "decode",
        }
        for role in ("prefill", "decode"):
            resources = main(parts[role])["resources"]
            for side in ("requests", "limits"):
                assert resources[side]["nvidia.com/gpu"] == "8"
                assert resources[side]["vpc.amazonaws.com/efa"] == "32"  # every EFA device of a p5.48xlarge
            assert main(parts[role])["image"] == "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0-efa"
            assert parts[role]["podTemplate"]["spec"]["nodeSelector"] == {"inferstack.io/pool": "p5-efa"}
        frontend = main(parts["frontend"])
        assert "nvidia.com/gpu" not in frontend["resources"]["requests"]
        assert parts["frontend"]["podTemplate"]["spec"]["nodeSelector"] == {"inferstack.io/pool": "system"}

    def test_nixl_on_libfabric_with_the_efa_provider(self, dynamo_app):
        parts = components(graph(dynamo_app))
        for role in ("prefill", "decode"):
            container = main(parts[role])
            assert arg(container, "--disaggregation-mode") == role
            transfer = json.loads(arg(container, "--kv-transfer-config"))
            assert transfer == {
                "kv_connector": "NixlConnector",
                "kv_role": "kv_both",
                "kv_connector_extra_config": {"backends": ["LIBFABRIC"]},
            }
            env = {e["name"]: e.get("value") for e in container["env"]}
            assert env["FI_PROVIDER"] == "efa" and env["FI_EFA_USE_DEVICE_RDMA"] == "1"

    def test_prefill_and_decode_share_a_zone(self, dynamo_app):
        parts = components(graph(dynamo_app))
        for role in ("prefill", "decode"):
            (term,) = parts[role]["podTemplate"]["spec"]["affinity"]["podAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"
            ]
            assert term["topologyKey"] == "topology.kubernetes.io/zone"
            assert term["labelSelector"]["matchLabels"] == {"nvidia.com/dynamo-graph-deployment-name": "llama-pd"}
            (expression,) = term["labelSelector"]["matchExpressions"]
            assert expression == {
                "key": "nvidia.com/dynamo-component-type",
                "operator": "In",
                "values": ["decode", "prefill"],
            }
        assert "affinity" not in parts["frontend"]["podTemplate"]["spec"]

    def test_kv_routing_with_events_from_the_routed_workers(self, dynamo_app):
        parts = components(graph(dynamo_app))
        assert main(parts["frontend"])["args"] == ["--router-mode", "kv"]
        events = json.loads(arg(main(parts["prefill"]), "--kv-events-config"))
        assert events["enable_kv_cache_events"] is True and events["publisher"] == "zmq"
        assert "--kv-events-config" not in main(parts["decode"])["args"]

    def test_worker_command_lines_are_vllm_engine_flags(self, dynamo_app):
        """dynamo.vllm parses leftover argv strictly: every flag but its own must be a vLLM engine flag (checked
        against the vendored lists around the runtime's vLLM 0.26.0), and ``vllm serve``'s --port is not one."""
        for role in ("prefill", "decode"):
            container = main(components(graph(dynamo_app))[role])
            assert container["command"] == ["python3", "-m", "dynamo.vllm"]
            flags = [a.split("=", 1)[0] for a in container["args"] if a.startswith("--")]
            assert "--port" not in flags
            for flag in set(flags) - DYNAMO_FLAGS:
                assert vllm_flags(DYNAMO_VLLM_FLAGS).knows(flag), flag

    def test_the_operator_owns_service_account_and_shared_memory(self, dynamo_app):
        for component in components(graph(dynamo_app)).values():
            spec = component["podTemplate"]["spec"]
            # The operator sets <name>-k8s-service-discovery (its discovery Role) and keeps the token mounted.
            assert "serviceAccountName" not in spec and "automountServiceAccountToken" not in spec
            assert all(v["name"] != "shm" for v in spec["volumes"])
            assert component["sharedMemorySize"].endswith("Gi")
        accounts = {o["metadata"]["name"] for o in dynamo_app.kubernetes_objects() if o["kind"] == "ServiceAccount"}
        assert "llama-pd-k8s-service-discovery" not in accounts

    def test_ports_repeat_the_operators(self, dynamo_app):
        parts = components(graph(dynamo_app))
        assert {p["name"]: p["containerPort"] for p in main(parts["frontend"])["ports"]} == {"http": 8000}
        assert {p["name"]: p["containerPort"] for p in main(parts["decode"])["ports"]} == {
            "system": 9090,
            "nixl": 19090,
        }

    def test_the_model_waits_for_its_sync(self, dynamo_app):
        spec = components(graph(dynamo_app))["prefill"]["podTemplate"]["spec"]
        assert [c["name"] for c in spec["initContainers"]] == ["wait-for-model"]
        assert arg(main(components(graph(dynamo_app))["prefill"]), "--model") == "/models"


def test_the_graph_waits_for_the_operators_webhook(dynamo_app):
    template = dynamo_app.template("workloads")
    ((release_id, release),) = [
        (k, r)
        for k, r in template["Resources"].items()
        if r["Type"] == HELM and r["Properties"]["Chart"] == "dynamo-platform"
    ]
    props = release["Properties"]
    assert props["Namespace"] == DYNAMO_NAMESPACE and props["Version"] == "1.4.0" and props["Wait"] is True
    assert props["Release"] == "dynamo-platform"
    ((gate_id, gate),) = [(k, r) for k, r in template["Resources"].items() if r["Type"] == GATE]
    assert gate["Properties"]["ObjectType"] == "validatingwebhookconfiguration"
    assert gate["Properties"]["ObjectName"] == "dynamo-platform-dynamo-operator-validating"
    assert gate["Properties"]["JsonPath"] == ".webhooks[0].clientConfig.caBundle"
    assert release_id in gate["DependsOn"]
    manifests = [r for r in template["Resources"].values() if "DynamoGraphDeployment" in str(r.get("Properties", {}))]
    assert manifests and all(gate_id in r.get("DependsOn", []) for r in manifests)


class TestAggregated:
    def test_one_worker_role_without_disaggregation(self):
        parts = components(rendered(AGGREGATED))
        assert {n: c["type"] for n, c in parts.items()} == {"frontend": "frontend", "worker": "worker"}
        worker = main(parts["worker"])
        assert parts["worker"]["replicas"] == 2
        assert worker["resources"]["limits"]["nvidia.com/gpu"] == "2"
        assert "vpc.amazonaws.com/efa" not in worker["resources"]["limits"]
        assert worker["image"] == "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0"
        assert "--disaggregation-mode" not in worker["args"] and "--kv-transfer-config" not in worker["args"]
        assert "--kv-events-config" in worker["args"]  # the KV router picks among them
        assert "affinity" not in parts["worker"]["podTemplate"]["spec"]

    def test_hf_download_with_the_token_by_reference(self):
        model = {"id": "meta-llama/Llama-3.2-1B-Instruct", "source": {"type": "hf"}, "hf_token_secret": {"name": "hf"}}
        worker = main(components(rendered({**AGGREGATED, "model": model}))["worker"])
        (token,) = [e for e in worker["env"] if e["name"] == "HF_TOKEN"]
        assert token == {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}

    def test_round_robin_routing_publishes_no_events(self):
        parts = components(rendered({**AGGREGATED, "frontend": {"router_mode": "round-robin"}}))
        assert "--kv-events-config" not in main(parts["worker"])["args"]
        assert main(parts["frontend"])["args"] == ["--router-mode", "round-robin"]


class TestConfig:
    @pytest.mark.parametrize(
        ("fields", "path", "words"),
        [
            ({"prefill": {}}, "workloads[0].prefill", "disaggregated"),
            ({"mode": "disaggregated"}, "workloads[0].workers", "aggregated"),
            ({"service_account": "mine"}, "workloads[0].service_account", "k8s-service-discovery"),
            ({"replicas": 2}, "workloads[0].replicas", "workers.replicas"),
            ({"autoscaling": {}}, "workloads[0].autoscaling", "replicas"),
            ({"startup_timeout_seconds": 600}, "workloads[0].startup_timeout_seconds", "probes"),
            (
                {"workers": {"engine": {"image": "vllm/vllm-openai:v0.19.0"}}},
                "workloads[0].workers.engine.image",
                "runtime",
            ),
            ({"workers": {"engine": {"tool_calling": {}}}}, "workloads[0].workers.engine.tool_calling", "frontend"),
            (
                {"workers": {"engine": {"extra_args": ["--no-such-flag"]}}},
                "workloads[0].workers.engine.extra_args[0]",
                "not a flag",
            ),
            (
                {"model": {"id": "Qwen/Qwen3-8B", "source": {"type": "image", "image": "r.io/m:1", "path": "/m"}}},
                "workloads[0].model.source.type",
                "runtime image",
            ),
            ({"name": "n" * 41}, "workloads[0].name", "at most 40"),
            ({"name": "n" * 40, "namespace": "ml-inference-production-team"}, "workloads[0].name", "label value"),
        ],
    )
    def test_bad_fields_are_named(self, fields, path, words):
        with pytest.raises(ConfigError) as error:
            parse_config({"compute": POOLS, "workloads": [{**AGGREGATED, **fields}]})
        problems = {p.path: p.message for p in error.value.problems}
        assert path in problems, problems
        assert words in problems[path]

    def test_known_extra_args_pass(self):
        config = parse_config(
            {"compute": POOLS, "workloads": [{**AGGREGATED, "workers": {"engine": {"extra_args": ["--seed", "1"]}}}]}
        )
        assert config.workloads[0].roles["worker"].engine.extra_args == ("--seed", "1")


def _main_image_override(image: str, **component: str) -> dict:
    patch = {"name": "worker", **component, "podTemplate": {"spec": {"containers": [{"name": "main", "image": image}]}}}
    return {**AGGREGATED, "overrides": {"DynamoGraphDeployment": {"spec": {"components": [patch]}}}}


class TestRuntimeVersion:
    """The operator runs any parseable runtime tag with its own release's defaults (issue 22 §3): an image of
    another release is named, never run as 1.4.0 without a word."""

    def test_an_older_runtime_image_is_named(self):
        with pytest.raises(ConfigError) as raised:
            rendered(_main_image_override("nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.5.0"))
        message = str(raised.value)
        assert "workloads[0].overrides.DynamoGraphDeployment" in message
        assert "vllm-runtime:0.5.0, Dynamo 0.5.0, but the pinned operator is 1.4.0" in message

    def test_a_tag_without_a_release_needs_runtime_version_override(self):
        with pytest.raises(ConfigError, match="runtimeVersionOverride"):
            rendered(_main_image_override("registry.example.com/dynamo/vllm-runtime:patched"))

    @pytest.mark.parametrize(
        ("image", "override"),
        [
            ("nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0-efa", None),
            ("registry.example.com/mirror/vllm-runtime:1.4.2", None),
            ("registry.example.com/dynamo/vllm-runtime:patched", "1.4.0"),
        ],
    )
    def test_the_operators_release_passes(self, image: str, override: str | None):
        extra = {"runtimeVersionOverride": override} if override else {}
        worker = components(rendered(_main_image_override(image, **extra)))["worker"]
        assert main(worker)["image"] == image

    @pytest.mark.parametrize(
        ("image", "tag"),
        [
            ("nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0", "1.4.0"),
            ("localhost:5000/vllm-runtime", ""),
            ("localhost:5000/vllm-runtime:1.4.0@sha256:" + "a" * 64, "1.4.0"),
            ("vllm-runtime@sha256:" + "a" * 64, ""),
        ],
    )
    def test_the_tag_is_read_as_the_operator_reads_it(self, image: str, tag: str):
        from inferstack.constructs.dynamo import image_tag

        assert image_tag(image) == tag


def test_the_construct_refuses_another_releases_image():
    """A library user building the graph directly gets the same check, at construction."""
    import cdk8s

    from inferstack.constructs.dynamo import DynamoComponentProps, DynamoGraph, DynamoGraphProps
    from inferstack.constructs.pod import PodPlacement
    from inferstack.constructs.validation import PropError

    def component(name: str, kind: str, image: str) -> DynamoComponentProps:
        return DynamoComponentProps(
            name=name,
            type=kind,
            image=image,
            command=["python3"],
            requests={"cpu": "1"},
            limits={},
            placement=PodPlacement(),
        )

    graph = DynamoGraphProps(
        name="g",
        namespace="dynamo",
        components=[
            component("frontend", "frontend", "nvcr.io/nvidia/ai-dynamo/dynamo-frontend:1.4.0"),
            component("worker", "worker", "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.5.0"),
        ],
    )
    with pytest.raises(PropError, match=r"components\['worker'\]\.image — component 'worker' runs .*:0\.5\.0"):
        DynamoGraph(cdk8s.Chart(cdk8s.App(), "c"), "g", graph)


def test_worker_flags_are_checked_against_the_runtimes_own_vllm():
    """The runtime carries vLLM 0.26.0, whose list is vendored: a flag 0.26.0 has and the releases around it lack
    passes, and one added after it (0.31.0's ``--tool-strict-level``) is refused, naming 0.26.0."""
    from inferstack.config.dynamo import check_runtime_args

    check_runtime_args(("--enable-bf16x3-router-gemm",), "workloads[0].workers.engine.")
    with pytest.raises(PydanticCustomError) as raised:
        check_runtime_args(("--tool-strict-level", "1"), "workloads[0].workers.engine.")
    assert "0.26.0" in str(raised.value)
