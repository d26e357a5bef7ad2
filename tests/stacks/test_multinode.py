"""GIVEN Llama-3.1-405B as kind vllm_multinode (TP 8 × PP 2 on two p5.48xlarge with EFA), WHEN synthesized, THEN one
replica is a LeaderWorkerSet group of two pods, each with a whole node's GPUs and EFA devices, in vLLM's own
multi-node mode, with a Service in front of the leaders only and the LWS operator installed first."""

from __future__ import annotations

import yaml

from inferstack.catalog.kubernetes import LWS_NAMESPACE
from inferstack.config import parse_config
from inferstack.config.edit import with_changes
from inferstack.gates.references import selector_matches
from inferstack.plan import resolve
from inferstack.rules import evaluate
from tests.synth import ROOT

HELM = "Custom::AWSCDK-EKS-HelmChart"
EXAMPLE = ROOT / "examples" / "vllm-multinode-lws-p5.yaml"


def lws(app) -> dict:
    (obj,) = [o for o in app.kubernetes_objects() if o["kind"] == "LeaderWorkerSet"]
    return obj


def templates(app) -> tuple[dict, dict]:
    group = lws(app)["spec"]["leaderWorkerTemplate"]
    return group["leaderTemplate"], group["workerTemplate"]


def vllm(template: dict) -> dict:
    return next(c for c in template["spec"]["containers"] if c["name"] == "vllm")


