"""GATE: what we hand to someone else's software matches that software at the version we pin — the exact upstream
files in tests/upstream/ (copied from ../shared/upstream by ``make upstream``; provenance in its README).

* the Karpenter controller policies, node role and interruption rules equal upstream's reference CloudFormation
  for the pinned minor version, statement by statement (intended differences: ``UPSTREAM_DIFFERENCES``);
* every Helm value key we set exists in the pinned chart's values.yaml (vendored subcharts merged in) and the
  values validate against the chart's values.schema.json where it ships one.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from inferstack.catalog.versions import HELM_CHARTS
from inferstack.cli import json_property
from inferstack.stacks.karpenter import INTERRUPTION_EVENTS, NODE_POLICIES, TAG_ON_CREATE_ACTIONS, UPSTREAM_DIFFERENCES
from tests.synth import ROOT

UPSTREAM = ROOT / "tests" / "upstream"
SHARED = ROOT.parent / "shared" / "upstream"
HELM_TYPE = "Custom::AWSCDK-EKS-HelmChart"

#: Keys of remote subcharts that are not vendored (their charts are fetched at package time), each with the
#: reason it is accepted. Nothing else escapes the key check but :data:`TEMPLATE_ONLY_KEYS`.
UNVENDORED_SUBCHART_KEYS: dict[tuple[str, str], str] = {
    ("kube-prometheus-stack", "kube-state-metrics.nodeSelector"): (
        "kube-state-metrics 8.4.0 is a remote dependency of kube-prometheus-stack 88.5.3 (not vendored); "
        "nodeSelector is a top-level key of its values.yaml (prometheus-community/helm-charts)"
    ),
    ("kube-prometheus-stack", "kube-state-metrics.metricLabelsAllowlist"): (
        "kube-state-metrics 8.4.0 is not vendored in tests/upstream; metricLabelsAllowlist is a top-level key of its "
        "values.yaml (charts-src/kube-prometheus-stack/88.5.3/charts/kube-state-metrics/values.yaml:416), rendered "
        "as --metric-labels-allowlist (templates/deployment.yaml:100-101); tests/gates/test_what_runs.py checks it"
    ),
    ("kube-prometheus-stack", "grafana.nodeSelector"): (
        "grafana 12.11.1 (grafana-community/helm-charts 864f7794) is a remote dependency of kube-prometheus-stack "
        "88.5.3: only its full source is vendored (../shared/upstream/charts-src/kube-prometheus-stack/88.5.3/charts/"
        "grafana/values.yaml:438, top-level nodeSelector); tests/gates/test_what_runs.py renders it and sees it land"
    ),
}

#: Keys a chart's templates read that its values.yaml does not list, each with where the template reads it.
TEMPLATE_ONLY_KEYS: dict[tuple[str, str], str] = {
    ("knative-operator", "knative_operator.knative_operator.securityContext"): (
        "the operator Deployment's pod securityContext: knative/operator knative-v1.21.1 "
        "config/charts/knative-operator/templates/operator.yaml:6367-6369 ({{- if and ...securityContext }} toYaml)"
    ),
    ("knative-operator", "knative_operator.operator_webhook.securityContext"): (
        "the webhook Deployment's pod securityContext: the same template, lines 82-84"
    ),
}

#: Placeholders a chart's packaging fills in its values.yaml (they are not YAML as committed upstream).
PACKAGING_SUBSTITUTIONS: dict[str, dict[str, str]] = {
    # knative/operator knative-v1.21.1 hack/generate-helm.sh:39-40 seds "{{ tag }}" to the release tag
    "knative-operator": {"{{ tag }}": "v1.21.1"},
}


def _load_values(chart: str, path: Path) -> dict[str, Any]:
    text = path.read_text()
    for placeholder, value in PACKAGING_SUBSTITUTIONS.get(chart, {}).items():
        text = text.replace(placeholder, value)
    return yaml.safe_load(text) or {}


# -- vendored copies ------------------------------------------------------------------------------------------
@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/upstream not present (a clean clone): copies not checked")
def test_vendored_references_are_current():
    result = subprocess.run(
        [sys.executable, "scripts/vendor_upstream.py", "--check", str(SHARED)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_every_pinned_chart_we_install_has_its_reference(any_app):
    for chart, version in _installed_charts(any_app):
        assert _values_file(chart, version).is_file(), f"{chart} {version}: no vendored values.yaml (make upstream)"


# -- Karpenter ------------------------------------------------------------------------------------------------
class _CfnLoader(yaml.SafeLoader):
    """YAML loader for CloudFormation short forms (``!Sub``, ``!Ref``, ``!GetAtt``)."""


for _tag in ("!Sub", "!Ref", "!GetAtt"):
    _CfnLoader.add_constructor(_tag, lambda loader, node: loader.construct_scalar(node))


def _upstream_template() -> dict[str, Any]:
    minor = ".".join(HELM_CHARTS["karpenter"].version.split(".")[:2])
    return yaml.load((UPSTREAM / "karpenter" / f"cloudformation-v{minor}.yaml").read_text(), Loader=_CfnLoader)


def _upstream_statements(cluster_name: str) -> dict[str, dict[str, Any]]:
    statements: dict[str, dict[str, Any]] = {}
    for resource in _upstream_template()["Resources"].values():
        if resource["Type"] == "AWS::IAM::ManagedPolicy":
            document = json.loads(resource["Properties"]["PolicyDocument"].replace("${ClusterName}", cluster_name))
            for statement in document["Statement"]:
                statements[statement["Sid"]] = _normalized(statement)
    return statements


def _resolve(value: Any, resources: dict[str, Any]) -> Any:
    """CloudFormation intrinsics rendered the way upstream's ``!Sub`` strings spell them."""
    if isinstance(value, list):
        return [_resolve(v, resources) for v in value]
    if not isinstance(value, dict):
        return value
    if "Ref" in value and value["Ref"].startswith("AWS::"):
        return "${" + value["Ref"] + "}"
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(str(_resolve(p, resources)) for p in parts)
    if "Fn::GetAtt" in value:
        logical, attribute = value["Fn::GetAtt"]
        kind = resources[logical]["Type"]
        name = {"AWS::SQS::Queue": "KarpenterInterruptionQueue", "AWS::IAM::Role": "KarpenterNodeRole"}[kind]
        return "${" + f"{name}.{attribute}" + "}"
    return {k: _resolve(v, resources) for k, v in value.items()}


