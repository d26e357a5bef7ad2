"""Serving rules: the model fits the accelerators, the parallelism fits a node and the model, the pod fits a
pool, probes wait long enough, accelerators are limited. Each finding names the field and a configuration that
would work.

One module per rule; what two rules share (the multi-node suggestion) is in :mod:`.common`, and checking a
suggestion before it is offered in :mod:`inferstack.rules.suggestions`. This package names them all as before."""

from __future__ import annotations

from inferstack.rules.serving import (
    fit,
    neuron_artifacts,
    neuron_cores,
    neuron_stack,
    parallel_node,
    scheduling,
    startup,
    tp_heads,
)
from inferstack.rules.serving.common import MAX_SUGGESTED_NODES, MULTINODE_KIND
from inferstack.rules.serving.fit import FIT, check_fit, valid_tp
from inferstack.rules.serving.neuron_artifacts import NEURON_ARTIFACTS, check_neuron_artifacts
from inferstack.rules.serving.neuron_cores import NEURON_CORES, check_neuron_cores
from inferstack.rules.serving.neuron_stack import NEURON_KV_FLAGS, NEURON_STACK, check_neuron_stack
from inferstack.rules.serving.parallel_node import PARALLEL_NODE, check_parallel_node
from inferstack.rules.serving.scheduling import SCHEDULING, check_scheduling
from inferstack.rules.serving.startup import STARTUP, check_startup, workload_nodes
from inferstack.rules.serving.tp_heads import TP_HEADS, check_tp_heads
from inferstack.rules.suggestions import register_viability_checks

RULES = (
    tp_heads.RULE,
    neuron_cores.RULE,
    neuron_artifacts.RULE,
    parallel_node.RULE,
    fit.RULE,
    scheduling.RULE,
    startup.RULE,
    neuron_stack.RULE,
)

register_viability_checks(check_tp_heads, check_neuron_cores, check_parallel_node, check_fit, check_scheduling)

__all__ = [
    "FIT",
    "MAX_SUGGESTED_NODES",
    "MULTINODE_KIND",
    "NEURON_ARTIFACTS",
    "NEURON_CORES",
    "NEURON_KV_FLAGS",
    "NEURON_STACK",
    "PARALLEL_NODE",
    "RULES",
    "SCHEDULING",
    "STARTUP",
    "TP_HEADS",
    "check_fit",
    "check_neuron_artifacts",
    "check_neuron_cores",
    "check_neuron_stack",
    "check_parallel_node",
    "check_scheduling",
    "check_startup",
    "check_tp_heads",
    "valid_tp",
    "workload_nodes",
]
