"""The benchmark Job template (examples/bench-ministral.yaml): its command line, identity, network paths and the
command that runs it."""

from __future__ import annotations

import json

import pytest

from inferstack import cli
from inferstack.catalog.models import TOKENIZER_FILES
from inferstack.constructs import bench as bench_construct
from inferstack.gates.network import Address, Pod, connection_allowed
from inferstack.plan import bench as bench_plan

EXPECTED_ARGS = [
    "--backend", "openai",
    "--base-url", "http://ministral.inference.svc.cluster.local:8000",
    "--endpoint", "/v1/completions",
    "--model", "mistralai/Ministral-3-8B-Instruct-2512",
    "--tokenizer", "/tokenizer",
    "--dataset-name", "random",
    "--random-input-len", "1024",
    "--random-output-len", "256",
    "--num-prompts", "320",
    "--max-concurrency", "32",
    "--request-rate", "inf",
    "--ignore-eos",
    "--percentile-metrics", "ttft,tpot,itl,e2el",
    "--metric-percentiles", "50,90,99",
    "--save-result",
    "--result-dir", "/results",
    "--result-filename", "result.json",
    "--ready-check-timeout-sec", "1800",
    "--tokenizer-mode", "mistral",
]  # fmt: skip


@pytest.fixture(scope="module")
def cron(bench_app):
    (cron,) = [o for o in bench_app.kubernetes_objects() if o["kind"] == "CronJob"]
    return cron


def test_the_cron_job_is_a_template_that_never_fires(cron):
    assert (cron["metadata"]["name"], cron["metadata"]["namespace"]) == ("ministral-bench", "inference")
    assert cron["metadata"]["labels"]["inferstack.io/bench-target"] == "ministral"
    template = cron["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"]
    assert template == bench_plan.bench_pods("ministral") | {"app.kubernetes.io/part-of": "inferstack"}
    assert cron["spec"]["suspend"] is True and cron["spec"]["schedule"] == "0 0 31 2 *"
    assert cron["spec"]["jobTemplate"]["spec"]["backoffLimit"] == 0


def test_the_bench_container_runs_vllm_bench_serve_with_the_configured_load(cron):
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    tokenizer, bench = pod["initContainers"]
    (upload,) = pod["containers"]
    assert bench["command"] == ["vllm", "bench", "serve"]
    assert bench["args"] == EXPECTED_ARGS
    assert bench["image"].startswith("public.ecr.aws/deep-learning-containers/vllm:0.31.0")
    assert {"name": "HF_HUB_OFFLINE", "value": "1"} in bench["env"]
    # the tokenizer comes from the model's prefix, the results go to bench/<ns>/<name>/
    env = {e["name"]: e.get("value") for e in tokenizer["env"]}
    assert env["MODEL_PREFIX"] == "models/mistralai/Ministral-3-8B-Instruct-2512/main/"
    assert '--exclude "*/*"' in tokenizer["command"][2] and "safetensors" not in tokenizer["command"][2]
    assert {e["name"]: e.get("value") for e in upload["env"]}["RESULTS_PREFIX"] == "bench/inference/ministral/"
    assert pod["serviceAccountName"] == "ministral-bench"


def test_the_bench_identity_writes_only_its_results_prefix(bench_app):
    associations = bench_app.resources("workloads", "AWS::EKS::PodIdentityAssociation").values()
    assert any(a["Properties"]["ServiceAccount"] == "ministral-bench" for a in associations)
    roles = bench_app.resources("workloads", "AWS::IAM::Policy")
    (policy,) = [p for k, p in roles.items() if k.startswith("Benchinferenceministral")]
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    writes = [s for s in statements if "s3:PutObject" in s["Action"]]
    assert len(writes) == 1
    assert "bench/inference/ministral/*" in str(writes[0]["Resource"])
    # write-only: it cannot read, list or delete earlier results
    assert sorted(writes[0]["Action"]) == ["s3:AbortMultipartUpload", "s3:PutObject"]
    assert not any("bench/inference" in str(s.get("Condition")) for s in statements)
    # of the model prefix, the tokenizer files only — never the weights
    (reads,) = [s for s in statements if s["Action"] == "s3:GetObject"]
    resources = [json.dumps(r) for r in reads["Resource"]]
    prefix = "models/mistralai/Ministral-3-8B-Instruct-2512/main/"
    assert sorted(r.rsplit(prefix, 1)[1].rstrip('"]}') for r in resources) == sorted(TOKENIZER_FILES)
    assert not any("safetensors" in r or r.endswith(f'{prefix}*"]]}}') for r in resources)
    assert all(s["Action"] != "s3:DeleteObject" and "s3:DeleteObject" not in s["Action"] for s in statements)


def test_the_bench_pod_reaches_its_target_and_nothing_else(bench_app):
    objects = bench_app.kubernetes_objects()
    bench = Pod("inference", bench_plan.bench_pods("ministral"))
    server = Pod("inference", {"app.kubernetes.io/name": "ministral"})
    other = Pod("inference", {"app.kubernetes.io/name": "other"})
    assert connection_allowed(objects, bench, server, 8000)
    assert connection_allowed(objects, bench, Address("52.216.8.1"), 443)
    assert connection_allowed(objects, bench, Address("169.254.170.23"), 80)
    assert not connection_allowed(objects, bench, other, 8000)
    assert not connection_allowed(objects, Pod("inference", {"app": "x"}), bench, 8000)


def test_plan_and_construct_agree_on_the_bench_labels():
    assert bench_plan.BENCH_COMPONENT == bench_construct.BENCH_COMPONENT
    assert bench_plan.BENCH_TARGET_LABEL == bench_construct.TARGET_LABEL


def test_the_cli_prints_the_command_that_runs_it(capsys):
    assert cli.main(["bench", "ministral", "examples/bench-ministral.yaml"]) == 0
    out = capsys.readouterr().out
    assert "kubectl -n inference create job ministral-bench-$(date +%s) --from=cronjob/ministral-bench" in out
    assert "bench/inference/ministral/" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bench", "nope", "examples/bench-ministral.yaml"], "no workload 'nope' — workloads: ministral"),
        (["bench", "ministral", "inferstack.yaml"], "workloads[0].bench: 'ministral' has no bench"),
    ],
)
def test_the_cli_names_what_is_wrong(capsys, args, message):
    assert cli.main(args) == 1
    assert message in capsys.readouterr().err


def test_every_bench_flag_is_one_of_vllm_0_31_bench_serve(cron):
    """Against the parser of vLLM 0.31.0's ``vllm bench serve`` (dumped from its wheel, provenance in
    scripts/upstream/engines/vllm-0.31.0-bench-serve-notes.md), values included (choices)."""
    import importlib.util
    from pathlib import Path

    from inferstack.catalog.engine_flags import EngineFlags, _spec_from

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("vendor", root / "scripts" / "vendor_engine_flags.py")
    vendor = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vendor)
    version, doc = vendor.build(root / "scripts" / "upstream" / "engines" / "vllm-0.31.0-bench-serve-flags.json")
    assert version == "0.31.0"
    flags = EngineFlags(engine="vllm bench serve", version=version,
                        flags=tuple(_spec_from(n, f) for n, f in doc["flags"].items()))  # fmt: skip
    args = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["initContainers"][1]["args"]
    assert flags.parse(args) == []
    assert flags.bad_choices(args) == []
    assert flags.spec("--dataset-name").choices and "random" in flags.spec("--dataset-name").choices
