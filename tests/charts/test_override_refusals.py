"""What ``overrides`` may set only with a reason (exposure, identity) and never (what Pod Security baseline refuses,
labels a selector uses) — issue 24 §7. GIVEN a workload's override, WHEN its chart is rendered, THEN the refused
value is a config error at its own path, naming what would be valid and whether a reason can accept it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cdk8s
import pytest
import yaml

from inferstack.catalog.versions import DEFAULT_KUBERNETES_VERSION
from inferstack.charts import override_refusals
from inferstack.charts.override_refusals import Ground, Refusal, pod_selectors, refusals
from inferstack.charts.overrides import apply_overrides, merge
from inferstack.charts.workload import StorageRefs
from inferstack.config import ConfigError, load_config, parse_config
from inferstack.config.kinds import kind_of
from inferstack.gates import pod_security
from inferstack.gates.pod_security import Level, check_manifests, checks_for
from inferstack.plan import resolve
from inferstack.plan.workloads import workloads_plan
from inferstack.stacks.workloads import render_workloads
from tests.charts.test_overrides import POOLS, REFS, of_kind, problems, render
from tests.synth import ROOT, SYNC_IMAGE

LWS = {
    "kind": "vllm_multinode",
    "pool": "p5",
    "model": {"id": "meta-llama/Llama-3.1-405B-Instruct", "hf_token_secret": {"name": "hf"}},
    "engine": {"tensor_parallel_size": 8, "pipeline_parallel_size": 2},
}
POD = ("spec", "template", "spec")


def at(steps: tuple[str, ...], value: Any) -> dict[str, Any]:
    """``value`` nested under ``steps``: ``at(("spec", "type"), "x")`` → ``{"spec": {"type": "x"}}``."""
    for step in reversed(steps):
        value = {step: value}
    return value


def pod(**fields: Any) -> dict[str, Any]:
    """A Deployment patch of its pod spec."""
    return {"Deployment": at(POD, fields)}


def container(**fields: Any) -> dict[str, Any]:
    """A Deployment patch of its vLLM container."""
    return pod(containers=[{"name": "vllm", **fields}])


# --------------------------------------------------------------------------------------------------------------
# Exposure: refused unless acknowledged
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"spec": {"type": "LoadBalancer"}}, "spec.type"),
        ({"spec": {"type": "NodePort"}}, "spec.type"),
        ({"spec": {"externalIPs": ["203.0.113.10"]}}, "spec.externalIPs"),
    ],
)
def test_a_service_reachable_from_outside_is_refused_with_the_way_to_acknowledge_it(patch, field):
    (problem,) = problems({"Service": patch})
    assert problem.startswith(f"workloads[0].overrides.Service.{field}:")
    assert "keep ClusterIP" in problem or "remove it" in problem
    assert f'override_acknowledgements: {{"Service.{field}": "<why>"}}' in problem


def test_a_cluster_ip_service_and_its_annotations_pass():
    patch = {"spec": {"type": "ClusterIP", "sessionAffinity": "ClientIP"}, "metadata": {"annotations": {"a": "b"}}}
    assert of_kind(render({"Service": patch}), "Service")["spec"]["sessionAffinity"] == "ClientIP"


# --------------------------------------------------------------------------------------------------------------
# Identity: refused unless acknowledged
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"serviceAccountName": "other"}, "serviceAccountName"),
        ({"serviceAccount": "other"}, "serviceAccount"),
        ({"serviceAccountName": None}, "serviceAccountName"),
        ({"automountServiceAccountToken": True}, "automountServiceAccountToken"),
    ],
)
def test_a_pod_identity_change_is_refused(fields, field):
    (problem,) = problems(pod(**fields))
    assert problem.startswith(f"workloads[0].overrides.Deployment.spec.template.spec.{field}:")
    assert f"Deployment.spec.template.spec.{field}" in problem.split("override_acknowledgements:")[1]


def test_the_rendered_identity_restated_passes():
    spec = of_kind(render(pod(serviceAccountName="w", automountServiceAccountToken=False)), "Deployment")
    assert spec["spec"]["template"]["spec"]["serviceAccountName"] == "w"


def test_a_pod_spec_inside_a_custom_resource_is_found_by_its_shape():
    worker = ("spec", "leaderWorkerTemplate", "workerTemplate", "spec")
    (problem,) = problems({"LeaderWorkerSet": at(worker, {"serviceAccountName": "x"})}, **LWS)
    assert problem.startswith(
        "workloads[0].overrides.LeaderWorkerSet.spec.leaderWorkerTemplate.workerTemplate.spec.serviceAccountName:"
    )


# --------------------------------------------------------------------------------------------------------------
# Pod Security baseline: refused, never acknowledged
# --------------------------------------------------------------------------------------------------------------


#: Deployment patches Pod Security baseline refuses, with the field each is refused at.
REFUSED_BY_BASELINE = [
    (pod(hostNetwork=True), "hostNetwork"),
    (pod(hostPID=True), "hostPID"),
    (pod(hostIPC=True), "hostIPC"),
    (pod(volumes=[{"name": "node", "hostPath": {"path": "/var/run"}}]), "volumes[0].hostPath"),
    (container(ports=[{"containerPort": 9000, "hostPort": 9000}]), "containers[0].ports[0].hostPort"),
    (container(securityContext={"privileged": True}), "containers[0].securityContext.privileged"),
    (
        container(securityContext={"capabilities": {"add": ["NET_BIND_SERVICE", "SYS_ADMIN"]}}),
        "containers[0].securityContext.capabilities.add",
    ),
    (pod(securityContext={"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}), "securityContext.sysctls[0].name"),
]
#: Deployment patches baseline admits.
ADMITTED_BY_BASELINE = [
    pod(hostNetwork=False, hostPID=False),
    pod(volumes=[{"name": "scratch", "emptyDir": {}}]),
    container(securityContext={"capabilities": {"add": ["NET_BIND_SERVICE", "CHOWN"]}}),
    container(securityContext={"privileged": False}),
    pod(securityContext={"sysctls": [{"name": "net.ipv4.tcp_keepalive_time", "value": "60"}]}),
]


@pytest.mark.parametrize(("patch", "field"), REFUSED_BY_BASELINE, ids=[f for _, f in REFUSED_BY_BASELINE])
def test_what_pod_security_baseline_refuses_is_refused_for_good(patch, field):
    (problem,) = problems(patch)
    assert problem.startswith(f"workloads[0].overrides.Deployment.spec.template.spec.{field}:")
    assert "Pod Security baseline" in problem and "refuses the pod at admission" in problem
    assert "cannot be acknowledged" in problem and "override_acknowledgements" not in problem


def test_the_capability_message_names_the_extra_one_and_the_baseline_set():
    (problem,) = problems(container(securityContext={"capabilities": {"add": ["NET_BIND_SERVICE", "SYS_ADMIN"]}}))
    assert "adds SYS_ADMIN, beyond the baseline set (AUDIT_WRITE, CHOWN" in problem and "drop SYS_ADMIN" in problem


@pytest.mark.parametrize(
    "patch",
    ADMITTED_BY_BASELINE,
    ids=["host-namespaces-off", "emptyDir", "baseline-capabilities", "unprivileged", "safe-sysctl"],
)
def test_what_baseline_admits_passes(patch):
    assert of_kind(render(patch), "Deployment")


def test_the_pod_security_sets_are_the_gates_own():
    assert override_refusals.BASELINE_CAPABILITIES == pod_security.BASELINE_CAPABILITIES
    assert override_refusals.SAFE_SYSCTLS == pod_security.SAFE_SYSCTLS
    assert override_refusals.SELINUX_TYPES == pod_security.SELINUX_TYPES
    assert override_refusals.CONFINED_PROFILE_TYPES == pod_security.CONFINED_PROFILE_TYPES
    assert override_refusals.APPARMOR_ANNOTATION_PREFIX == pod_security.APPARMOR_ANNOTATION_PREFIX


# --------------------------------------------------------------------------------------------------------------
# Labels that a selector uses: refused, never acknowledged
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "shown"), [("other", "'other'"), (None, "null")])
def test_a_pod_label_a_selector_uses_cannot_change_or_go(value, shown):
    patch = {"Deployment": at(("spec", "template", "metadata", "labels"), {"app.kubernetes.io/component": value})}
    (problem,) = problems(patch)
    assert problem.startswith(
        f"workloads[0].overrides.Deployment.spec.template.metadata.labels.app.kubernetes.io/component: {shown} —"
    )
    for selector in ("Deployment/w", "PodDisruptionBudget/w", "PodMonitor/w", "Service/w"):
        assert f"{selector} spec.selector" in problem
    assert "keep app.kubernetes.io/component: vllm" in problem and "cannot be acknowledged" in problem


def test_labels_of_your_own_and_object_labels_pass():
    patch = {
        "metadata": {"labels": {"app.kubernetes.io/component": "other"}},  # no selector selects the Deployment
        "spec": {"template": {"metadata": {"labels": {"team": "ml"}}}},
    }
    deployment = of_kind(render({"Deployment": patch}), "Deployment")
    assert deployment["spec"]["template"]["metadata"]["labels"]["team"] == "ml"


def obj(kind: str, **spec: Any) -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": "x"}, "spec": spec}


def test_selectors_of_pods_are_read_wherever_they_sit():
    tier = {"key": "tier", "operator": "In", "values": ["gpu"]}
    spread = {"labelSelector": {"matchLabels": {"app": "w"}, "matchExpressions": [tier]}}
    objects = [
        obj("Deployment", template={"spec": {"topologySpreadConstraints": [spread]}}),
        obj("PersistentVolumeClaim", selector={"matchLabels": {"app": "w"}}),  # selects volumes, not pods
    ]
    (selector,) = pod_selectors(objects)
    assert selector.owner == "Deployment/x spec.template.spec.topologySpreadConstraints[0].labelSelector"
    assert selector.matches({"app": "w", "tier": "gpu"}) and not selector.matches({"app": "w", "tier": "cpu"})
    assert selector.requirement("tier") == "tier In (gpu)"


@pytest.mark.parametrize(
    ("operator", "labels", "matches"),
    [
        ("Exists", {"k": "x"}, True),
        ("Exists", {}, False),
        ("DoesNotExist", {}, True),
        ("DoesNotExist", {"k": "x"}, False),
        ("NotIn", {"k": "a"}, False),
        ("NotIn", {"k": "b"}, True),
        ("NotIn", {}, True),
    ],
)
def test_match_expressions_read_as_kubernetes_reads_them(operator, labels, matches):
    expression = {"key": "k", "operator": operator, "values": ["a"]}
    (selector,) = pod_selectors([obj("PodMonitor", selector={"matchExpressions": [expression]})])
    assert selector.matches(labels) is matches


def test_a_leader_label_the_service_selects_is_refused():
    steps = ("spec", "leaderWorkerTemplate", "leaderTemplate", "metadata", "labels")
    (problem,) = problems({"LeaderWorkerSet": at(steps, {"inferstack.io/role": "worker"})}, **LWS)
    assert "Service/w spec.selector" in problem and "PodMonitor/w spec.selector" in problem


# --------------------------------------------------------------------------------------------------------------
# Acknowledgements
# --------------------------------------------------------------------------------------------------------------


def judged(overrides: dict[str, Any], acknowledgements: dict[str, str]) -> list[dict[str, Any]]:
    """The chart's objects after ``overrides`` with ``acknowledgements`` (passed to ``apply_overrides`` here: the
    chart does not hand the config field to it yet)."""
    config = parse_config(
        {"compute": POOLS, "workloads": [{"name": "w", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}}]}
    )
    (resolved,) = resolve(config).workloads
    chart = kind_of(resolved.config).chart(cdk8s.App(), "w", resolved, REFS)
    where = "workloads[0].overrides"
    apply_overrides(chart, overrides, where, DEFAULT_KUBERNETES_VERSION, acknowledgements=acknowledgements)
    return chart.to_json()


def judged_problems(overrides: dict[str, Any], acknowledgements: dict[str, str]) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        judged(overrides, acknowledgements)
    return [str(p) for p in raised.value.problems]


REASON = "internal NLB for the peered VPC's clients"


def test_an_acknowledged_exposure_is_applied():
    service = of_kind(judged({"Service": {"spec": {"type": "LoadBalancer"}}}, {"Service.spec.type": REASON}), "Service")
    assert service["spec"]["type"] == "LoadBalancer"


def test_an_acknowledgement_covers_its_own_path_only():
    overrides = {"Service": {"spec": {"type": "LoadBalancer", "externalIPs": ["203.0.113.10"]}}}
    (problem,) = judged_problems(overrides, {"Service.spec.type": REASON})
    assert problem.startswith("workloads[0].overrides.Service.spec.externalIPs:")


def test_an_acknowledged_identity_is_applied():
    acknowledged = {"Deployment.spec.template.spec.serviceAccountName": REASON}
    deployment = of_kind(judged(pod(serviceAccountName="shared"), acknowledged), "Deployment")
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "shared"


def test_pod_security_cannot_be_acknowledged():
    path = "Deployment.spec.template.spec.hostNetwork"
    refused, acknowledgement = judged_problems(pod(hostNetwork=True), {path: REASON})
    assert refused.startswith(f"workloads[0].overrides.{path}:")
    assert acknowledgement.startswith(f"workloads[0].override_acknowledgements.{path}: cannot be acknowledged")


def test_a_selector_label_cannot_be_acknowledged():
    path = "Deployment.spec.template.metadata.labels.app.kubernetes.io/name"
    patch = {"Deployment": at(("spec", "template", "metadata", "labels"), {"app.kubernetes.io/name": "x"})}
    _, acknowledgement = judged_problems(patch, {path: REASON})
    assert acknowledgement.startswith(f"workloads[0].override_acknowledgements.{path}: cannot be acknowledged")


def test_an_acknowledgement_of_a_path_no_override_sets_is_an_error_naming_the_wanted_one():
    overrides = {"Service": {"spec": {"type": "NodePort"}}}
    refused, stale = judged_problems(overrides, {"Service.spec.externalIPs": REASON})
    assert refused.startswith("workloads[0].overrides.Service.spec.type:")
    assert stale == (
        "workloads[0].override_acknowledgements.Service.spec.externalIPs: no override sets this path — "
        "acknowledge Service.spec.type"
    )
    (alone,) = judged_problems({}, {"Service.spec.type": REASON})
    assert alone.endswith("no override sets this path — remove it")


def test_an_acknowledgement_of_an_override_that_needs_none_is_an_error():
    overrides = {"Service": {"spec": {"sessionAffinity": "ClientIP"}}}
    (problem,) = judged_problems(overrides, {"Service.spec.sessionAffinity": REASON})
    assert problem.startswith("workloads[0].override_acknowledgements.Service.spec.sessionAffinity: needs no")


@pytest.mark.parametrize("reason", ["", "   ", "ok", "         x"])
def test_an_acknowledgement_needs_a_reason(reason):
    workload = {
        "name": "w",
        "pool": "gpu",
        "model": {"id": "Qwen/Qwen3-8B"},
        "overrides": {"Service": {"spec": {"type": "LoadBalancer"}}},
        "override_acknowledgements": {"Service.spec.type": reason},
    }
    with pytest.raises(ConfigError) as raised:
        parse_config({"compute": POOLS, "workloads": [workload]})
    (problem,) = raised.value.problems
    assert str(problem).startswith("workloads[0].override_acknowledgements.Service.spec.type:")
    assert "a reason is required" in str(problem)


def test_a_reason_is_kept_on_the_workload():
    workload = {"name": "w", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}}
    config = parse_config(
        {"compute": POOLS, "workloads": [{**workload, "override_acknowledgements": {"Service.spec.type": REASON}}]}
    )
    assert config.workloads[0].override_acknowledgements == {"Service.spec.type": REASON}


# --------------------------------------------------------------------------------------------------------------
# Every kind's pod specs, and the agreement with the Pod Security gate on upstream's fixtures
# --------------------------------------------------------------------------------------------------------------

#: Example config → the kind whose rendered objects a pure-function test patches.
EXAMPLES = {
    "Deployment": "inferstack.yaml",
    "LeaderWorkerSet": "examples/vllm-multinode-lws-p5.yaml",
    "RayService": "examples/ray-llm-multi-model.yaml",
    "DynamoGraphDeployment": "examples/dynamo-disagg-efa.yaml",
    "InferenceService": "examples/kserve-scale-to-zero.yaml",
    "NIMService": "examples/nim-llama-70b.yaml",
}


@pytest.fixture(scope="module")
def rendered() -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Kind → (its rendered object, every object of its workload), from the examples (rendered once)."""
    refs = StorageRefs(
        region="us-east-1",
        bucket="bucket",
        fsx_id="fs-0123456789abcdef0",
        fsx_dns_name="fsx.example",
        fsx_mount_name="mount",
        sync_image=SYNC_IMAGE,
    )
    found: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    for kind, path in EXAMPLES.items():
        for workload in render_workloads(workloads_plan(load_config(str(ROOT / path))), None, refs):
            objects = [o for o in workload.manifest if o["kind"] == kind]
            if objects and kind not in found:
                found[kind] = (objects[0], workload.manifest)
    assert set(found) == set(EXAMPLES)
    return found


