"""PlatformBaseChart: cluster-wide Kubernetes objects every inferstack platform has."""

from __future__ import annotations

import cdk8s
from cdk8s_plus_36 import k8s
from constructs import Construct

#: PriorityClass for online serving pods: they may preempt batch work, never the other way round.
SERVING_PRIORITY_CLASS = "inferstack-serving"
SERVING_PRIORITY = 100_000
#: PriorityClass for batch work (model sync, Neuron compilation, benchmarks): never preempts anything.
BATCH_PRIORITY_CLASS = "inferstack-batch"
BATCH_PRIORITY = 1_000


class PlatformBaseChart(cdk8s.Chart):
    """PriorityClasses ``inferstack-serving`` (100000, preempts lower) and ``inferstack-batch`` (1000, never
    preempts), so a burst of batch jobs cannot evict serving replicas from scarce accelerator nodes."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id, disable_resource_name_hashes=True)
        k8s.KubePriorityClass(
            self,
            "serving",
            metadata=k8s.ObjectMeta(name=SERVING_PRIORITY_CLASS),
            value=SERVING_PRIORITY,
            global_default=False,
            preemption_policy="PreemptLowerPriority",
            description="inferstack: online LLM serving pods",
        )
        k8s.KubePriorityClass(
            self,
            "batch",
            metadata=k8s.ObjectMeta(name=BATCH_PRIORITY_CLASS),
            value=BATCH_PRIORITY,
            global_default=False,
            preemption_policy="Never",
            description="inferstack: batch work (model sync, compilation); never preempts serving",
        )
