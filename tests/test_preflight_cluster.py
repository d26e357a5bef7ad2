"""``inferstack preflight --cluster NAME``: GIVEN a team's cluster (EKS answers stubbed with botocore's Stubber, its
Helm releases as Helm stores them), WHEN preflight runs, THEN each add-on or chart the cluster runs already and
inferstack would install again fails with the switch that avoids it; what inferstack leaves, or never installs,
passes; nothing needs a network or credentials."""

from __future__ import annotations

import base64
import gzip
import json

import boto3
import pytest
from botocore.stub import Stubber

from inferstack import cli
from inferstack.catalog.versions import HELM_CHARTS
from inferstack.config import load_config, parse_config
from inferstack.config.edit import with_changes
from inferstack.preflight import vcpu_demand
from inferstack.preflight_cluster import (
    ADDON_SWITCHES,
    CLUSTER_CHART_SWITCHES,
    NOT_INSTALLED,
    OPERATOR_CHART_SWITCHES,
    HelmRelease,
    TeamCluster,
    decode_release,
)
from tests.synth import ROOT

ARN = "arn:aws:eks:us-west-2:123456789012:cluster/team"
RAY = load_config(ROOT / "examples" / "ray-llm-multi-model.yaml")
# On a team's cluster the pools go to its own Karpenter: the config names that Karpenter's node role.
RAY_ON_TEAM = with_changes(RAY, {"compute.karpenter_node_role": "TeamKarpenterNode"})


def eks(addons: list[str], version: str = "1.36", extra: list | None = None):
    client = boto3.client("eks", region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="y")
    stub = Stubber(client)
    for method, response in extra or []:
        stub.add_response(method, response)
    stub.add_response("describe_cluster", {"cluster": {"name": "team", "arn": ARN, "version": version}})
    stub.add_response("list_addons", {"addons": addons})
    stub.activate()
    return lambda service: client


def releases(*items: tuple[str, str, str]):
    seen = []

    def lister(context: str) -> list[HelmRelease]:
        seen.append(context)
        return [HelmRelease(name=n, namespace=ns, chart=c, version="1.0.0") for n, ns, c in items]

    lister.seen = seen  # type: ignore[attr-defined]
    return lister


def by_subject(results):
    return {(r.check, r.subject): r for r in results}


def test_add_ons_the_cluster_runs_are_left_alone_unless_the_config_turns_them_on():
    results = by_subject(TeamCluster(RAY_ON_TEAM, "team", eks(["cert-manager", "vpc-cni"]), releases()).run())
    assert results[("addon", "cert-manager")].passed
    assert "observability.install_cert_manager is off" in results[("addon", "cert-manager")].detail
    assert results[("addon", "vpc-cni")].passed
    assert results[("cluster", "team")].passed

    on = with_changes(RAY_ON_TEAM, {"observability.install_cert_manager": True})
    failed = by_subject(TeamCluster(on, "team", eks(["cert-manager"]), releases()).run())[("addon", "cert-manager")]
    assert not failed.passed and "Addon already exists" in failed.detail
    assert (
        failed.fix == "set observability.install_cert_manager: false (the cluster's cert-manager serves the platform)"
    )


def test_a_workload_operator_the_cluster_runs_fails_only_when_a_workload_needs_it():
    running = releases(("kuberay-operator", "ray-system", "kuberay-operator"), ("ingress", "edge", "ingress-nginx"))
    results = by_subject(TeamCluster(RAY_ON_TEAM, "team", eks([]), running).run())
    kuberay = results[("helm", "ray-system/kuberay-operator")]
    assert not kuberay.passed and kuberay.fix.startswith("set observability.install_kuberay: false")
    assert results[("helm", "edge/ingress")].passed  # not a chart inferstack installs
    assert running.seen == [ARN]  # kubectl's context: the cluster's ARN, as update-kubeconfig names it

    declared = with_changes(RAY_ON_TEAM, {"observability.install_kuberay": False})
    assert by_subject(TeamCluster(declared, "team", eks([]), running).run())[
        ("helm", "ray-system/kuberay-operator")
    ].passed
    no_ray = parse_config({"name": "empty"})
    unused = by_subject(TeamCluster(no_ray, "team", eks([]), running).run())[("helm", "ray-system/kuberay-operator")]
    assert unused.passed and "does not install it here" in unused.detail


