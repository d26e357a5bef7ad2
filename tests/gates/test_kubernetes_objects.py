"""GATE: every Kubernetes object the platform applies is valid — core kinds against the Kubernetes OpenAPI
schemas of the cluster's version (kubernetes-validate, strict), custom resources against the vendored upstream
CRD schemas with unknown fields as errors."""

from __future__ import annotations

import kubernetes_validate

from inferstack.catalog.crds import is_custom_resource, validate_custom_resource
from inferstack.constructs.observability import prometheus_rule_problems


def _problems(obj: dict, kubernetes_version: str) -> list[str]:
    if (obj["apiVersion"], obj["kind"]) == ("monitoring.coreos.com/v1", "PrometheusRule"):
        return prometheus_rule_problems(obj)  # its CRD is not vendored in ../shared/crds: the construct's own check
    if is_custom_resource(obj["apiVersion"], obj["kind"]):
        return validate_custom_resource(obj)
    try:
        kubernetes_validate.validate(obj, f"{kubernetes_version}.0", strict=True)
    except kubernetes_validate.ValidationError as exc:
        return [f"{exc.path}: {exc.message}" if hasattr(exc, "path") else str(exc)]
    except kubernetes_validate.SchemaNotFoundError:
        return [f"{obj['apiVersion']} {obj['kind']}: neither a core kind nor a vendored CRD"]
    return []


def test_every_emitted_object_is_schema_valid(any_app):
    version = any_app.config.cluster.kubernetes_version
    objects = any_app.kubernetes_objects()
    assert objects, "the platform applies at least its base chart"
    problems = {f"{o['kind']}/{o['metadata']['name']}": _problems(o, version) for o in objects}
    assert {k: v for k, v in problems.items() if v} == {}


def test_the_gate_rejects_an_invalid_core_object():
    bad = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "x"}, "valu": 1}
    assert _problems(bad, "1.36")


def test_helm_releases_outside_kube_system_create_their_namespace(any_app):
    """A Helm release into a namespace nothing creates fails at deploy time."""
    created = {o["metadata"]["name"] for o in any_app.kubernetes_objects() if o["kind"] == "Namespace"}
    for template in any_app.templates.values():
        for resource in template["Resources"].values():
            if resource["Type"] != "Custom::AWSCDK-EKS-HelmChart":
                continue
            props = resource["Properties"]
            namespace = props.get("Namespace", "default")
            if namespace not in ("kube-system", "default") and namespace not in created:
                assert props.get("CreateNamespace") is True, f"{props['Chart']} into {namespace}"
