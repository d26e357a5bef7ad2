"""A workload's router (``routing``) in its chart: the :class:`~inferstack.constructs.endpoint_picker.EndpointPicker`
over the pods the workload's own Service selects (those that answer requests: a multi-node group's leaders only),
with the plan's engine metrics, scorers and resources (:mod:`inferstack.plan.routing`)."""

from __future__ import annotations

import cdk8s

from inferstack.catalog.versions import IMAGES
from inferstack.constructs.endpoint_picker import EndpointPicker, EndpointPickerProps
from inferstack.constructs.pod import PodPlacement
from inferstack.plan.routing import ResolvedRouting

#: Scorer weights by plugin, from the config's names.
_SCORER_PLUGINS = {
    "queue": "queue-scorer",
    "kv_cache_utilization": "kv-cache-utilization-scorer",
    "prefix_cache": "prefix-cache-scorer",
}


def _quantity(value: float, unit: str = "") -> str:
    return f"{value:g}{unit}" if float(value).is_integer() or unit else f"{round(value * 1000)}m"


def serving_selector(chart: cdk8s.Chart, router: ResolvedRouting) -> dict[str, str]:
    """The selector of the workload's API Service in ``chart`` (rendered by its kind): the pods that serve."""
    for node in chart.node.find_all():
        obj = node if isinstance(node, cdk8s.ApiObject) else None
        if obj is not None and obj.kind == "Service" and obj.name == router.workload:
            selector = obj.to_json().get("spec", {}).get("selector") or {}
            return dict(selector)
    raise ValueError(f"{router.workload}: its chart renders no Service {router.workload!r} to route to")


def add_router(chart: cdk8s.Chart, router: ResolvedRouting) -> EndpointPicker:
    """The router of ``router.workload``, after its kind rendered its Service."""
    scorers = router.scorers
    return EndpointPicker(
        chart,
        "router",
        EndpointPickerProps(
            name=router.name,
            namespace=router.namespace,
            pool_selector=serving_selector(chart, router),
            target_port=router.target_port,
            engine=router.engine.name,
            engine_config=router.engine.engine_config(lora=router.lora),
            picker_image=IMAGES["endpoint-picker"],
            envoy_image=IMAGES["envoy-router"],
            scorers={plugin: getattr(scorers, field) for field, plugin in _SCORER_PLUGINS.items()},
            replicas=router.replicas,
            cpu=_quantity(router.cpu),
            memory=f"{router.memory_gib:g}Gi",
            memory_limit=f"{router.memory_limit_gib:g}Gi",
            # no priority class: the serving class preempts, and on the system nodes it would evict the cluster's
            # controllers (Prometheus, the operators: priority 0); batch Jobs there never preempt (their class's
            # preemptionPolicy is Never)
            placement=PodPlacement(node_selector=router.node_selector, tolerations=sorted(router.tolerations)),
            monitoring=router.monitoring,
            workload=router.workload,
        ),
    )
