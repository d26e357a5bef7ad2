"""GATE: what the API server and the controllers would check, over every Kubernetes object of the default platform
and every example — references resolve (mounts → volumes, selectors → pods, ConfigMaps / PVCs / ServiceAccounts /
PriorityClasses / namespaces exist or are declared external), pods meet the Pod Security level their namespace
enforces, and every engine command line uses only flags the pinned engine has.

The mutation tests break one real synthesized object the way a code change could and require the gate to say so.
"""

from __future__ import annotations

import copy
from typing import Any

from inferstack.catalog.engine_flags import vllm_flags
from inferstack.catalog.kubernetes import operator_namespaces
from inferstack.catalog.versions import ENGINE_IMAGES, ENGINE_VLLM_VERSIONS
from inferstack.config import InferstackConfig
from inferstack.gates.pod_security import Level, check_manifests, namespace_levels
from inferstack.gates.pods import all_pod_templates
from inferstack.gates.references import External, check_references
from inferstack.plan import resolve

#: Flag list used for an engine release inferstack carries none of (the Neuron DLC's vLLM 0.16): the nearest
#: vendored release. Every flag inferstack renders for Neuron is in 0.19.0 and 0.33.0 alike and works on 0.16
#: (Neuron SDK vLLM user guide); --shutdown-timeout, which 0.16 lacks, is never rendered there (tested).
NEAREST_FLAG_LIST = {"0.16.0": "0.19.0"}


def external(config: InferstackConfig) -> External:
    """What exists on the cluster without being emitted: built-in and declared namespaces, and the Secrets the
    config references (never emitted by inferstack)."""
    secrets = {(w.namespace, name) for w in config.workloads for name in w.referenced_secrets}
    return External(
        # operator namespaces are created by their Helm releases (create_namespace), which the manifests wait for
        namespaces=External().namespaces | config.cluster.preexisting_namespaces | operator_namespaces(),
        secrets=frozenset(secrets),
    )


def reference_problems(objects: list[dict[str, Any]], config: InferstackConfig) -> list[str]:
    return [str(f) for f in check_references(objects, external(config))]


def pod_security_problems(objects: list[dict[str, Any]]) -> list[str]:
    return [str(f) for f in check_manifests(objects, namespace_levels(objects))]


# -- references -----------------------------------------------------------------------------------------------
def test_every_reference_resolves(any_app):
    assert reference_problems(any_app.kubernetes_objects(), any_app.config) == []


def _objects(app) -> list[dict[str, Any]]:
    return copy.deepcopy(app.kubernetes_objects())


def _find(objects, kind: str, name_part: str = "") -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and name_part in o["metadata"]["name"])


def test_gate_catches_a_job_mounting_an_undeclared_volume(s3_mount_app):
    objects = _objects(s3_mount_app)
    spec = _find(objects, "Job", "model-sync")["spec"]["template"]["spec"]
    spec["volumes"] = [v for v in spec["volumes"] if v["name"] != "work"]
    (problem,) = reference_problems(objects, s3_mount_app.config)
    assert "work" in problem and "volumeMounts" in problem


def test_gate_catches_a_pod_monitor_selecting_no_pod(default_app):
    objects = _objects(default_app)
    _find(objects, "PodMonitor")["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"] = "nobody"
    (problem,) = reference_problems(objects, default_app.config)
    assert "PodMonitor" in problem and "selector" in problem


def test_gate_catches_a_missing_priority_class(default_app):
    objects = [o for o in _objects(default_app) if o["kind"] != "PriorityClass"]
    problems = reference_problems(objects, default_app.config)
    assert problems and all("priorityClassName" in p for p in problems)


def test_gate_catches_an_undeclared_secret(neuron_vllm_app):
    config = neuron_vllm_app.config
    bare = External(namespaces=External().namespaces | config.cluster.preexisting_namespaces | operator_namespaces())
    problems = [str(f) for f in check_references(neuron_vllm_app.kubernetes_objects(), bare)]
    assert problems and all("hf-token" in p for p in problems)