def judge(rendered, kind: str, patch: dict[str, Any]) -> tuple[dict[str, Any], list[Refusal]]:
    obj, objects = rendered[kind]
    merged = merge(obj, patch)
    return merged, refusals(kind, patch, merged, obj, pod_selectors(objects))


def template_patch(rendered, kind: str, template: dict[str, Any]) -> dict[str, Any] | None:
    """``template`` (a pod template: ``metadata`` and ``spec``) as a patch of ``kind``'s pod template; None where
    the kind has no place for it (a KServe predictor has no template metadata)."""
    if kind == "DynamoGraphDeployment":
        name = rendered[kind][0]["spec"]["components"][0]["name"]
        return {"spec": {"components": [{"name": name, "podTemplate": template}]}}
    if kind == "InferenceService":
        return None if "metadata" in template else {"spec": {"predictor": template["spec"]}}
    steps = {
        "Deployment": ("spec", "template"),
        "LeaderWorkerSet": ("spec", "leaderWorkerTemplate", "workerTemplate"),
        "RayService": ("spec", "rayClusterConfig", "headGroupSpec", "template"),
    }[kind]
    return at(steps, template)


POD_KINDS = ["Deployment", "LeaderWorkerSet", "RayService", "DynamoGraphDeployment", "InferenceService"]


