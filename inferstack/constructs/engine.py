"""EngineServer: a single-node serving engine other than vLLM (Triton, SGLang, TGI, Ollama…) on the shared serving
pod — what differs between engines is its :class:`EngineSpec` (command, ports, health paths, home, environment);
where the pods run and what they ask for comes from :class:`EnginePlacement`, filled from the plan. Both are the
serving pod's own props (:class:`~inferstack.constructs.pod.ServingPodProps` is their union), so nothing is copied
field by field."""

from __future__ import annotations

import dataclasses

from constructs import Construct

from inferstack.constructs.pod import Autoscaling, EnginePlacement, EngineSpec, ServingPodProps, ServingWorkload

__all__ = ["EnginePlacement", "EngineServer", "EngineSpec"]


class EngineServer(Construct):
    """Deployment + Service + PodDisruptionBudget (+ PodMonitor, + ScaledObject/HPA) of one engine
    (:class:`ServingWorkload`)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        spec: EngineSpec,
        placement: EnginePlacement,
        *,
        owner: str,
        autoscaling: Autoscaling | None = None,
    ) -> None:
        """:param autoscaling: scale on ``spec.queue_metric`` (a KEDA ScaledObject or an HPA). Default none."""
        super().__init__(scope, construct_id)
        self.spec, self.placement = spec, placement
        pod = dataclasses.replace(ServingPodProps.of(spec, placement), autoscaling=autoscaling)
        self.workload = ServingWorkload(self, "pod", pod, owner=owner)
        self.deployment = self.workload.deployment
        self.service = self.workload.service