def test_a_cluster_add_on_chart_fails_when_its_switch_is_on():
    running = releases(("gpu-operator", "gpu-operator", "gpu-operator"))
    on = with_changes(RAY_ON_TEAM, {"compute.gpu_operator.install": True})
    failed = by_subject(TeamCluster(on, "team", eks([]), running).run())[("helm", "gpu-operator/gpu-operator")]
    assert not failed.passed and failed.fix.startswith("set compute.gpu_operator.install: false")
    left = by_subject(TeamCluster(RAY_ON_TEAM, "team", eks([]), running).run())[("helm", "gpu-operator/gpu-operator")]
    assert left.passed  # off on a team's cluster unless set


def test_a_version_mismatch_and_unreadable_releases_are_failed_checks():
    def refused(context: str) -> list[HelmRelease]:
        raise RuntimeError("error: You must be logged in to the server (Unauthorized)")

    results = by_subject(TeamCluster(RAY_ON_TEAM, "team", eks([], version="1.35"), refused).run())
    assert results[("cluster", "team")].fix == "set cluster.kubernetes_version: '1.35' (charts and flags follow it)"
    helm = results[("helm", ARN)]
    assert not helm.passed and "Unauthorized" in helm.detail and "aws eks update-kubeconfig --name team" in helm.fix


def test_an_unknown_cluster_is_one_failed_check_not_a_traceback():
    client = boto3.client("eks", region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="y")
    stub = Stubber(client)
    stub.add_client_error("describe_cluster", "ResourceNotFoundException", "No cluster found for name: team.")
    stub.activate()
    (result,) = TeamCluster(RAY_ON_TEAM, "team", lambda s: client, releases()).run()
    assert not result.passed and "ResourceNotFoundException" in result.detail


@pytest.mark.parametrize(
    ("addon", "storage", "creates"),
    [
        ("aws-efs-csi-driver", {"efs": {}}, True),
        ("aws-efs-csi-driver", {}, False),
        ("aws-fsx-csi-driver", {"fsx": {"storage_capacity_gib": 1200}}, True),
        ("aws-fsx-csi-driver", {}, False),
        ("aws-mountpoint-s3-csi-driver", {"model_bucket": None}, False),
    ],
)
def test_a_csi_add_on_the_cluster_runs_fails_only_where_the_storage_stack_would_create_it(addon, storage, creates):
    """The storage stack creates a CSI driver's add-on only with its storage (and ``install_csi_drivers``)."""
    changes = {"storage.install_csi_drivers": True, **{f"storage.{key}": value for key, value in storage.items()}}
    config = with_changes(RAY_ON_TEAM, changes)
    result = by_subject(TeamCluster(config, "team", eks([addon]), releases()).run())[("addon", addon)]
    assert result.passed is not creates
    assert ("Addon already exists" in result.detail) is creates


@pytest.mark.parametrize("compressed", [True, False], ids=["gzip", "plain"])
def test_release_secrets_decode_as_helm_writes_them(compressed):
    release = {
        "name": "kuberay-operator",
        "namespace": "ray",
        "chart": {"metadata": {"name": "kuberay-operator", "version": "1.7.0"}},
    }
    payload = json.dumps(release).encode()
    helm = base64.b64encode(gzip.compress(payload) if compressed else payload)  # helm's own encoding
    secret = {"data": {"release": base64.b64encode(helm).decode()}}  # the API's base64 of Secret data
    assert decode_release(secret) == HelmRelease("kuberay-operator", "ray", "kuberay-operator", "1.7.0")


def test_every_catalog_chart_is_classified():
    classified = set(CLUSTER_CHART_SWITCHES) | set(OPERATOR_CHART_SWITCHES) | set(NOT_INSTALLED)
    assert {pin.chart for pin in HELM_CHARTS.values()} <= classified
    assert set(ADDON_SWITCHES) <= set(CLUSTER_CHART_SWITCHES)  # an add-on run as a Helm release is judged too
    for path in (
        *CLUSTER_CHART_SWITCHES.values(),
        *(s for _, s in OPERATOR_CHART_SWITCHES.values()),
        *ADDON_SWITCHES.values(),
    ):
        node = RAY
        for name in path.split("."):
            node = getattr(node, name)  # every switch is a real config field
        assert isinstance(node, bool), path


