"""PodMonitor: what every engine's pods are scraped by (Prometheus operator ``monitoring.coreos.com/v1``),
validated against the vendored CRD — one place for the object every serving construct renders."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from constructs import Construct

from inferstack.constructs.custom_resource import CustomResource

#: How often Prometheus scrapes an engine.
SCRAPE_INTERVAL = "15s"
#: Pod labels copied onto every scraped series (``app.kubernetes.io/name`` → ``app_kubernetes_io_name``): the
#: dashboards and alerts select a workload's series by it.
POD_TARGET_LABELS = ("app.kubernetes.io/name",)
WORKLOAD_SERIES_LABEL = "app_kubernetes_io_name"


def pod_monitor(
    scope: Construct,
    construct_id: str,
    *,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    selector: Mapping[str, Any],
    port: str | int,
    path: str = "/metrics",
) -> CustomResource:
    """A PodMonitor scraping ``path`` on ``port`` (a port name, or a number for pods that declare none) of the pods
    ``selector`` (a LabelSelector) matches, with :data:`POD_TARGET_LABELS` on every series. Default path
    ``/metrics``."""
    endpoint = {"port": port} if isinstance(port, str) else {"portNumber": port}
    return CustomResource(
        scope,
        construct_id,
        manifest={
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PodMonitor",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
            "spec": {
                "selector": dict(selector),
                "podTargetLabels": list(POD_TARGET_LABELS),
                "podMetricsEndpoints": [{**endpoint, "path": path, "interval": SCRAPE_INTERVAL}],
            },
        },
    )