def _as_list(value: Any) -> list[Any]:
    return sorted(value) if isinstance(value, list) else [value]


def _normalized(statement: dict[str, Any]) -> dict[str, Any]:
    conditions = {
        operator: {key: _as_list(v) for key, v in sorted(entries.items())}
        for operator, entries in sorted(statement.get("Condition", {}).items())
    }
    return {
        "Effect": statement["Effect"],
        "Action": _as_list(statement["Action"]),
        "Resource": _as_list(statement["Resource"]),
        "Condition": conditions,
    }


def _our_statements(app) -> dict[str, dict[str, Any]]:
    resources = app.template("compute")["Resources"]
    statements: dict[str, dict[str, Any]] = {}
    for resource in resources.values():
        description = resource["Properties"].get("Description", "") if resource["Type"].startswith("AWS::IAM") else ""
        if resource["Type"] == "AWS::IAM::ManagedPolicy" and description.startswith("Karpenter controller"):
            for statement in _resolve(resource["Properties"]["PolicyDocument"]["Statement"], resources):
                statements[statement["Sid"]] = _normalized(statement)
    return statements


def test_karpenter_controller_policy_equals_upstream_statement_by_statement(default_app):
    ours = _our_statements(default_app)
    upstream = _upstream_statements(default_app.config.cluster_name)
    assert sorted(ours) == sorted(upstream), "the same statements (by Sid)"
    for sid, statement in upstream.items():
        assert ours[sid] == statement, sid