def test_the_command_adds_the_cluster_checks(tmp_path, capsys):
    path = tmp_path / "platform.yaml"
    path.write_text("name: team\nenv: {region: us-west-2}\n")
    versions = {"clusterVersions": [{"clusterVersion": "1.36", "versionStatus": "STANDARD_SUPPORT"}]}
    cluster = eks(["cert-manager"], extra=[("describe_cluster_versions", versions)])
    quotas = boto3.client("service-quotas", region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="y")
    stub = Stubber(quotas)
    for _ in vcpu_demand(load_config(path)):
        stub.add_response("get_service_quota", {"Quota": {"Value": 1000.0}})
    stub.activate()
    idle = boto3.client("ec2", region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="y")
    Stubber(idle).activate()  # no pool: nothing to look up, and no call may reach AWS
    clients = {"eks": cluster("eks"), "service-quotas": quotas, "ec2": idle}
    code = cli._preflight(str(path), None, clients=clients.__getitem__, cluster="team", releases=releases())
    out = capsys.readouterr().out
    assert code == 0, out
    assert "cert-manager" in out and "inferstack leaves it" in out and "Kubernetes 1.36" in out


def test_an_add_on_run_as_a_helm_release_is_judged_like_the_add_on():
    running = releases(("cert-manager", "cert-manager", "cert-manager"))
    on = with_changes(RAY_ON_TEAM, {"observability.install_cert_manager": True})
    failed = by_subject(TeamCluster(on, "team", eks([]), running).run())[("helm", "cert-manager/cert-manager")]
    assert not failed.passed and failed.fix.startswith("set observability.install_cert_manager: false")


def test_the_knative_operator_is_declared_not_switched_off():
    """Turning install_knative_serving off would leave a Knative-mode workload without Knative (KSERVE-KNATIVE)."""
    kserve = with_changes(
        load_config(ROOT / "examples" / "kserve-scale-to-zero.yaml"), {"compute.karpenter_node_role": "TeamNodes"}
    )
    running = releases(("knative-operator", "knative-operator", "knative-operator"))
    failed = by_subject(TeamCluster(kserve, "team", eks([]), running).run())[
        ("helm", "knative-operator/knative-operator")
    ]
    assert not failed.passed and failed.fix.startswith(
        "declare the cluster's Knative Serving in cluster.knative_serving"
    )


def test_a_release_record_that_does_not_decode_is_its_own_failed_check(monkeypatch):
    from inferstack import preflight_cluster

    good = {"name": "keda", "namespace": "keda", "chart": {"metadata": {"name": "keda", "version": "2.20.2"}}}
    items = [
        {
            "metadata": {"name": "sh.helm.release.v1.keda.v1", "namespace": "keda", "labels": {"name": "keda"}},
            "data": {"release": base64.b64encode(base64.b64encode(gzip.compress(json.dumps(good).encode()))).decode()},
        },
        {
            "metadata": {"name": "sh.helm.release.v1.odd.v1", "namespace": "x", "labels": {"name": "odd"}},
            "data": {"release": base64.b64encode(b"not helm").decode()},
        },
    ]

    class Done:
        returncode, stderr, stdout = 0, "", json.dumps({"items": items})

    monkeypatch.setattr(preflight_cluster.subprocess, "run", lambda *a, **k: Done())
    found = preflight_cluster.kubectl_releases("ctx")
    assert [r.name for r in found] == ["keda", "odd"] and found[0].chart == "keda" and found[1].problem
    results = by_subject(TeamCluster(RAY_ON_TEAM, "team", eks([]), lambda c: found).run())
    assert results[("helm", "keda/keda")].passed
    odd = results[("helm", "x/odd")]
    assert not odd.passed and odd.fix == "look at it with: helm -n x history odd"