@pytest.mark.parametrize("kind", POD_KINDS)
def test_every_kinds_pod_specs_are_found(rendered, kind):
    patch = template_patch(rendered, kind, {"spec": {"hostPID": True, "serviceAccountName": "x"}})
    _, found = judge(rendered, kind, patch)
    assert {(r.ground, r.path.rsplit(".", 1)[-1]) for r in found} == {
        (Ground.IDENTITY, "serviceAccountName"),
        (Ground.POD_SECURITY, "hostPID"),
    }


def test_a_kserve_model_container_is_a_container(rendered):
    patch = at(("spec", "predictor", "model", "securityContext"), {"privileged": True})
    _, (refusal,) = judge(rendered, "InferenceService", patch)
    assert (refusal.check, refusal.path) == ("privileged", "spec.predictor.model.securityContext.privileged")


@pytest.mark.parametrize(
    ("kind", "steps"),
    [
        ("RayService", ("spec", "rayClusterConfig", "headGroupSpec", "serviceType")),
        ("RayService", ("spec", "serveService", "spec", "type")),
        ("NIMService", ("spec", "expose", "service", "type")),
    ],
)
def test_a_custom_resources_service_type_is_exposure(rendered, kind, steps):
    _, (refusal,) = judge(rendered, kind, at(steps, "LoadBalancer"))
    assert (refusal.ground, refusal.path) == (Ground.EXPOSURE, ".".join(steps))


