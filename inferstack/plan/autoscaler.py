"""The operator a workload's autoscaler needs: KEDA for ``autoscaling.kind: keda`` (its ScaledObject is KEDA's custom
resource, applied after KEDA's CRDs); an HPA needs none (``autoscaling/v2`` is built in)."""

from __future__ import annotations

from inferstack.config.engine import AutoscalerKind
from inferstack.config.workloads import WorkloadBase


def autoscaler_operators(workload: WorkloadBase) -> frozenset[str]:
    """``{"keda"}`` when ``workload`` scales with KEDA, else empty."""
    scaling = workload.autoscaling
    return frozenset({"keda"}) if scaling is not None and scaling.kind is AutoscalerKind.KEDA else frozenset()