def arg(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def test_one_replica_is_a_group_of_two_nodes_restarted_together(multinode_app):
    spec = lws(multinode_app)["spec"]
    assert spec["replicas"] == 1
    assert spec["leaderWorkerTemplate"]["size"] == 2
    assert spec["leaderWorkerTemplate"]["restartPolicy"] == "RecreateGroupOnPodRestart"
    assert spec["startupPolicy"] == "LeaderCreated"  # LeaderReady would deadlock: the leader waits for its workers


def test_every_pod_takes_a_whole_node_of_gpus_and_efa_devices(multinode_app):
    for template in templates(multinode_app):
        resources = vllm(template)["resources"]
        for kind in ("requests", "limits"):
            assert resources[kind]["nvidia.com/gpu"] == "8"
            assert resources[kind]["vpc.amazonaws.com/efa"] == "32"  # p5.48xlarge: 32 EFA interfaces
        assert template["spec"]["nodeSelector"] == {"inferstack.io/pool": "p5-efa"}
        env = {e["name"]: e.get("value") for e in vllm(template)["env"]}
        assert env["FI_PROVIDER"] == "efa"


def test_parallelism_and_multinode_flags(multinode_app):
    leader, worker = (vllm(t)["args"] for t in templates(multinode_app))
    for args in (leader, worker):
        assert arg(args, "--tensor-parallel-size") == "8" and arg(args, "--pipeline-parallel-size") == "2"
        assert arg(args, "--nnodes") == "2"
        assert arg(args, "--master-addr") == "$(LWS_LEADER_ADDRESS)"  # injected by the LWS pod webhook
        assert arg(args, "--master-port") == "29501"
    assert arg(leader, "--node-rank") == "0" and "--headless" not in leader
    assert arg(worker, "--node-rank") == "$(LWS_WORKER_INDEX)" and "--headless" in worker
    strip = {"--node-rank", "0", "$(LWS_WORKER_INDEX)", "--headless"}
    assert [a for a in leader if a not in strip] == [a for a in worker if a not in strip], "same engine on every node"


def test_the_leader_serves_and_waits_for_the_whole_group(multinode_app):
    leader, worker = (vllm(t) for t in templates(multinode_app))
    plan = resolve(multinode_app.config).workloads[0].server.pod
    probe = leader["startupProbe"]
    assert probe["httpGet"] == {"path": "/health", "port": 8000}
    assert probe["failureThreshold"] * probe["periodSeconds"] == plan.startup_seconds
    assert plan.startup_seconds >= 2280  # every node reads all 756 GiB from FSx, engine start, the group forming
    assert [p["name"] for p in leader["ports"]] == ["http"]
    assert not {"ports", "startupProbe", "readinessProbe", "livenessProbe"} & set(worker)


def test_workers_outlive_the_leaders_drain(multinode_app):
    """LWS deletes a group's pods together: the workers (pipeline stages) pause longer than the leader's preStop plus
    its drain deadline, and stop within the grace period."""
    leader_template, worker_template = templates(multinode_app)
    leader, worker = vllm(leader_template), vllm(worker_template)
    leader_pause = leader["lifecycle"]["preStop"]["sleep"]["seconds"]
    drain = int(arg(leader["args"], "--shutdown-timeout"))
    worker_pause = worker["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert worker_pause >= leader_pause + drain
    assert worker_pause < worker_template["spec"]["terminationGracePeriodSeconds"]


def test_the_service_reaches_the_leaders_only(multinode_app):
    objects = multinode_app.kubernetes_objects()
    (service,) = [o for o in objects if o["kind"] == "Service"]
    # The API Service keeps the workload's name; LWS owns the headless Service named after the LeaderWorkerSet.
    assert service["metadata"]["name"] == "llama-405b" and lws(multinode_app)["metadata"]["name"] == "llama-405b-group"
    leader, worker = templates(multinode_app)
    selector = service["spec"]["selector"]
    assert selector_matches({"matchLabels": selector}, leader["metadata"]["labels"])
    assert not selector_matches({"matchLabels": selector}, worker["metadata"]["labels"])
    (monitor,) = [o for o in objects if o["kind"] == "PodMonitor"]
    assert not selector_matches(monitor["spec"]["selector"], worker["metadata"]["labels"])
    (pdb,) = [o for o in objects if o["kind"] == "PodDisruptionBudget"]
    assert all(selector_matches(pdb["spec"]["selector"], t["metadata"]["labels"]) for t in (leader, worker))


def test_the_lws_operator_is_installed_and_the_group_waits_for_it(multinode_app):
    template = multinode_app.template("workloads")
    charts = {k: r for k, r in template["Resources"].items() if r["Type"] == HELM}
    ((lws_id, release),) = [(k, r) for k, r in charts.items() if r["Properties"]["Chart"] == "lws"]
    props = release["Properties"]
    assert props["Repository"] == "oci://registry.k8s.io/lws/charts/lws" and props["Version"] == "v0.10.0"
    assert props["Namespace"] == LWS_NAMESPACE
    assert props["Wait"] is True  # helm --wait: the controller Deployment is ready
    # …and the LeaderWorkerSet waits until LWS's fail-closed webhook has its CA bundle.
    ((gate_id, gate),) = [
        (k, r) for k, r in template["Resources"].items() if r["Type"] == "Custom::AWSCDK-EKS-KubernetesObjectValue"
    ]
    assert gate["Properties"]["ObjectType"] == "mutatingwebhookconfiguration"
    assert gate["Properties"]["ObjectName"] == "lws-mutating-webhook-configuration"
    assert gate["Properties"]["JsonPath"] == ".webhooks[0].clientConfig.caBundle"
    assert lws_id in gate["DependsOn"]
    manifests = [r for r in template["Resources"].values() if "LeaderWorkerSet" in str(r.get("Properties", {}))]
    assert manifests and all(gate_id in r.get("DependsOn", []) for r in manifests)


def test_single_node_vllm_of_the_same_model_names_the_multinode_kind():
    data = yaml.safe_load(EXAMPLE.read_text())
    workload = data["workloads"][0]
    workload.pop("kind"), workload.pop("nodes")
    workload["engine"]["pipeline_parallel_size"] = 1
    report = evaluate(parse_config(data))
    (fit,) = [f for f in report.errors if f.rule == "MODEL-FIT"]
    assert "vllm_multinode" in fit.fix
    (changes,) = fit.suggestions
    assert changes["workloads[0].kind"] == "vllm_multinode" and changes["workloads[0].nodes"] == 2
    fixed = with_changes(parse_config(data), changes)
    assert fixed is not None
    assert evaluate(fixed).errors == []


def test_a_group_bigger_than_the_node_group_is_refused():
    data = yaml.safe_load(EXAMPLE.read_text())
    data["workloads"][0]["replicas"] = 2  # 4 nodes; the node group's max_size is 2
    (finding,) = [f for f in evaluate(parse_config(data)).errors if f.rule == "MULTINODE-CAPACITY"]
    assert finding.path == "workloads[0].replicas" and "max_size" in finding.fix


def test_deepseek_r1_across_two_p5en_passes_every_rule():
    """The second reference case: DeepSeek-R1 (FP8, MLA) as TP 8 × PP 2 on two p5en.48xlarge (H200) with EFA."""
    data = {
        "compute": {
            "node_groups": [
                {"name": "p5en", "instance_type": "p5en.48xlarge", "efa": True, "availability_zone": 0, "max_size": 2}
            ]
        },
        "workloads": [
            {
                "name": "r1",
                "kind": "vllm_multinode",
                "nodes": 2,
                "pool": "p5en",
                "efa": True,
                "model": {"id": "deepseek-ai/DeepSeek-R1"},
                "engine": {"tensor_parallel_size": 8, "pipeline_parallel_size": 2, "max_model_len": 65536},
            }
        ],
    }
    report = evaluate(parse_config(data))
    assert report.errors == [] and report.warnings == []  # the default AWS DLC carries aws-ofi-nccl
    pod = resolve(parse_config(data)).workloads[0].server.pod
    assert pod.requests["nvidia.com/gpu"] == "8" and pod.requests["vpc.amazonaws.com/efa"] == "16"


def _p5_multinode(**workload: object) -> dict:
    data = yaml.safe_load(EXAMPLE.read_text())
    data["workloads"][0].update(workload)
    return data


def test_efa_pods_take_a_node_each_when_counting_capacity():
    """TP 4 × PP 2 with EFA: each pod asks for 4 GPUs but every EFA device, so two pods cannot share a p5 node."""
    data = _p5_multinode(
        model={"id": "meta-llama/Llama-3.1-70B-Instruct", "hf_token_secret": {"name": "hf"}, "source": {"type": "fsx"}},
        engine={"tensor_parallel_size": 4, "pipeline_parallel_size": 2},
        replicas=2,
    )
    (finding,) = [f for f in evaluate(parse_config(data)).errors if f.rule == "MULTINODE-CAPACITY"]
    assert "need 4 nodes" in finding.message
    (changes,) = finding.suggestions
    assert changes == {"workloads[0].replicas": 1}
    assert evaluate(with_changes(parse_config(data), changes)).errors == []


def test_capacity_counts_every_workload_on_the_pool():
    data = yaml.safe_load(EXAMPLE.read_text())
    single = {
        "name": "llama-70b",
        "namespace": "llm",
        "pool": "p5-efa",
        "model": {
            "id": "meta-llama/Llama-3.1-70B-Instruct",
            "hf_token_secret": {"name": "hf"},
            "source": {"type": "fsx"},
        },
        "engine": {"tensor_parallel_size": 8},
    }
    data["workloads"].append(single)
    (finding,) = [f for f in evaluate(parse_config(data)).errors if f.rule == "MULTINODE-CAPACITY"]
    assert "need 3 nodes (llama-405b 2, llama-70b 1)" in finding.message


def test_no_multinode_suggestion_the_pool_cannot_hold():
    """The MODEL-FIT suggestion is checked against MULTINODE-CAPACITY too: one p5 node cannot hold a 2-node group."""
    data = yaml.safe_load(EXAMPLE.read_text())
    workload = data["workloads"][0]
    workload.pop("kind"), workload.pop("nodes")
    workload["engine"]["pipeline_parallel_size"] = 1
    data["compute"]["node_groups"][0].update(max_size=1, desired_size=1)
    (fit,) = [f for f in evaluate(parse_config(data)).errors if f.rule == "MODEL-FIT"]
    assert fit.suggestions == ()


def test_tensor_parallelism_across_nodes_over_tcp_is_flagged():
    data = _p5_multinode(
        engine={"tensor_parallel_size": 16, "pipeline_parallel_size": 1, "image": "vllm/vllm-openai:v0.31.0"}
    )
    report = evaluate(parse_config(data))
    (finding,) = [f for f, _ in report.acknowledged if f.rule == "MULTINODE-EFA-IMAGE"]
    assert finding.path == "workloads[0].engine.tensor_parallel_size" and "all-reduce" in finding.message
