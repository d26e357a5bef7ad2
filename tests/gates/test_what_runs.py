"""GATE: what runs is what we check. Every Helm release of the default config and of every example is rendered
offline with our values (the helm the kubectl provider runs at deploy), the operators' pods are projected from our
custom resources (inferstack/gates/projections.py, each rule with its upstream source), and the checks of
inferstack/gates/cluster_view.py run over ours, the charts' and the projected objects together."""

from __future__ import annotations

import pytest

from inferstack.gates import cluster_view as checks
from inferstack.gates.helm import helm_version
from inferstack.gates.kubelet import triton_scans_kubelet_entries
from inferstack.gates.pod_security import check_manifests, namespace_levels
from inferstack.gates.releases import UNVENDORED
from inferstack.plan.names import namespaces_to_create
from tests.gates.cluster_view import CHARTS_SRC, NO_CHARTS, cluster_view

pytestmark = pytest.mark.skipif(not CHARTS_SRC.is_dir(), reason=NO_CHARTS)


def test_the_helm_is_the_kubectl_providers():
    assert helm_version() == "v4.2.3"


def test_every_release_renders_with_our_values(any_app):
    view = cluster_view(any_app)
    failed = [f"{r.release.ref}: {r.error}" for r in view.rendered if r.error]
    assert not failed, "\n".join(failed)
    skipped = {r.release.chart: r.skipped for r in view.rendered if r.skipped}
    assert set(skipped) <= set(UNVENDORED), skipped


#: Controller pods that cannot be held to the system nodes, each with the reason (an unused entry fails).
OFF_SYSTEM_POOL = {
    "Job/nim-operator/nim-operator-upgrade-crd": (
        "k8s-nim-operator 3.0.0 templates/upgrade_crd.yaml reads no nodeSelector or affinity (only "
        "operator.tolerations); a pre-upgrade hook that lands on an untainted node: the system nodes, as every "
        "accelerator pool is tainted"
    ),
}


def test_controllers_land_on_the_system_pool(any_app):
    view = cluster_view(any_app)
    findings = checks.controllers_off_system_pool([*view.charts, *view.projected])
    assert [f for f in findings if f.split(" ")[0] not in OFF_SYSTEM_POOL] == []


def test_every_placement_exception_is_used(nim_app):
    view = cluster_view(nim_app)
    used = {f.split(" ")[0] for f in checks.controllers_off_system_pool(view.charts)}
    assert set(OFF_SYSTEM_POOL) <= used


def test_node_daemons_tolerate_the_pools_they_serve(any_app):
    view = cluster_view(any_app)
    assert checks.daemons_missing_tolerations(view.everything, view.pools()) == []


def test_every_image_that_runs_is_pinned(any_app):
    view = cluster_view(any_app)
    runs = [o for o in view.everything if o.get("kind") != "InferenceService"]  # its pod is projected
    assert checks.unpinned_images(runs) == []


def test_webhook_services_exist(any_app):
    assert checks.missing_webhook_services(cluster_view(any_app).everything) == []


def test_every_alert_can_resolve(any_app):
    assert checks.unresolvable_alert_jobs(cluster_view(any_app).everything) == []


def test_no_container_requests_more_than_its_limit(any_app):
    view = cluster_view(any_app)
    assert checks.requests_over_limits(view.everything) == []


def test_every_inference_service_finds_its_runtime_in_the_rendered_release(any_app):
    projected = cluster_view(any_app).projected
    missing = [
        p["metadata"]["name"] for p in projected if "inferstack.io/missing-runtime" in p["metadata"]["annotations"]
    ]
    assert missing == []


def test_the_kserve_predictor_limits_what_it_requests_after_the_runtime_merge(kserve_app):
    """Defect: kserve-huggingfaceserver limits cpu to 1 (clusterservingruntimes-patch.yaml:402-408 at v0.20.0); merged
    key by key under our 7-CPU request, the API server refused the pod."""
    (pod,) = [p for p in cluster_view(kserve_app).projected if p["metadata"]["name"].endswith("-predictor")]
    resources = pod["spec"]["containers"][0]["resources"]
    assert resources["limits"]["cpu"] == resources["requests"]["cpu"] == "7"
    assert pod["spec"]["containers"][0]["image"] == "kserve/huggingfaceserver:v0.20.0"


def test_no_triton_scans_the_kubelets_configmap_entries(any_app):
    assert list(triton_scans_kubelet_entries(cluster_view(any_app).ours)) == []


def test_kube_state_metrics_exports_the_pod_label_the_gpu_panels_join_on(default_app):
    """Defect: exported_pod=~"<name>-.+" also matched <name>-bench and <name>-70b; the GPU series are now joined to
    kube_pod_labels{label_app_kubernetes_io_name=<name>}, which kube-state-metrics exports only when allow-listed."""
    (ksm,) = [
        o
        for o in cluster_view(default_app).charts
        if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("kube-state-metrics")
    ]
    args = ksm["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--metric-labels-allowlist=pods=[app.kubernetes.io/name]" in args
    rules = [o for o in cluster_view(default_app).ours if o["kind"] == "PrometheusRule"]
    exprs = [r["expr"] for rule in rules for g in rule["spec"]["groups"] for r in g["rules"]]
    gpu = [e for e in exprs if "DCGM_" in e]
    assert gpu and all('label_app_kubernetes_io_name="ministral"' in e and "exported_pod=~" not in e for e in gpu)


#: API groups the config declares the cluster already serves (their operators are not installed by inferstack).
EXTERNAL_GROUPS = ("serving.knative.dev", "model.aibrix.ai", "autoscaling.aibrix.ai", "orchestration.aibrix.ai")


def test_every_custom_resource_follows_the_release_of_its_crd(any_app):
    steps = cluster_view(any_app).deploy_steps()
    assert steps
    assert checks.custom_resources_without_a_crd_before(steps, EXTERNAL_GROUPS) == []


def test_rendered_pods_meet_their_namespaces_pod_security(any_app):
    view = cluster_view(any_app)
    levels = namespace_levels(view.ours)
    findings = check_manifests([*view.charts, *view.projected], levels)
    assert [str(f) for f in findings] == []


def test_chart_pods_in_namespaces_we_own_have_their_paths(any_app):
    """Our NetworkPolicies deny everything in the namespaces inferstack owns; a release that installs pods there
    (none of the pinned ones does today) must still reach DNS and the API and be reachable on its Services' ports."""
    view = cluster_view(any_app)
    owned = namespaces_to_create(any_app.config)
    assert checks.chart_pods_without_paths(view.charts, view.ours, owned) == []


def test_non_root_containers_have_a_writable_home(any_app):
    """Image facts: a container of a catalogued image running as a non-root user gets a HOME it can write."""
    assert checks.unwritable_homes(cluster_view(any_app).everything) == []
