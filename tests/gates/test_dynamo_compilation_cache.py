"""The Dynamo gate's ``compilationCache`` projection against the operator's rules at 1.4.0 (graph.go:1849-1935,
backend_vllm.go:117-139): the default vLLM path, the volume it adds, what it refuses."""

from __future__ import annotations

from typing import Any

import pytest

from inferstack.gates.dynamo import VLLM_CACHE_MOUNT, dynamo_pods


def graph(cache: dict[str, Any], mounts: list[dict[str, Any]] | None = None, volumes: list | None = None) -> dict:
    main = {"name": "main", "command": ["python3", "-m", "dynamo.vllm"], "volumeMounts": mounts or []}
    return {
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "llm"},
        "spec": {
            "components": [
                {
                    "name": "worker",
                    "type": "worker",
                    "compilationCache": cache,
                    "podTemplate": {"spec": {"containers": [main], "volumes": volumes or []}},
                }
            ]
        },
    }


def test_a_vllm_worker_without_a_path_gets_the_operators_default():
    (pod,) = dynamo_pods([graph({"pvcName": "c"})])
    main = pod["spec"]["containers"][0]
    assert {"name": "c", "mountPath": VLLM_CACHE_MOUNT} in main["volumeMounts"]
    assert main["env"][-1] == {"name": "VLLM_CACHE_ROOT", "value": VLLM_CACHE_MOUNT}
    assert {"name": "c", "persistentVolumeClaim": {"claimName": "c"}} in pod["spec"]["volumes"]


@pytest.mark.parametrize(
    ("mounts", "volumes"),
    [
        ([{"name": "other", "mountPath": "/cache"}], None),
        ([{"name": "c", "mountPath": "/cache", "readOnly": True}], None),
        (None, [{"name": "c", "emptyDir": {}}]),
    ],
    ids=["another-mount-at-the-path", "read-only", "same-name-not-the-claim"],
)
def test_what_the_operator_refuses_is_refused(mounts, volumes):
    with pytest.raises(ValueError, match="compilationCache"):
        list(dynamo_pods([graph({"pvcName": "c", "mountPath": "/cache"}, mounts, volumes)]))
