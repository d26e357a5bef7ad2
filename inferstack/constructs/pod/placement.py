"""PodPlacement: where a construct's pods run and with what priority — node selector, tolerations, affinity,
scheduler and PriorityClass — as one value every construct takes, validated once and rendered once.

Constructs render it three ways: :meth:`PodPlacement.pod_spec_kwargs` for an L1 ``k8s.PodSpec`` (plus
:meth:`PodPlacement.patch_affinity`, since ``affinity`` is untyped here and the L1 API takes only its typed form),
:meth:`PodPlacement.add_affinity` for a pod spec already rendered to JSON, and :meth:`PodPlacement.pod_spec_json`
for a custom resource whose pod fields are plain JSON (KServe's predictor, the NIM operator's resources). A construct
whose target cannot carry a field refuses it with :meth:`PodPlacement.refuse`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import cdk8s

from inferstack.constructs import validation as check
from inferstack.constructs.scheduling import TolerationSpec, toleration_pairs, tolerations

#: Taint effects a toleration can name (core/v1 TaintEffect).
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
#: Keys of a pod's ``affinity`` (core/v1 Affinity).
AFFINITY_KINDS = ("nodeAffinity", "podAffinity", "podAntiAffinity")
#: The fields of a placement, as constructs name them in errors.
FIELDS = ("node_selector", "tolerations", "affinity", "scheduler_name", "priority_class")


@dataclass(frozen=True, kw_only=True)
class PodPlacement:
    """Where pods run: nodeSelector, tolerations, affinity, schedulerName and priorityClassName. Every value is
    checked when the placement is made (:class:`~inferstack.constructs.validation.PropError` names the field)."""

    node_selector: Mapping[str, str] = field(default_factory=dict)
    """The pods' nodeSelector, label key → value (e.g. the Karpenter NodePool's labels). Default none: any node."""
    tolerations: Sequence[TolerationSpec] = ()
    """Taints the pods tolerate (``operator: Exists``): a key (its ``NoSchedule`` taint) or a ``(key, effect)`` pair,
    the effect ``NoSchedule``, ``PreferNoSchedule`` or ``NoExecute``. Rendered sorted, without repeats. Default
    none."""
    affinity: Mapping[str, Any] | None = None
    """The pods' ``affinity`` as Kubernetes JSON (``nodeAffinity``, ``podAffinity``, ``podAntiAffinity``), e.g.
    prefill and decode pods in one zone. Default none."""
    scheduler_name: str | None = None
    """The pods' schedulerName (e.g. the Neuron scheduler extension, a gang scheduler), a DNS subdomain. Default
    none: the default scheduler."""
    priority_class: str | None = None
    """The pods' priorityClassName (the PriorityClass must exist on the cluster), a DNS subdomain. Default none: the
    cluster's default priority."""

    def __post_init__(self) -> None:
        validate("PodPlacement", self)

    def pod_spec_kwargs(self, *, empty: bool = False) -> dict[str, Any]:
        """Keyword arguments of an L1 ``k8s.PodSpec``: ``node_selector``, ``tolerations``, ``scheduler_name`` and
        ``priority_class_name`` (``affinity`` is not among them: add it with :meth:`patch_affinity` or
        :meth:`add_affinity`). ``empty``: an empty node selector and tolerations are rendered as ``{}`` and ``[]``.
        Default False: left out."""
        return {
            "node_selector": dict(self.node_selector) if self.node_selector or empty else None,
            "tolerations": tolerations(self.tolerations) or ([] if empty else None),
            "scheduler_name": self.scheduler_name,
            "priority_class_name": self.priority_class,
        }

    def pod_spec_json(self) -> dict[str, Any]:
        """The pod-spec fields as JSON, in this order: ``nodeSelector`` and ``tolerations`` (always, ``{}``/``[]``
        when empty), then ``affinity``, ``schedulerName`` and ``priorityClassName`` when set."""
        spec: dict[str, Any] = {
            "nodeSelector": dict(self.node_selector),
            "tolerations": [
                {"key": key, "operator": "Exists", "effect": effect}
                for key, effect in toleration_pairs(self.tolerations)
            ],
        }
        if self.affinity:
            spec["affinity"] = dict(self.affinity)
        if self.scheduler_name:
            spec["schedulerName"] = self.scheduler_name
        if self.priority_class:
            spec["priorityClassName"] = self.priority_class
        return spec

    def add_affinity(self, spec: dict[str, Any]) -> dict[str, Any]:
        """``spec`` (a pod spec rendered to JSON) with the ``affinity``, when set, as its last key. Returns
        ``spec``."""
        if self.affinity:
            spec["affinity"] = dict(self.affinity)
        return spec

    def patch_affinity(self, api_object: cdk8s.ApiObject, spec_path: str) -> None:
        """Add the ``affinity``, when set, to the pod spec at JSON pointer ``spec_path`` of ``api_object`` (e.g.
        ``/spec/template/spec`` of a Deployment)."""
        if self.affinity:
            api_object.add_json_patch(cdk8s.JsonPatch.add(f"{spec_path}/affinity", dict(self.affinity)))

    def refuse(self, owner: str, prop: str, fields: Iterable[str], why: str) -> None:
        """Raise :class:`~inferstack.constructs.validation.PropError` when any of ``fields`` (names of this
        placement's fields) is set: the construct named ``owner`` cannot render it, because ``why``. ``prop``: how
        the construct names this placement (e.g. ``placement``)."""
        for name in fields:
            value = getattr(self, name)
            if value:
                raise check.PropError(f"{owner}: {prop}.{name} {value!r} — {why}")


def validate(owner: str, placement: PodPlacement) -> None:
    """Every value of ``placement`` the API server would reject, refused with the field named."""
    if not isinstance(placement.node_selector, Mapping):
        raise check.PropError(f"{owner}: node_selector {placement.node_selector!r} — a mapping of label key → value")
    for key, value in placement.node_selector.items():
        check.qualified_name(owner, "node_selector key", key)
        check.label_value(owner, f"node_selector[{key!r}]", value)
    if isinstance(placement.tolerations, str):
        raise check.PropError(f"{owner}: tolerations {placement.tolerations!r} — a sequence of keys or (key, effect)")
    for item in placement.tolerations:
        if isinstance(item, str):
            check.qualified_name(owner, "tolerations[]", item)
            continue
        if isinstance(item, Mapping) or len(item) != 2:
            raise check.PropError(f"{owner}: tolerations[] {item!r} — a taint key or a (key, effect) pair")
        check.qualified_name(owner, "tolerations[] key", item[0])
        check.one_of(owner, f"tolerations[{item[0]!r}] effect", item[1], TAINT_EFFECTS)
    if placement.affinity is not None:
        if not isinstance(placement.affinity, Mapping):
            raise check.PropError(f"{owner}: affinity {placement.affinity!r} — a mapping of Kubernetes Affinity JSON")
        unknown = sorted(set(placement.affinity) - set(AFFINITY_KINDS))
        if unknown:
            raise check.PropError(f"{owner}: affinity keys {unknown} — valid: {', '.join(AFFINITY_KINDS)}")
    for name in ("scheduler_name", "priority_class"):
        value = getattr(placement, name)
        if value is not None:
            check.dns_subdomain(owner, name, value)