def test_a_ray_head_label_its_pod_monitor_uses_is_refused(rendered):
    steps = ("spec", "rayClusterConfig", "headGroupSpec", "template", "metadata", "labels", "inferstack.io/role")
    _, (refusal,) = judge(rendered, "RayService", at(steps, "worker"))
    assert refusal.ground is Ground.SELECTOR and "PodMonitor/chat-head spec.selector" in refusal.what


FIXTURES = ROOT / "tests" / "fixtures" / "pod-security-admission" / "test" / "testdata"
#: Every upstream fixture pod (both levels, both verdicts), each judged here at baseline.
PODS = sorted(FIXTURES.glob("*/v1.35/*/*.yaml"))


def fixture_template(path: Path) -> dict[str, Any]:
    pod = yaml.safe_load(path.read_text())
    annotations = (pod.get("metadata") or {}).get("annotations")
    return {"metadata": {"annotations": annotations}, "spec": pod["spec"]} if annotations else {"spec": pod["spec"]}


def pod_security_verdicts(rendered, kind: str, path: Path) -> tuple[set[str], set[str]] | None:
    """(checks this list refuses the fixture's pod for, checks the Pod Security gate refuses the merged object for,
    at baseline), the fixture patched into ``kind``'s pod template."""
    patch = template_patch(rendered, kind, fixture_template(path))
    if patch is None:
        return None
    merged, found = judge(rendered, kind, patch)
    ours = {str(r.check) for r in found if r.ground is Ground.POD_SECURITY}
    assert all(r.ground is Ground.POD_SECURITY for r in found), [str(r) for r in found]
    return ours, {f.check for f in check_manifests([merged], {}, default=Level.BASELINE)}