def test_tag_on_create_names_bare_api_actions(default_app):
    """``ec2:CreateAction`` values are API names; ``ec2:RunInstances`` there matches nothing (every launch denied)."""
    condition = _our_statements(default_app)["AllowScopedResourceCreationTagging"]["Condition"]["StringEquals"]
    assert condition["ec2:CreateAction"] == sorted(TAG_ON_CREATE_ACTIONS)
    assert not any(action.startswith("ec2:") for action in condition["ec2:CreateAction"])


def test_karpenter_node_role_has_upstreams_managed_policies(default_app):
    upstream = next(
        r for r in _upstream_template()["Resources"].values() if r["Type"] == "AWS::IAM::Role"
    )  # KarpenterNodeRole
    names = sorted(arn.rsplit("/", 1)[1] for arn in upstream["Properties"]["ManagedPolicyArns"])
    assert sorted(NODE_POLICIES) == names


def test_interruption_rules_equal_upstream(default_app):
    upstream = {
        (r["Properties"]["EventPattern"]["source"][0], r["Properties"]["EventPattern"]["detail-type"][0])
        for r in _upstream_template()["Resources"].values()
        if r["Type"] == "AWS::Events::Rule"
    }
    rules = default_app.resources("compute", "AWS::Events::Rule").values()
    ours = {
        (r["Properties"]["EventPattern"]["source"][0], r["Properties"]["EventPattern"]["detail-type"][0]) for r in rules
    }
    assert ours == upstream == set(INTERRUPTION_EVENTS.values())


def test_every_difference_from_upstream_is_explained():
    assert UPSTREAM_DIFFERENCES and all(len(reason) > 40 for reason in UPSTREAM_DIFFERENCES.values())


# -- Helm values ----------------------------------------------------------------------------------------------
def _helm_releases(app) -> list[tuple[str, str, dict[str, Any]]]:
    releases = []
    for template in app.templates.values():
        for resource in template["Resources"].values():
            if resource["Type"] == HELM_TYPE:
                props = resource["Properties"]
                values = json_property(props["Values"]) if "Values" in props else {}
                releases.append((props["Chart"], props["Version"], values))
    return releases


def _installed_charts(app) -> set[tuple[str, str]]:
    return {(chart, version) for chart, version, _ in _helm_releases(app)}


def _catalog_entry(chart: str, version: str):
    entry = next(c for c in HELM_CHARTS.values() if c.chart == chart)
    assert entry.version == version, f"{chart}: installed {version}, catalog pins {entry.version}"
    return entry


def _values_file(chart: str, version: str) -> Path:
    return UPSTREAM / "charts" / chart / _catalog_entry(chart, version).values_reference / "values.yaml"


def _defaults(chart: str, version: str) -> dict[str, Any]:
    """The chart's values.yaml with each vendored subchart's own values.yaml merged under its name."""
    directory = _values_file(chart, version).parent
    values = _load_values(chart, _values_file(chart, version))
    for sub in sorted((directory / "charts").glob("*/values.yaml")):
        name = sub.parent.name
        values[name] = _merge(yaml.safe_load(sub.read_text()) or {}, values.get(name) or {})
    return values


def _merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in overrides.items():
        merged[key] = (
            _merge(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) else value
        )
    return merged


#: Maps whose keys are data (label keys, resource names), not chart settings, and Kubernetes objects a chart passes
#: through whole (``affinity``, with toYaml): any key is valid below them.
FREE_FORM = frozenset(
    {"nodeSelector", "labels", "annotations", "podLabels", "podAnnotations", "requests", "limits", "env", "affinity"}
)