def extended_resource_problems(objects: list[dict[str, Any]]) -> list[str]:
    """The API server rejects a container whose extended-resource request (``nvidia.com/gpu``,
    ``aws.amazon.com/neuron``, ``vpc.amazonaws.com/efa``) differs from its limit, and never allocates one without
    a limit."""
    problems = []
    for pod in all_pod_templates(objects):
        for _, container in pod.containers():
            resources = container.get("resources") or {}
            requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
            for name in sorted(set(requests) | set(limits)):
                if "/" in name and requests.get(name, limits.get(name)) != limits.get(name):
                    problems.append(f"{pod.ref} {container['name']} {name}: {requests.get(name)} ≠ {limits.get(name)}")
    return problems


def test_extended_resources_are_requested_with_equal_limits(any_app):
    assert extended_resource_problems(any_app.kubernetes_objects()) == []


def test_gate_catches_an_accelerator_without_a_limit(default_app):
    objects = _objects(default_app)
    limits = _find(objects, "Deployment")["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    del limits["nvidia.com/gpu"]
    (problem,) = extended_resource_problems(objects)
    assert "nvidia.com/gpu" in problem


def _tolerates(tolerations: list[dict[str, Any]], taint: dict[str, Any]) -> bool:
    for toleration in tolerations:
        key_matches = toleration.get("key") in (None, taint["key"]) or (
            toleration.get("operator") == "Exists" and not toleration.get("key")
        )
        value_matches = toleration.get("operator") == "Exists" or toleration.get("value") == taint.get("value")
        effect_matches = toleration.get("effect") in (None, "", taint["effect"])
        if key_matches and value_matches and effect_matches:
            return True
    return False


def taint_problems(objects: list[dict[str, Any]]) -> list[str]:
    """A pod selecting a Karpenter pool (``inferstack.io/pool``) must tolerate every NoSchedule/NoExecute taint
    of that NodePool, or it never schedules there."""
    pools = {
        (o["spec"]["template"].get("metadata") or {}).get("labels", {}).get("inferstack.io/pool"): o
        for o in objects
        if o["kind"] == "NodePool"
    }
    problems = []
    for pod in all_pod_templates(objects):
        pool = pools.get((pod.spec.get("nodeSelector") or {}).get("inferstack.io/pool"))
        if pool is None:
            continue
        for taint in pool["spec"]["template"]["spec"].get("taints") or []:
            if taint["effect"] != "PreferNoSchedule" and not _tolerates(pod.spec.get("tolerations") or [], taint):
                problems.append(f"{pod.ref}: does not tolerate {taint['key']}:{taint['effect']}")
    return problems


def test_pods_tolerate_every_taint_of_the_pool_they_select(any_app):
    assert taint_problems(any_app.kubernetes_objects()) == []


def test_a_no_execute_pool_taint_is_tolerated_with_its_effect(synth_config):
    config = InferstackConfig.model_validate(
        {
            "compute": {
                "karpenter_pools": [
                    {
                        "name": "gpu",
                        "instance_families": ["g6e"],
                        "taints": [{"key": "dedicated", "value": "llm", "effect": "NoExecute"}],
                    }
                ],
                "gpu_operator": {"extra_tolerations": [{"key": "dedicated", "effect": "NoExecute"}]},
            },
            "workloads": [{"name": "q", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}}],
        }
    )
    objects = synth_config(config, nag=False).kubernetes_objects()
    assert taint_problems(objects) == []
    pod = next(o for o in objects if o["kind"] == "Deployment")["spec"]["template"]["spec"]
    assert {"key": "dedicated", "operator": "Exists", "effect": "NoExecute"} in pod["tolerations"]


def test_gate_catches_an_untolerated_pool_taint(default_app):
    objects = _objects(default_app)
    pool = _find(objects, "NodePool", "l40s")
    pool["spec"]["template"]["spec"].setdefault("taints", []).append(
        {"key": "dedicated", "value": "x", "effect": "NoExecute"}
    )
    problems = taint_problems(objects)
    assert problems and all("dedicated:NoExecute" in p for p in problems)


# -- Pod Security ---------------------------------------------------------------------------------------------
def test_every_pod_meets_its_namespaces_pod_security_level(any_app):
    assert pod_security_problems(any_app.kubernetes_objects()) == []