def agree(ours: set[str], gate: set[str]) -> bool:
    """The same checks refused — but ``hostPorts``, which the gate adds under ``hostNetwork`` (the API server then
    defaults each port's hostPort to its containerPort), where this list names hostNetwork alone."""
    defaulted = {"hostPorts"} if "hostNamespaces" in ours else set()
    return ours <= gate and gate - ours <= defaulted


EPHEMERAL = pod(ephemeralContainers=[{"name": "debug", "image": "busybox", "securityContext": {"privileged": True}}])


@pytest.mark.parametrize(
    "patch",
    [*(p for p, _ in REFUSED_BY_BASELINE), *ADMITTED_BY_BASELINE, EPHEMERAL],
    ids=[
        *(f for _, f in REFUSED_BY_BASELINE),
        *(f"admitted-{i}" for i in range(len(ADMITTED_BY_BASELINE))),
        "ephemeral",
    ],
)
def test_the_cases_above_agree_with_the_gate(rendered, patch):
    merged, found = judge(rendered, "Deployment", patch["Deployment"])
    ours = {str(r.check) for r in found if r.ground is Ground.POD_SECURITY}
    assert ours or patch in ADMITTED_BY_BASELINE
    assert agree(ours, {f.check for f in check_manifests([merged], {}, default=Level.BASELINE)})


@pytest.mark.parametrize("kind", POD_KINDS)
def test_the_pod_security_refusals_agree_with_the_gate_on_upstreams_fixtures(rendered, kind):
    """Every fixture this list accepts passes the gate at baseline; every one it refuses, the gate refuses for the
    same checks; and every baseline check is exercised."""
    assert len(PODS) == 148
    disagreements, seen = [], set()
    for path in PODS:
        verdicts = pod_security_verdicts(rendered, kind, path)
        if verdicts is None:
            continue
        ours, gate = verdicts
        seen |= ours
        if not agree(ours, gate):
            disagreements.append(f"{path.relative_to(FIXTURES)}: ours {sorted(ours)}, gate {sorted(gate)}")
    assert disagreements == []
    every = {c.id for c in checks_for(Level.BASELINE)}
    assert seen == (every if kind != "InferenceService" else every - {"appArmorProfile"})
