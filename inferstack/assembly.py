"""Reading synthesized templates: the Kubernetes objects and Helm releases a stack applies through the kubectl
provider. Shared by the CLI (``summary``, ``diff``) and the gates; nothing here imports CDK."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

MANIFEST_TYPE = "Custom::AWSCDK-EKS-KubernetesResource"
HELM_TYPE = "Custom::AWSCDK-EKS-HelmChart"
#: Stands in for a value CloudFormation resolves at deploy time (a CDK token in the manifest).
DEPLOY_TIME_VALUE = "${Token[deploy-time]}"


def json_property(value: str | dict[str, Any]) -> Any:
    """Parse a template property holding JSON: a literal string, or an ``Fn::Join`` whose deploy-time parts
    (always inside JSON strings) are replaced by :data:`DEPLOY_TIME_VALUE`."""
    if isinstance(value, str):
        return json.loads(value)
    parts = value.get("Fn::Join", ["", []])[1]
    return json.loads("".join(_part(p) for p in parts))


def _part(part: str | dict[str, Any]) -> str:
    """A joined part as text: a literal as is; an ``Fn::Sub`` of pseudo parameters (a container asset's URI:
    ``${AWS::AccountId}.dkr.ecr.${AWS::Region}…:<content hash>``) as its template, whose literal parts (the tag)
    a reader may judge; any other intrinsic as :data:`DEPLOY_TIME_VALUE`."""
    if isinstance(part, str):
        return part
    sub = part.get("Fn::Sub")
    if isinstance(sub, str) and '"' not in sub and "\\" not in sub:
        return sub
    return DEPLOY_TIME_VALUE


def manifests(template: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(logical ID, object) of every Kubernetes object a template applies through the kubectl provider."""
    for logical_id, resource in template.get("Resources", {}).items():
        if resource.get("Type") == MANIFEST_TYPE:
            for obj in json_property(resource["Properties"]["Manifest"]):
                yield logical_id, obj


def kubernetes_objects(template: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every Kubernetes object a template applies through the kubectl provider."""
    return [obj for _, obj in manifests(template)]


def cdk_context(cdk_json: Path | None = None) -> dict[str, Any]:
    """The context ``cdk synth`` passes: ``cdk_json``'s (default ``./cdk.json`` when it exists; none otherwise),
    without asset staging (the kubectl and awscli layers are 57 MB of zips per synth)."""
    path = cdk_json if cdk_json is not None else Path("cdk.json")
    context: dict[str, Any] = {}
    if path.is_file():
        context.update(json.loads(path.read_text()).get("context", {}))
    context["aws:cdk:disable-asset-staging"] = True
    return context
