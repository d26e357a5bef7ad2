"""CustomResource: a cdk8s ApiObject validated against the upstream CRD schema when it is constructed."""

from __future__ import annotations

import copy
from typing import Any

import cdk8s
from constructs import Construct

from inferstack.catalog.crds import validate_custom_resource


class CustomResourceError(ValueError):
    """A custom resource does not match its CRD; ``problems`` lists each with its field path."""

    def __init__(self, name: str, problems: list[str]) -> None:
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"{name} is not valid against its CRD schema:\n{lines}")


def deep_merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``overrides`` merged in: mappings merge key by key, anything else replaces."""
    merged = copy.deepcopy(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


class CustomResource(cdk8s.ApiObject):
    """An ``ApiObject`` whose full manifest (after ``overrides``) is checked against the vendored CRD schema.

    :param manifest: the whole object (``apiVersion``, ``kind``, ``metadata``, ``spec``…).
    :param overrides: escape hatch, deep-merged into ``manifest`` before validation. Default none.
    :raises CustomResourceError: with every problem (unknown fields included) and its path.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *, manifest: dict[str, Any], overrides: dict[str, Any] | None = None
    ) -> None:
        full = deep_merge(manifest, overrides or {})
        problems = validate_custom_resource(full)
        if problems:
            raise CustomResourceError(f"{full.get('kind')}/{full.get('metadata', {}).get('name')}", problems)
        metadata = full.get("metadata", {})
        super().__init__(
            scope,
            construct_id,
            api_version=full["apiVersion"],
            kind=full["kind"],
            metadata=cdk8s.ApiObjectMetadata(
                name=metadata.get("name"),
                namespace=metadata.get("namespace"),
                labels=metadata.get("labels"),
                annotations=metadata.get("annotations"),
            ),
        )
        self.manifest = full
        for key, value in full.items():
            if key not in ("apiVersion", "kind", "metadata"):
                self.add_json_patch(cdk8s.JsonPatch.add(f"/{key}", value))