def test_workload_namespaces_enforce_baseline(any_app):
    levels = namespace_levels(any_app.kubernetes_objects())
    created = {w.namespace for w in any_app.config.workloads} - any_app.config.cluster.preexisting_namespaces
    assert {levels[n] for n in created} <= {Level.BASELINE}


def test_gate_catches_ipc_lock_in_a_baseline_namespace(default_app):
    objects = _objects(default_app)
    container = _find(objects, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    container["securityContext"]["capabilities"]["add"] = ["IPC_LOCK"]
    (problem,) = pod_security_problems(objects)
    assert "IPC_LOCK" in problem and "privileged" in problem


#: Pods that run as their image's root user on purpose, with why — the only restricted-level findings allowed
#: (baseline, which the namespaces enforce, admits them).
ROOT_BY_DESIGN = {
    "tgi": "TGI 3.3.7's Python lives under /root/.local (uv), which no other uid can reach (Dockerfile at v3.3.7)",
    "litellm": "the litellm-database image is USER root and generated its Prisma engines under /root at build",
}


def test_serving_pods_would_pass_restricted_too(any_app):
    """Workload namespaces warn at restricted: our own pods should never trigger that warning — but for the
    runAsNonRoot finding of an engine that must run as its image's root (:data:`ROOT_BY_DESIGN`)."""
    objects = any_app.kubernetes_objects()
    workload_namespaces = {w.namespace for w in any_app.config.workloads}
    restricted = dict.fromkeys(workload_namespaces, Level.RESTRICTED)
    ours = [o for o in objects if o.get("metadata", {}).get("namespace") in workload_namespaces]
    root = {f"Deployment/{w.namespace}/{w.name}" for w in any_app.config.workloads if w.kind in ROOT_BY_DESIGN}
    findings = [f for f in check_manifests(ours, restricted) if not (f.ref in root and f.check == "runAsNonRoot")]
    assert [str(f) for f in findings] == []


# -- engine flags ---------------------------------------------------------------------------------------------
def _vllm_containers(objects):
    for pod in all_pod_templates(objects):
        for _, container in pod.containers():
            if container.get("command") == ["vllm", "serve"]:
                yield pod, container


def _release(image: str) -> str:
    key = next(k for k, v in ENGINE_IMAGES.items() if v == image)
    version = ENGINE_VLLM_VERSIONS[key]
    return NEAREST_FLAG_LIST.get(version, version)


def test_every_rendered_engine_flag_exists_in_the_pinned_engine(any_app):
    problems = {}
    containers = list(_vllm_containers(any_app.kubernetes_objects()))
    roles = sum(len(w.roles) for w in resolve(any_app.config).workloads if w.kind in ("vllm", "vllm_multinode"))
    assert len(containers) == roles, "one vllm serve container per role of each workload"
    for pod, container in containers:
        flags = vllm_flags(_release(container["image"]))
        unknown = flags.parse(container["args"][1:])  # args[0]: the model, positional
        if unknown:
            problems[pod.ref] = [(u.flag, u.near) for u in unknown]
    assert problems == {}


def test_compile_job_kwargs_are_engine_arguments(neuron_vllm_app):
    import json

    flags = vllm_flags(_release(ENGINE_IMAGES["vllm-neuron"]))
    checked = 0
    for pod in all_pod_templates(neuron_vllm_app.kubernetes_objects()):
        for _, container in pod.containers():
            env = {e["name"]: e.get("value") for e in container.get("env", [])}
            if "ENGINE_KWARGS" in env:
                for key in json.loads(env["ENGINE_KWARGS"]):
                    assert flags.knows("--" + key.replace("_", "-")), key
                    checked += 1
    assert checked >= 9, "the compile Job passes the server's engine settings"


def test_gate_catches_a_misspelt_rendered_flag(default_app):
    objects = _objects(default_app)
    (_, container), *_ = _vllm_containers(objects)
    container["args"] = [*container["args"], "--gpu-memory-utilisation", "0.9"]
    (unknown,) = vllm_flags(_release(container["image"])).parse(container["args"][1:])
    assert unknown.flag == "--gpu-memory-utilisation" and "--gpu-memory-utilization" in unknown.near
