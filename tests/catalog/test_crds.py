"""Vendored CRD schemas: every custom resource is validated, unknown fields are errors."""

from __future__ import annotations

import copy

import pytest

from inferstack.catalog.crds import crd_index, is_custom_resource, validate_custom_resource

NODEPOOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "gpu"},
    "spec": {
        "template": {
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6e"]}],
                "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
            }
        },
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30m"},
        "limits": {"nvidia.com/gpu": 64},
    },
}


def test_index_covers_the_projects_we_deploy():
    groups = {entry.group for entry in crd_index().values()}
    assert {
        "karpenter.sh",
        "karpenter.k8s.aws",
        "ray.io",
        "serving.kserve.io",
        "apps.nvidia.com",
        "nvidia.com",
        "leaderworkerset.x-k8s.io",
        "monitoring.coreos.com",
        "keda.sh",
    } <= groups
    assert all(len(entry.source_sha256) == 64 for entry in crd_index().values())


def test_valid_nodepool_passes():
    assert is_custom_resource("karpenter.sh/v1", "NodePool")
    assert validate_custom_resource(NODEPOOL) == []


def test_unknown_field_is_an_error_naming_the_valid_ones():
    bad = copy.deepcopy(NODEPOOL)
    bad["spec"]["template"]["spec"]["taint"] = []
    (problem,) = validate_custom_resource(bad)
    assert problem.startswith("spec.template.spec.taint: unknown field — valid fields here:")
    assert "taints" in problem


def test_bad_enum_lists_valid_values():
    bad = copy.deepcopy(NODEPOOL)
    bad["spec"]["disruption"]["consolidationPolicy"] = "Sometimes"
    (problem,) = validate_custom_resource(bad)
    assert problem.startswith("spec.disruption.consolidationPolicy: 'Sometimes' — must be one of")
    assert "'WhenEmptyOrUnderutilized'" in problem


@pytest.mark.parametrize("limit", [64, "64"])
def test_int_or_string_accepts_both(limit):
    ok = copy.deepcopy(NODEPOOL)
    ok["spec"]["limits"]["nvidia.com/gpu"] = limit
    assert validate_custom_resource(ok) == []


def test_preserve_unknown_fields_stays_open():
    # RayService.spec.serveConfigV2 is a string, but rayClusterConfig...rayStartParams is a free map.
    service = {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": "llm"},
        "spec": {
            "rayClusterConfig": {
                "headGroupSpec": {
                    "rayStartParams": {"dashboard-host": "0.0.0.0", "anything": "goes"},
                    "template": {"spec": {"containers": [{"name": "head", "image": "rayproject/ray:2.49.0"}]}},
                }
            }
        },
    }
    assert validate_custom_resource(service) == []
    service["spec"]["rayClusterConfig"]["headGroupSpec"]["template"]["spec"]["containers"][0]["imagee"] = "x"
    assert any("imagee: unknown field" in p for p in validate_custom_resource(service))


def test_unknown_kind_is_reported():
    (problem,) = validate_custom_resource({"apiVersion": "example.com/v1", "kind": "Widget"})
    assert "no vendored CRD schema" in problem
