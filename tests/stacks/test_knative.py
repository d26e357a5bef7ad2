"""KServe's Knative mode on a cluster without Knative: inferstack installs Knative Serving with the Knative Operator
(chart 1.21.1, the version KServe v0.20.0 pins) and a KnativeServing with Kourier, ordered before KServe's
controller; a cluster that runs Knative declares it (``cluster.knative_serving``) and gets none."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferstack.catalog.kubernetes import POOL_LABEL, SYSTEM_POOL
from inferstack.catalog.versions import HELM_CHARTS, IMAGES
from inferstack.charts.knative import (
    KNATIVE_PDBS,
    KOURIER_INGRESS_CLASS,
    PODSPEC_FEATURES,
    SERVING_DEPLOYMENTS,
    knative_serving_spec,
)
from inferstack.cli import json_property, kubernetes_objects
from inferstack.config import load_config
from inferstack.config.edit import with_changes
from inferstack.config.model import KnativeIngress, KnativeServingConfig
from inferstack.rules import evaluate
from tests.synth import ROOT

HELM = "Custom::AWSCDK-EKS-HelmChart"
MANIFEST = "Custom::AWSCDK-EKS-KubernetesResource"
EXAMPLE = ROOT / "examples" / "kserve-scale-to-zero.yaml"


def _config(**changes):
    config = load_config(EXAMPLE)
    return with_changes(config, changes) if changes else config


@pytest.fixture(scope="module")
def workloads(synth_config) -> dict:
    return synth_config(_config()).template("workloads")["Resources"]


def _charts(resources: dict) -> dict[str, tuple[str, dict]]:
    return {r["Properties"]["Chart"]: (k, r) for k, r in resources.items() if r["Type"] == HELM}


def _depends(resources: dict, logical_id: str) -> set[str]:
    """Every resource ``logical_id`` waits for, directly or through others."""
    seen: set[str] = set()
    todo = list(resources[logical_id].get("DependsOn", []))
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += resources.get(name, {}).get("DependsOn", [])
    return seen


def test_the_operator_chart_is_the_pinned_one_with_the_catalogs_images(workloads):
    _, chart = _charts(workloads)["knative-operator"]
    props = chart["Properties"]
    pin = HELM_CHARTS["knative-operator"]
    assert (props["Repository"], props["Version"], props["Namespace"]) == (pin.repository, "1.21.1", "knative-operator")
    values = json_property(props["Values"])["knative_operator"]
    for key, image in (("knative_operator", "knative-operator"), ("operator_webhook", "knative-operator-webhook")):
        assert f"{values[key]['image']}:{values[key]['tag']}" == IMAGES[image]
        terms = values[key]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["system"]
        # the chart sets no seccomp profile; Pod Security restricted needs one
        assert values[key]["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}


def test_knative_serving_comes_with_kourier_internal_and_the_podspec_features(synth_config):
    objects = [o for t in synth_config(_config()).templates.values() for o in kubernetes_objects(t)]
    (serving,) = [o for o in objects if o["kind"] == "KnativeServing"]
    assert (serving["metadata"]["name"], serving["metadata"]["namespace"]) == ("knative-serving", "knative-serving")
    spec = serving["spec"]
    assert spec["ingress"]["kourier"] == {"enabled": True, "service-type": "ClusterIP"}  # no internet-facing NLB
    assert spec["config"]["network"]["ingress-class"] == KOURIER_INGRESS_CLASS
    assert spec["config"]["features"] == PODSPEC_FEATURES and spec["version"] == "1.21"
    # every Deployment of Serving 1.21 and Kourier on the system nodes (the operator places none)
    assert [w["name"] for w in spec["workloads"]] == list(SERVING_DEPLOYMENTS)
    assert all(w["nodeSelector"] == {POOL_LABEL: SYSTEM_POOL} for w in spec["workloads"])
    # 80 % of one or two replicas evicts none: two replicas, and each PDB lets one go
    assert spec["high-availability"] == {"replicas": 2}
    assert {p["name"]: p["minAvailable"] for p in spec["podDisruptionBudgets"]} == dict.fromkeys(KNATIVE_PDBS, 1)
    assert any(o["kind"] == "Namespace" and o["metadata"]["name"] == "knative-serving" for o in objects)


def test_kserve_waits_for_knative_serving_to_be_installed(workloads):
    charts = _charts(workloads)
    operator, _ = charts["knative-operator"]
    controller, _ = charts["kserve-resources"]
    (serving,) = [k for k, r in workloads.items() if r["Type"] == MANIFEST and "KnativeServing" in str(r)]
    (ready,) = [k for k in workloads if k.startswith("KnativeServingReady")]
    assert workloads[ready]["Properties"]["JsonPath"] == ".status.version"  # set after Serving's Deployments run
    assert {ready, serving, operator} <= _depends(workloads, controller)
    assert serving in _depends(workloads, ready) and operator in _depends(workloads, serving)


def test_a_cluster_that_runs_knative_gets_none(synth_config):
    declared = _config(**{"cluster.knative_serving": {"ingress": "kourier", "podspec_features_enabled": True}})
    resources = synth_config(declared).template("workloads")["Resources"]
    assert "knative-operator" not in _charts(resources)
    assert not [r for r in resources.values() if r["Type"] == MANIFEST and "KnativeServing" in str(r)]


def test_knative_off_and_undeclared_is_a_named_error():
    config = _config(**{"observability.install_knative_serving": False})
    (finding,) = [f for f in evaluate(config).errors if f.rule == "KSERVE-KNATIVE"]
    assert "observability.install_knative_serving: true" in finding.fix


def test_standard_mode_installs_no_knative():
    from inferstack.config import parse_config
    from inferstack.plan.kserve import installs_knative

    assert installs_knative(_config())
    model = {"id": "Qwen/Qwen3-8B", "source": {"type": "s3_mount"}}
    standard = {"name": "q", "kind": "kserve", "pool": "l40s", "model": model}
    pools = {"karpenter_pools": [{"name": "l40s", "instance_types": ["g6e.2xlarge"]}]}
    assert not installs_knative(parse_config({"compute": pools, "workloads": [standard]}))


def test_only_kourier_is_installed():
    with pytest.raises(ValueError, match="with Kourier, not 'istio'"):
        knative_serving_spec(KnativeServingConfig(ingress=KnativeIngress.ISTIO), {POOL_LABEL: SYSTEM_POOL})


def test_the_example_has_nothing_installed_by_hand():
    assert "knative_serving" not in Path(EXAMPLE).read_text().split("name: kserve", 1)[1]


@pytest.mark.parametrize(
    ("knative", "gateway"),
    [
        (None, "knative-serving"),  # the operator puts Kourier in the KnativeServing's namespace
        ({"podspec_features_enabled": True}, "kourier-system"),  # net-kourier's own release
        ({"podspec_features_enabled": True, "gateway_namespace": "edge"}, "edge"),
    ],
    ids=["installed", "declared", "declared-elsewhere"],
)
def test_the_predictor_admits_the_gateway_where_it_runs(knative, gateway):
    from inferstack.plan.network import network_flows

    config = _config(**{"cluster.knative_serving": knative}) if knative else _config()
    flows = network_flows(config)
    (predictor,) = [w for ns in flows for w in ns.workloads if w.name == "qwen"]
    assert any(p.namespace == gateway and 8012 in p.ports for p in predictor.ingress), predictor.ingress
    (models,) = [ns for ns in flows if ns.namespace == "kserve-models"]
    assert any(p.namespace == gateway for p in models.client_egress), models.client_egress
