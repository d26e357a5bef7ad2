"""The app as a user runs it: ``app.py`` with a config, and ``cdk synth`` through the CLI, offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.synth import ROOT

DEAD_PROXY = "http://127.0.0.1:9"


def run_app(config: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CDK_CONTEXT_JSON": json.dumps({"config": str(config)}), "CDK_OUTDIR": str(tmp_path / "out")}
    return subprocess.run([sys.executable, "app.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_bad_config_lists_every_problem_without_traceback(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("network:\n  vpc_cidr: nope\n  max_azs: 9\ncluster:\n  endpoint_access: open\n")
    result = run_app(config, tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "3 problems" in result.stderr
    for path in ("network.vpc_cidr", "network.max_azs", "cluster.endpoint_access"):
        assert path in result.stderr


def test_rule_violation_names_field_and_fix_without_traceback(tmp_path):
    config = tmp_path / "public.yaml"
    config.write_text("cluster:\n  endpoint_access: public\n")
    result = run_app(config, tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "[EKS-ENDPOINT] cluster.public_access_cidrs:" in result.stderr


@pytest.mark.slow
def test_cdk_cli_synth_is_offline_and_credential_free(tmp_path, default_app):
    """`cdk synth` of the default config with every proxy pointed at a dead port and no credentials."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k not in ("HOME",)} | {
        "HTTPS_PROXY": DEAD_PROXY,
        "HTTP_PROXY": DEAD_PROXY,
        "https_proxy": DEAD_PROXY,
        "http_proxy": DEAD_PROXY,
        "ALL_PROXY": DEAD_PROXY,
        "NO_PROXY": "",
        "HOME": str(tmp_path),
        "AWS_EC2_METADATA_DISABLED": "true",
        "CDK_DISABLE_CLI_TELEMETRY": "true",
        "CDK_DISABLE_VERSION_CHECK": "1",
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
    }
    out = tmp_path / "cdk.out"
    result = subprocess.run(
        ["npx", "--no-install", "cdk", "synth", "--quiet", "--output", str(out), "--app", f"{sys.executable} app.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    expected = {f"{name}.template.json" for name in default_app.templates}
    assert {"inferstack-network.template.json", "inferstack-cluster.template.json"} <= expected
    assert {p.name for p in out.glob("*.template.json")} == expected
    summary = subprocess.run(
        [sys.executable, "-m", "inferstack.cli", "summary", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "inferstack-cluster" in summary.stdout and "2 PriorityClass" in summary.stdout


def test_plan_prints_a_row_per_workload():
    result = subprocess.run(
        [sys.executable, "-m", "inferstack.cli", "plan", "examples/vllm-gpu-tp4.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    (row,) = [line for line in result.stdout.splitlines() if line.startswith("llm/llama-70b")]
    assert "g6e.12xlarge" in row and "4×1" in row and "fits" in row


def test_check_reports_rule_errors(tmp_path):
    config = tmp_path / "tp8.yaml"
    config.write_text(
        "compute:\n  karpenter_pools:\n    - {name: gpu, instance_types: [g6e.12xlarge]}\n"
        "workloads:\n  - name: big\n    pool: gpu\n    model: {id: Qwen/Qwen3-8B}\n"
        "    engine: {tensor_parallel_size: 8}\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "inferstack.cli", "check", str(config)], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 1
    assert "[PARALLEL-NODE] workloads[0].engine.tensor_parallel_size" in result.stderr
    assert "[SCHEDULING] workloads[0].pool" in result.stderr


def test_check_renders_the_charts_of_overridden_workloads(tmp_path):
    """An override the schema rejects fails ``check`` (not only ``cdk synth``), named by its config path."""
    config = tmp_path / "override.yaml"
    config.write_text(
        "compute:\n  karpenter_pools:\n    - {name: gpu, instance_types: [g6e.2xlarge]}\n"
        "workloads:\n  - name: w\n    pool: gpu\n    model: {id: Qwen/Qwen3-8B}\n"
        "    overrides: {Deployment: {spec: {revisionHistoryLimt: 3}}}\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "inferstack.cli", "check", str(config)], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 1
    assert f"{config}: 1 problem" in result.stderr
    assert "workloads[0].overrides.Deployment:" in result.stderr and "revisionHistoryLimt" in result.stderr
    assert "Traceback" not in result.stderr


def test_plan_has_a_row_per_ray_model_and_pd_side():
    from inferstack.cli import plan_table
    from inferstack.config import load_config

    multi = plan_table(load_config(ROOT / "examples" / "ray-llm-multi-model.yaml")).splitlines()
    assert [line.split()[1] for line in multi[2:]] == ["models[0]", "models[1]"]
    pd = plan_table(load_config(ROOT / "examples" / "ray-pd-efa-p5.yaml")).splitlines()
    assert [line.split()[1] for line in pd[2:]] == ["prefill", "decode"] and all("fits" in line for line in pd[2:])


def test_app_py_leaves_with_mains_status_and_its_output_flushed(tmp_path):
    """app.py's last exit handler skips the interpreter's teardown: what the exit handlers before it write (jsii's
    forwards Node's stderr) still arrives on stdout, block-buffered into a pipe, and the status is main()'s."""
    script = tmp_path / "leave.py"
    script.write_text(
        "import atexit, runpy\n"
        "app = runpy.run_path('app.py')\n"
        "from inferstack.kernel import take_early_validator\n"
        "take_early_validator().discard()\n"
        "atexit.register(print, 'written at exit')\n"
        "print('written before the exit')\n"
        "app['EXIT_STATUS'].append(3)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("INFERSTACK_FAST_SYNTH", "PYTHONUNBUFFERED")}
    result = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True)
    expected = (3, "written before the exit\nwritten at exit\n")
    assert (result.returncode, result.stdout) == expected, result.stderr[-2000:]


def test_app_py_registers_its_exit_handler_before_jsiis(tmp_path):
    """Exit handlers run last-in, first-out: app.py's leaves the process, so it must be registered before jsii's
    (which stops Node and joins the thread forwarding Node's output), i.e. before the kernel starts."""
    script = tmp_path / "order.py"
    script.write_text(
        "import atexit, json, runpy\n"
        "order = []\n"
        "register = atexit.register\n"
        "def recording(func, *args, **kwargs):\n"
        "    order.append(getattr(func, '__qualname__', repr(func)))\n"
        "    return register(func, *args, **kwargs)\n"
        "atexit.register = recording\n"
        "runpy.run_path('app.py')\n"
        "from inferstack.kernel import take_early_validator\n"
        "take_early_validator().discard()\n"
        "print(json.dumps(order))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "INFERSTACK_FAST_SYNTH"}
    result = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True)
    order = json.loads(result.stdout.strip().splitlines()[-1])
    assert "_NodeProcess.stop" in order
    assert order.index("leave_without_teardown") < order.index("_NodeProcess.stop")