def unknown_keys(ours: dict[str, Any], upstream: Any, path: str = "") -> list[str]:
    """Key paths of ``ours`` that the chart's values do not have. An empty map (``{}``) or null in upstream, and
    the :data:`FREE_FORM` maps, take any key; lists are not key-checked."""
    problems = []
    for key, value in ours.items():
        where = f"{path}.{key}" if path else key
        if not isinstance(upstream, dict) or key not in upstream:
            problems.append(where)
            continue
        default = upstream[key]
        if key in FREE_FORM:
            continue
        if isinstance(value, dict) and isinstance(default, dict) and default:
            problems += unknown_keys(value, default, where)
        elif isinstance(value, dict) and default is not None and not isinstance(default, dict):
            problems.append(f"{where} (a map where the chart has {type(default).__name__})")
    return problems


def test_every_helm_value_key_exists_in_the_pinned_chart(any_app):
    problems = {}
    for chart, version, values in _helm_releases(any_app):
        unknown = [
            key
            for key in unknown_keys(values, _defaults(chart, version))
            if (chart, key) not in UNVENDORED_SUBCHART_KEYS and (chart, key) not in TEMPLATE_ONLY_KEYS
        ]
        if unknown:
            problems[f"{chart} {version}"] = unknown
    assert problems == {}


def test_helm_values_validate_against_shipped_schemas(any_app):
    checked = 0
    for chart, version, values in _helm_releases(any_app):
        directory = _values_file(chart, version).parent
        for schema_file in sorted(directory.rglob("values.schema.json")):
            defaults = yaml.safe_load((schema_file.parent / "values.yaml").read_text()) or {}
            if schema_file.parent == directory:
                final = _merge(defaults, values)
            else:  # a subchart: its defaults, the parent's section for it, then ours
                name = schema_file.parent.name
                parent = yaml.safe_load(_values_file(chart, version).read_text()) or {}
                final = _merge(_merge(defaults, parent.get(name) or {}), values.get(name) or {})
            jsonschema.validate(final, json.loads(schema_file.read_text()))
            checked += 1
    if any(chart == "gpu-operator" for chart, _ in _installed_charts(any_app)):
        assert checked, "the GPU operator's node-feature-discovery subchart ships a schema"


def test_the_key_check_catches_a_misspelt_key():
    defaults = _defaults("gpu-operator", HELM_CHARTS["gpu-operator"].version)
    assert unknown_keys({"driver": {"enabld": False}}, defaults) == ["driver.enabld"]
    assert unknown_keys({"driver": {"enabled": False}, "operator": {"nodeSelector": {"a": "b"}}}, defaults) == []
    # v26.7.0 has no daemonsets.nodeSelector: a value there would be ignored without a word.
    assert unknown_keys({"daemonsets": {"nodeSelector": {"a": "b"}}}, defaults) == ["daemonsets.nodeSelector"]


#: Fields of prometheus-operator's StorageSpec (pkg/apis/monitoring/v1, the type behind Prometheus
#: spec.storage; kube-prometheus-stack passes prometheusSpec.storageSpec through unchanged). The chart's default
#: is ``{}``, so the key check above cannot see below it.
PROMETHEUS_STORAGE_SPEC_FIELDS = frozenset({"disableMountSubPath", "emptyDir", "ephemeral", "volumeClaimTemplate"})


def test_prometheus_storage_is_a_valid_claim(default_app):
    """Below the chart's free-form ``storageSpec: {}``: our keys are StorageSpec's, and the claim template is a
    PersistentVolumeClaim the API server accepts (a misspelt key here would leave Prometheus on an emptyDir)."""
    import kubernetes_validate

    values = next(v for chart, _, v in _helm_releases(default_app) if chart == "kube-prometheus-stack")
    storage = values["prometheus"]["prometheusSpec"]["storageSpec"]
    assert set(storage) <= PROMETHEUS_STORAGE_SPEC_FIELDS
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "prometheus"},
        "spec": storage["volumeClaimTemplate"]["spec"],
    }
    kubernetes_validate.validate(claim, f"{default_app.config.cluster.kubernetes_version}.0", strict=True)