#: A routed vLLM on the team's cluster: its router's InferencePool needs the CRD.
ROUTED_ON_TEAM = with_changes(
    load_config(ROOT / "examples" / "litellm-gateway.yaml"), {"compute.karpenter_node_role": "TeamKarpenterNode"}
)
POOL_CRD = "inferencepools.inference.networking.k8s.io"


def crds(present: dict[str, dict[str, str]] | None = None, error: str | None = None):
    asked: list[tuple[str, tuple[str, ...]]] = []

    def lister(context: str, names: tuple[str, ...]) -> dict[str, dict[str, str]]:
        asked.append((context, names))
        if error is not None:
            raise RuntimeError(error)
        return {n: a for n, a in (present or {}).items() if n in names}

    lister.asked = asked  # type: ignore[attr-defined]
    return lister


@pytest.mark.parametrize(
    ("present", "install", "passed", "fix"),
    [
        (True, True, False, "set observability.install_inference_pool_crd: false"),  # ours would replace theirs
        (True, False, True, ""),
        (False, True, True, ""),
        (False, False, False, "set observability.install_inference_pool_crd: true"),  # pools without a CRD
    ],
)
def test_the_routers_crd_is_judged_against_the_clusters(present, install, passed, fix):
    config = with_changes(ROUTED_ON_TEAM, {"observability.install_inference_pool_crd": install})
    meta = {"labels": {}, "annotations": {"inference.networking.k8s.io/bundle-version": "v1.3.0"}}
    found = {POOL_CRD: meta} if present else {}
    lister = crds(found)
    results = by_subject(TeamCluster(config, "team", eks([]), releases(), lister).run())
    result = results[("crd", POOL_CRD)]
    assert result.passed is passed and result.fix.startswith(fix)
    if present:
        assert "v1.3.0" in result.detail
    assert lister.asked == [(ARN, (POOL_CRD,))]


def test_the_crd_an_earlier_deploy_applied_passes():
    """inferstack's CRD stays after a deploy (durable): a second preflight finds it labelled as ours."""
    ours = {POOL_CRD: {"labels": {"app.kubernetes.io/part-of": "inferstack"}, "annotations": {}}}
    results = by_subject(TeamCluster(ROUTED_ON_TEAM, "team", eks([]), releases(), crds(ours)).run())
    assert results[("crd", POOL_CRD)].passed


def test_the_crds_are_not_asked_for_without_a_router():
    lister = crds(error="must not be called")
    results = TeamCluster(RAY_ON_TEAM, "team", eks([]), releases(), lister).run()
    assert lister.asked == [] and not [r for r in results if r.check == "crd"]


def test_a_refused_crd_listing_names_the_way_in():
    results = by_subject(TeamCluster(ROUTED_ON_TEAM, "team", eks([]), releases(), crds(error="Forbidden")).run())
    result = results[("crd", ARN)]
    assert not result.passed and "Forbidden" in result.detail and "update-kubeconfig --name team" in result.fix


def test_kubectl_crds_reads_the_asked_crds_and_refuses_what_is_no_list(monkeypatch):
    from inferstack import preflight_cluster

    calls = []
    items = [
        {"metadata": {"name": POOL_CRD, "labels": {"app.kubernetes.io/part-of": "inferstack"}}},
        {"metadata": {"name": "other.example.com", "annotations": {"a": "b"}}},
    ]

    class Done:
        returncode, stderr, stdout = 0, "", json.dumps({"items": items})

    def run(command, **kwargs):
        calls.append(command)
        return Done()

    monkeypatch.setattr(preflight_cluster.subprocess, "run", run)
    found = preflight_cluster.kubectl_crds("ctx", (POOL_CRD,))
    assert found == {POOL_CRD: {"labels": {"app.kubernetes.io/part-of": "inferstack"}, "annotations": {}}}
    assert calls == [["kubectl", "--context", "ctx", "get", "customresourcedefinitions", "-o", "json"]]
    Done.stdout = "error: not json"
    with pytest.raises(RuntimeError, match="kubectl printed no list"):
        preflight_cluster.kubectl_crds("ctx", (POOL_CRD,))
