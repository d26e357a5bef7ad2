"""GIVEN each kind's first example with its model moved to an ``efs`` source (issue 26 §2.10), WHEN its chart is
rendered, THEN the checkpoint's directory is a static EFS volume the pinned driver can publish (ReadWriteMany —
v3.4.1 refuses ReadOnlyMany — with the ``<fs-id>:<path>`` handle), every pod that runs the engine — ours and the
ones the operators make from our resources — mounts it read-only, and the engine reads the model at that mount."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from typing import Any

import cdk8s
import pytest
import yaml

from inferstack.charts.workload import StorageRefs, model_claim
from inferstack.config import ConfigError, parse_config
from inferstack.config.edit import with_changes
from inferstack.config.kinds import KINDS
from inferstack.constructs.volumes import EFS_ACCESS_MODE
from inferstack.gates.pods import all_pod_templates
from inferstack.gates.projections import KSERVE_MODEL_MOUNT, projected_pods
from inferstack.plan import resolve
from inferstack.rules import evaluate
from tests.synth import SYNC_IMAGE
from tests.test_kinds_meta import first_of_kind

FILE_SYSTEM = "fs-0123456789abcdef0"
PATH = "/models/team/llama"
REFS = StorageRefs(region="us-east-1", bucket="b", efs_id=FILE_SYSTEM, sync_image=SYNC_IMAGE)
Objects = list[dict[str, Any]]


def _args_after(flag: str) -> Callable[[Objects, str], list[str]]:
    def read(objects: Objects, claim: str) -> list[str]:
        return [args[args.index(flag) + 1] for args in _engine_args(objects, claim) if flag in args]

    return read


def _engine_args(objects: Objects, claim: str) -> list[list[str]]:
    """The args of every container that mounts ``claim``."""
    found = []
    for template in all_pod_templates(objects):
        volumes = {v["name"] for v in template.spec.get("volumes", []) if _claim(v) == claim}
        for container in template.spec.get("containers", []):
            if any(m["name"] in volumes for m in container.get("volumeMounts", [])):
                found.append(list(container.get("args", [])))
    return found


def _claim(volume: dict[str, Any]) -> str | None:
    return (volume.get("persistentVolumeClaim") or {}).get("claimName")


def _triton(objects: Objects, claim: str) -> list[str]:
    return [json.loads(o["data"]["model.json"])["model"] for o in objects if "model.json" in o.get("data", {})]


def _ray_serve(objects: Objects, claim: str) -> list[str]:
    (service,) = [o for o in objects if o["kind"] == "RayService"]
    serve = yaml.safe_load(service["spec"]["serveConfigV2"])
    return [
        llm["model_loading_config"]["model_source"]
        for app in serve["applications"]
        for llm in app["args"]["llm_configs"]
        if llm["model_loading_config"]["model_source"] == "/models"  # the first model (the one moved to efs)
    ]


def _kserve(objects: Objects, claim: str) -> list[str]:
    (isvc,) = [o for o in objects if o["kind"] == "InferenceService"]
    assert isvc["spec"]["predictor"]["model"]["storageUri"] == f"pvc://{claim}"  # the claim is the directory
    return [KSERVE_MODEL_MOUNT]


#: Where each kind's engine names the model it loads (its argument, model.json, the Serve config or the storage URI).
MODEL_READ: dict[str, Callable[[Objects, str], list[str]]] = {
    "vllm": lambda objects, claim: [args[0] for args in _engine_args(objects, claim)],
    "vllm_multinode": lambda objects, claim: [args[0] for args in _engine_args(objects, claim)],
    "sglang": _args_after("--model-path"),
    "tgi": _args_after("--model-id"),
    "dynamo": _args_after("--model"),
    "triton": _triton,
    "ray_serve": _ray_serve,
    "kserve": _kserve,
}
#: Kinds that take no ``model.source``: NIM downloads into its NIMCache, Ollama pulls, LiteLLM serves no model.
NO_SOURCE = {"nim", "ollama", "litellm"}


def test_every_kind_is_either_read_here_or_takes_no_source():
    assert set(MODEL_READ) | NO_SOURCE == set(KINDS)


@cache
def on_efs(kind: str, path: str = PATH) -> tuple[str, Objects]:
    """The kind's first example with the first model of its workload on ``efs`` at ``path``: the model's claim and
    the rendered chart."""
    config, _ = first_of_kind(kind)
    index = next(i for i, w in enumerate(config.workloads) if w.kind == kind)
    workload = config.workloads[index]
    field = "model" if "model" in type(workload).model_fields else "models[0].model"
    served = workload.model_entries[0][1].model_dump(mode="json", exclude_unset=True)
    # what only a download reads is refused on an efs model
    moved = {k: v for k, v in served.items() if k not in ("revision", "hf_token_secret")}
    moved["source"] = {"type": "efs", "path": path}
    variant = with_changes(config, {f"workloads[{index}].{field}": moved, "storage.efs": {}})
    assert variant is not None
    resolved = next(w for w in resolve(variant).workloads if w.kind == kind)
    chart = KINDS[kind].chart(cdk8s.App(), "w", resolved, REFS, kubernetes_version=variant.cluster.kubernetes_version)
    return model_claim(f"{resolved.name}-model", "efs", FILE_SYSTEM, path), chart.to_json()


def _efs_volume(objects: Objects) -> dict[str, Any]:
    volumes = [o for o in objects if o["kind"] == "PersistentVolume"]
    (volume,) = [v for v in volumes if v["spec"]["csi"]["driver"] == "efs.csi.aws.com"]
    return volume


@pytest.mark.parametrize("kind", sorted(MODEL_READ))
def test_the_directory_is_a_static_volume_the_driver_publishes(kind: str):
    claim_name, objects = on_efs(kind)
    volume = _efs_volume(objects)
    assert volume["spec"]["csi"]["volumeHandle"] == f"{FILE_SYSTEM}:{PATH}"
    assert volume["spec"]["accessModes"] == [EFS_ACCESS_MODE] == ["ReadWriteMany"]
    assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Retain"  # the files outlive the claim
    assert volume["spec"]["claimRef"]["name"] == claim_name
    (claim,) = [o for o in objects if o["kind"] == "PersistentVolumeClaim" and o["metadata"]["name"] == claim_name]
    assert claim["spec"]["volumeName"] == volume["metadata"]["name"] and claim["spec"]["storageClassName"] == ""
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]


def test_another_directory_is_another_volume_and_claim():
    """A PV's source and a claim's access modes are immutable (the API server refuses the update): a new directory,
    or a switch from a Mountpoint claim, must be new objects the pods roll over to, not an edit of the old ones."""
    first, objects = on_efs("vllm")
    second, moved = on_efs("vllm", "/models/team/llama-v2")
    assert first != second and all(re.fullmatch(r"[a-z0-9-]+-model-efs-[0-9a-f]{8}", c) for c in (first, second))
    assert _efs_volume(objects)["metadata"]["name"] != _efs_volume(moved)["metadata"]["name"]
    assert model_claim("w-model", "efs", "${Token[TOKEN.1]}", PATH) == model_claim(
        "w-model", "efs", "${Token[X.2]}", PATH
    )
    assert model_claim("w-model", "efs", FILE_SYSTEM, PATH) != model_claim(
        "w-model", "efs", "fs-0123456789abcdef1", PATH
    )


def _mounts_of(pods: list[dict[str, Any]], claim: str) -> list[dict[str, Any]]:
    """Every container mount of ``claim`` in ``pods`` (bare Pod manifests or templates' specs)."""
    found = []
    for spec in pods:
        volumes = {v["name"] for v in spec.get("volumes", []) if _claim(v) == claim}
        for container in [*spec.get("containers", []), *spec.get("initContainers", [])]:
            found += [m for m in container.get("volumeMounts", []) if m["name"] in volumes]
    return found


ACCELERATORS = ("nvidia.com/gpu", "aws.amazon.com/neuron")


def _accelerated(spec: dict[str, Any]) -> bool:
    return any(
        name in (c.get("resources") or {}).get("limits", {})
        for c in spec.get("containers", [])
        for name in ACCELERATORS
    )


@pytest.mark.parametrize("kind", sorted(MODEL_READ))
def test_every_engine_pod_reads_the_model_at_the_read_only_mount(kind: str):
    """Every pod with an accelerator — ours, the templates inside custom resources, and the pods the operators make
    from them (Ray workers, LWS workers, Dynamo workers, KServe's predictor) — mounts the claim, read-only; our own
    pods also claim it read-only (the node mount is then ``ro``: efs-csi-driver v3.4.1 node.go:196-198)."""
    claim, objects = on_efs(kind)
    templates = list(all_pod_templates(objects))
    projected = [p["spec"] for p in projected_pods(objects)]
    pods = [t.spec for t in templates] + projected
    # KServe mounts a pvc:// storage URI into the pod it makes (projected); its predictor template carries none
    ours = [t.spec for t in templates if t.owner["kind"] != "InferenceService"]
    engines = [spec for spec in [*ours, *projected] if _accelerated(spec)]
    assert engines and all(_mounts_of([spec], claim) for spec in engines)
    mounts = _mounts_of(pods, claim)
    assert all(m.get("readOnly") for m in mounts), mounts
    claimed = [v for t in templates for v in t.spec.get("volumes", []) if _claim(v) == claim]
    # KServe's injected volume claims it without readOnly (storage_initializer_injector.go:528-558), its mount is ro
    assert (bool(claimed) or kind == "kserve") and all(v["persistentVolumeClaim"].get("readOnly") for v in claimed)
    reads = MODEL_READ[kind](objects, claim)
    assert reads and set(reads) <= {m["mountPath"] for m in mounts}, (reads, mounts)


def _parsed(workload: dict[str, Any], **storage: Any):
    return parse_config(
        {
            "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]},
            "storage": {"model_bucket": {}, **storage},
            "workloads": [{"kind": "vllm", "name": "chat", "pool": "gpu", **workload}],
        }
    )


def _findings(config) -> list:
    report = evaluate(config)
    return [*report.errors, *report.warnings]


QWEN = {"id": "Qwen/Qwen3-8B", "source": {"type": "efs", "path": PATH}}


class TestConfig:
    @pytest.mark.parametrize(
        ("source", "field", "says"),
        [
            ({"type": "efs"}, "path", "needs path"),
            ({"type": "efs", "path": "models/x"}, "path", "'models/x' — the checkpoint's directory"),
            ({"type": "efs", "path": "/models/../etc"}, "path", "without '..'"),
            ({"type": "efs", "path": "/models/x/"}, "path", "a trailing '/'"),
            ({"type": "efs", "path": "/"}, "path", "the file system's root"),
            ({"type": "efs", "path": PATH, "image": "r/m:1"}, "image", "image applies to type: image only"),
            ({"type": "efs", "path": PATH, "prefix": "models/x/"}, "prefix", "bucket-backed type"),
            ({"type": "hf", "prefix": "models/x/"}, "prefix", "bucket-backed type"),
            ({"type": "s3", "path": PATH}, "path", "remove path, or set type: image (or efs)"),
        ],
    )
    def test_a_source_that_cannot_be_read_is_refused_at_its_field(self, source, field, says):
        with pytest.raises(ConfigError) as error:
            _parsed({"model": {"id": "Qwen/Qwen3-8B", "source": source}}, efs={})
        assert f"workloads[0].model.source.{field}" in str(error.value) and says in str(error.value)

    @pytest.mark.parametrize(("field", "value"), [("revision", "abc123"), ("hf_token_secret", {"name": "hf"})])
    def test_what_only_a_download_reads_is_refused_on_an_efs_model(self, field, value):
        with pytest.raises(ConfigError) as error:
            _parsed({"model": {**QWEN, field: value}}, efs={})
        assert f"workloads[0].model.{field}" in str(error.value) and "reads the directory as it is" in str(error.value)

    def test_without_storage_efs_the_backend_rule_names_the_fix(self):
        (finding,) = [f for f in _findings(_parsed({"model": QWEN})) if f.rule == "MODEL-SOURCE-BACKEND"]
        assert finding.path == "workloads[0].model.source.type" and "storage.efs" in finding.fix

    def test_with_storage_efs_the_backend_rule_passes_and_no_sync_or_token_is_asked(self):
        config = _parsed({"model": {**QWEN, "id": "meta-llama/Llama-3.1-8B-Instruct"}}, efs={})
        rules = {f.rule for f in _findings(config)}
        assert not rules & {"MODEL-SOURCE-BACKEND", "HF-TOKEN"}  # nothing downloads a gated model
        (workload,) = resolve(config).workloads
        assert not any(model.sync for model in workload.models)

    def test_the_bench_says_the_tokenizer_is_on_the_file_system(self):
        (finding,) = [f for f in _findings(_parsed({"model": QWEN, "bench": {}}, efs={})) if f.rule == "BENCH-TARGET"]
        assert "the file system, which the bench Job does not mount" in finding.message
