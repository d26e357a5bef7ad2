"""GIVEN ``sglang``, ``tgi`` and ``ollama`` workloads (the examples), WHEN rendered, THEN each engine runs with its own
flags, port and health endpoint, its metrics are scraped where it serves them, and Ollama's models land on a volume
that survives the pod."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferstack.charts.workload import StorageRefs
from inferstack.config import ConfigError, load_config, parse_config
from inferstack.plan.workloads import workloads_plan
from inferstack.stacks.workloads import render_workloads
from tests.synth import EFS_ID, SYNC_IMAGE

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
POOLS = {
    "karpenter_pools": [
        {"name": "gpu", "instance_types": ["g6e.2xlarge"]},
        {"name": "cpu", "instance_families": ["m7i"]},
    ]
}


@pytest.fixture(scope="module")
def objects() -> dict[str, list[dict]]:
    rendered = {}
    for name in ("sglang-structured", "tgi", "ollama-cpu"):
        config = load_config(EXAMPLES / f"{name}.yaml")
        (item,) = render_workloads(
            workloads_plan(config),
            None,
            StorageRefs(region="us-east-1", bucket="models", efs_id=EFS_ID, sync_image=SYNC_IMAGE),
        )
        rendered[name] = item.manifest
    return rendered


def of_kind(manifest: list[dict], kind: str) -> dict:
    (obj,) = [o for o in manifest if o["kind"] == kind and "sync" not in o["metadata"]["name"]]
    return obj


def container(manifest: list[dict]) -> dict:
    (c,) = of_kind(manifest, "Deployment")["spec"]["template"]["spec"]["containers"]
    return c


def flag(c: dict, name: str) -> str:
    return c["args"][c["args"].index(name) + 1]


class TestSglang:
    def test_launch_server_flags(self, objects):
        c = container(objects["sglang-structured"])
        assert c["command"] == ["python3", "-m", "sglang.launch_server"]
        assert flag(c, "--model-path") == "/models" and flag(c, "--host") == "0.0.0.0"
        assert flag(c, "--port") == "30000" and flag(c, "--tp-size") == "1"  # --tp is only an argparse prefix
        assert flag(c, "--context-length") == "16384" and flag(c, "--grammar-backend") == "xgrammar"
        assert flag(c, "--tool-call-parser") == "qwen25" and flag(c, "--reasoning-parser") == "qwen3"
        assert "--enable-metrics" in c["args"]

    def test_port_and_health(self, objects):
        c = container(objects["sglang-structured"])
        assert {p["name"]: p["containerPort"] for p in c["ports"]} == {"http": 30000}
        assert c["readinessProbe"]["httpGet"] == {"path": "/health", "port": 30000}
        assert c["startupProbe"]["httpGet"] == {"path": "/health", "port": 30000}
        assert c["livenessProbe"]["httpGet"] == {"path": "/v1/models", "port": 30000}  # no generation under load
        monitor = of_kind(objects["sglang-structured"], "PodMonitor")
        assert monitor["spec"]["podMetricsEndpoints"][0]["port"] == "http"

    def test_caches_on_the_writable_home(self, objects):
        env = {e["name"]: e.get("value") for e in container(objects["sglang-structured"])["env"]}
        assert env["HOME"] == "/home/sglang" and env["SGLANG_CACHE_DIR"].startswith("/home/sglang/")
        assert env["HF_HUB_OFFLINE"] == "1"


class TestTgi:
    def test_launcher_flags(self, objects):
        c = container(objects["tgi"])
        assert c["command"] == ["/tgi-entrypoint.sh"]
        assert flag(c, "--model-id") == "meta-llama/Llama-3.1-8B-Instruct"
        assert flag(c, "--port") == "8080"  # not the image's 80: the pod drops NET_BIND_SERVICE
        assert flag(c, "--num-shard") == "1" and flag(c, "--max-total-tokens") == "8192"
        assert flag(c, "--max-input-tokens") == "6144" and flag(c, "--revision") == "main"

    def test_port_health_and_root(self, objects):
        c = container(objects["tgi"])
        assert c["readinessProbe"]["httpGet"] == {"path": "/health", "port": 8080}
        assert c["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
        (token,) = [e for e in c["env"] if e["name"] == "HF_TOKEN"]
        assert token["valueFrom"]["secretKeyRef"] == {"name": "hf-token", "key": "token"}


class TestOllama:
    def test_models_on_a_retained_volume(self, objects):
        manifest = objects["ollama-cpu"]
        claim = of_kind(manifest, "PersistentVolumeClaim")
        assert claim["spec"]["storageClassName"] == "inferstack-model-cache"
        assert claim["spec"]["resources"]["requests"]["storage"] == "50Gi"
        spec = of_kind(manifest, "Deployment")["spec"]
        assert spec["strategy"] == {"type": "Recreate"}  # a ReadWriteOnce volume cannot follow a surge pod
        volumes = {v["name"]: v for v in spec["template"]["spec"]["volumes"]}
        assert volumes["models"]["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
        env = {e["name"]: e.get("value") for e in container(manifest)["env"]}
        mounts = {m["name"]: m["mountPath"] for m in container(manifest)["volumeMounts"]}
        assert env["OLLAMA_MODELS"] == mounts["models"] and env["OLLAMA_HOST"] == "0.0.0.0:11434"

    def test_models_are_pulled_by_an_init_container_on_the_loopback(self, objects):
        pod = of_kind(objects["ollama-cpu"], "Deployment")["spec"]["template"]["spec"]
        (pull,) = [c for c in pod["initContainers"] if c["name"] == "pull-models"]
        script = pull["command"][-1]
        assert "{ /bin/ollama pull qwen3:4b || /bin/ollama show qwen3:4b >/dev/null; } && { /bin/ollama pull" in script
        env = {e["name"]: e["value"] for e in pull["env"]}
        assert env["OLLAMA_HOST"] == "127.0.0.1:11434"  # its server is never reachable from outside the pod
        assert env["NVIDIA_VISIBLE_DEVICES"] == "void"  # the image's `all` would hand it the node's GPUs
        assert env["OLLAMA_MODELS"] == "/ollama/models"
        assert pull["image"] == container(objects["ollama-cpu"])["image"]
        assert pull["securityContext"]["runAsNonRoot"] is True
        assert "postStart" not in container(objects["ollama-cpu"]).get("lifecycle", {})

    def test_only_the_pull_writes_the_model_store(self, objects):
        """Ollama's pull/create/copy/delete API shares the serving port (L4 policies cannot split it): on the serving
        container the store is read-only, so those handlers fail instead of replacing or deleting a model."""
        pod = of_kind(objects["ollama-cpu"], "Deployment")["spec"]["template"]["spec"]
        writable = {
            c["name"]
            for c in [*pod["initContainers"], *pod["containers"]]
            for m in c.get("volumeMounts", [])
            if m["name"] == "models" and not m.get("readOnly")
        }
        assert writable == {"pull-models"}
        env = {e["name"]: e.get("value") for e in container(objects["ollama-cpu"])["env"]}
        assert env["OLLAMA_NOPRUNE"] == "true"  # Serve prunes the store at start otherwise (routes.go:1963)

    @pytest.mark.parametrize(
        ("pulls", "status"), [(("ok:1", "ok:2"), 0), (("ok:1", "missing:1"), 1), (("ok:1", "stored:1"), 0)]
    )
    def test_the_pull_script_waits_pulls_stops_the_server_and_reports(self, tmp_path, pulls, status):
        """The init container's shell, run against a stand-in ``ollama``: it waits for the server, pulls in order,
        stops the server and exits with the pulls' status (a failed pull fails the pod, never serves half a set) —
        unless the store holds that model already (``ollama show``: the registry unreachable at a restart)."""
        import subprocess

        from inferstack.charts.ollama import pull_command

        log = tmp_path / "log"
        fake = tmp_path / "ollama"
        fake.write_text(
            "#!/bin/sh\n"
            f'log="{log}"\n'
            'case "$1" in\n'
            '  serve) trap \'echo stopped >> "$log"; exit 0\' TERM; echo serving >> "$log";'
            " while :; do sleep 0.1; done ;;\n"
            '  ps) grep -q serving "$log" ;;\n'
            '  pull) echo "pull $2" >> "$log"; case "$2" in missing*|stored*) exit 1 ;; esac ;;\n'
            '  show) case "$2" in stored*) exit 0 ;; *) exit 1 ;; esac ;;\n'
            "esac\n"
        )
        fake.chmod(0o755)
        command = [part.replace("/bin/ollama", str(fake)) for part in pull_command(pulls)]
        result = subprocess.run(command, timeout=30, check=False)
        assert result.returncode == status
        lines = log.read_text().split()
        assert lines[0] == "serving" and lines[-1] == "stopped"
        assert [w for w in lines if ":" in w] == list(pulls)

    def test_health_and_no_metrics(self, objects):
        c = container(objects["ollama-cpu"])
        assert c["readinessProbe"]["httpGet"] == {"path": "/", "port": 11434}
        assert [o for o in objects["ollama-cpu"] if o["kind"] == "PodMonitor"] == []
        assert "nvidia.com/gpu" not in c["resources"]["limits"]

    @pytest.mark.parametrize(
        ("fields", "path", "words"),
        [
            ({"models": ["Qwen3 8B"]}, "workloads[0].models", "not an Ollama model"),
            ({"monitoring": True}, "workloads[0].monitoring", "Prometheus"),
            ({"replicas": 2}, "workloads[0].replicas", "one replica"),
            ({"gpus": 1}, "workloads[0].gpus", "CPU pools"),
        ],
    )
    def test_bad_fields_are_named(self, fields, path, words):
        workload = {"kind": "ollama", "name": "o", "pool": "cpu", "models": ["qwen3:4b"], **fields}
        with pytest.raises(ConfigError) as error:
            parse_config({"compute": POOLS, "workloads": [workload]})
        problems = {p.path: p.message for p in error.value.problems}
        assert path in problems, problems
        assert words in problems[path]


@pytest.mark.parametrize(
    ("workload", "path", "words"),
    [
        ({"kind": "sglang", "model": {"id": "Qwen/Qwen3-8B"}}, "workloads[0].model.source.type", "Run:ai"),
        ({"kind": "tgi", "model": {"id": "Qwen/Qwen3-8B"}}, "workloads[0].model.source.type", "S3"),
        (
            {
                "kind": "tgi",
                "model": {"id": "Qwen/Qwen3-8B", "source": {"type": "hf"}},
                "engine": {"max_input_tokens": 9000},
            },
            "workloads[0].engine.max_input_tokens",
            "below max_total_tokens",
        ),
        (
            {
                "kind": "tgi",
                "model": {"id": "Qwen/Qwen3-8B", "source": {"type": "hf"}},
                "engine": {"quantize": "fp8", "dtype": "bfloat16"},
            },
            "workloads[0].engine.dtype",
            "--quantize",
        ),
    ],
)
def test_engine_configs_name_bad_fields(workload, path, words):
    with pytest.raises(ConfigError) as error:
        parse_config({"compute": POOLS, "workloads": [{"name": "w", "pool": "gpu", **workload}]})
    problems = {p.path: p.message for p in error.value.problems}
    assert path in problems, problems
    assert words in problems[path]


@pytest.mark.parametrize(
    ("example", "image"),
    [
        ("sglang-structured", "registry.example.com/mirror/sglang:v0.5.22-cu130"),
        ("tgi", "registry.example.com/mirror/text-generation-inference:3.3.6"),
        ("ollama-cpu", "registry.example.com/mirror/ollama:0.32.14"),
    ],
)
def test_a_workloads_own_image_runs_every_container_of_its_engine(example, image):
    """``image`` (issue 26 §2.2: the engine's release per workload) replaces the catalog's in the engine container and,
    for Ollama, in the pull init container that runs the same binary; an unpinned one is refused at the field."""
    import yaml

    data = yaml.safe_load((EXAMPLES / f"{example}.yaml").read_text())
    data["workloads"][0]["image"] = image
    (item,) = render_workloads(
        workloads_plan(parse_config(data)),
        None,
        StorageRefs(region="us-east-1", bucket="models", efs_id=EFS_ID, sync_image=SYNC_IMAGE),
    )
    pod = of_kind(item.manifest, "Deployment")["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == image
    engine_inits = [c for c in pod.get("initContainers", []) if c["name"] == "pull-models"]
    assert len(engine_inits) == (example == "ollama-cpu") and all(c["image"] == image for c in engine_inits)
    data["workloads"][0]["image"] = image.rsplit(":", 1)[0] + ":latest"
    with pytest.raises(ConfigError) as raised:
        parse_config(data)
    assert "workloads[0].image" in str(raised.value) and "pinned" in str(raised.value)
