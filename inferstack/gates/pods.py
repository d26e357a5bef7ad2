"""The bare ``Pod`` manifests the operator projections return."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def projected_pod(
    namespace: str, name: str, labels: Mapping[str, str], spec: Mapping[str, Any], owner: str
) -> dict[str, Any]:
    """A bare ``Pod`` manifest an operator makes, annotated with the object it was made from (``Kind/ns/name``)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(labels),
            "annotations": {"inferstack.io/projected-from": owner},
        },
        "spec": dict(spec),
    }
