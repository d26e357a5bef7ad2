"""SCHEDULING: every role's pod — its requests, node selector and tolerations — fits a node of its pool, or it
would stay Pending ("will it schedule"). The finding suggests the other pools whose nodes hold the pod and that
pass every rule."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.kubernetes import SYSTEM_POOL
from inferstack.config.compute import AcceleratedNodeGroupConfig, KarpenterPoolConfig
from inferstack.config.model import InferstackConfig
from inferstack.plan import resolve
from inferstack.plan.placement import PodPlan, fits_node, pool_taints
from inferstack.plan.served import ranks_per_node, serving_instances
from inferstack.rules.base import Finding, Rule
from inferstack.rules.serving.common import across_nodes
from inferstack.rules.suggestions import suggesting, viable

SCHEDULING = "SCHEDULING"


def check_scheduling(config: InferstackConfig) -> Iterator[Finding]:
    """Every role's pod (requests, node selector, tolerations) fits a node of its pool ("will it schedule")."""
    for resolved in resolve(config).workloads:
        index, workload = resolved.index, resolved.config
        seen: list[PodPlan] = []
        for role in resolved.roles.values():
            if role.pod in seen or role.pool == SYSTEM_POOL:
                continue  # a leader and its workers are the same pod; the system nodes are not a compute pool
            seen.append(role.pod)
            pool = config.pool(role.pool or workload.pool)
            plan = role.pod
            fits, reason = fits_node(plan, pool)
            if fits:
                continue
            others = []
            for candidate in config.compute.pools:
                if candidate.name == pool.name:
                    continue
                moved = PodPlan(
                    **{
                        **plan.__dict__,
                        "node_selector": {"inferstack.io/pool": candidate.name},
                        "tolerations": plan.tolerations | _taints(candidate),
                    }
                )
                ok, instance = fits_node(moved, candidate)
                changes = {f"workloads[{index}].pool": candidate.name}
                if ok and suggesting() and viable(config, changes):
                    others.append((f"{candidate.name} ({instance})", changes))
            fix = (
                f"move the workload to pool {' or '.join(text for text, _ in others)}"
                if others
                else _no_pool_fix(plan, resolved.config)
            )
            pod = "pod" if len(resolved.roles) == 1 else f"{role.name} pod"
            yield Finding(
                rule=SCHEDULING,
                path=f"workloads[{index}].pool",
                message=f"the {pod} would stay Pending: pool {pool.name!r} cannot run it — {reason}",
                fix=fix,
                suggestions=tuple(changes for _, changes in others),
            )
            break


def _no_pool_fix(plan: PodPlan, workload: object) -> str:
    """Where no configured pool holds the pod: a pool of a type that does — unless no instance type inferstack serves
    on holds its ranks (GPUs, or NeuronCores), which only fewer ranks per pod (or more nodes) can solve."""
    ranks = plan.neuron_cores if plan.accelerator is AcceleratorKind.NEURON else plan.accelerators
    top = max(serving_instances(plan.accelerator), key=lambda t: (ranks_per_node(t), t.name), default=None)
    if ranks and top is not None and ranks > ranks_per_node(top):
        unit = "NeuronCores" if plan.accelerator is AcceleratorKind.NEURON else "GPUs"
        return (
            f"no instance type inferstack serves on holds {ranks} {unit} (the most: {ranks_per_node(top)} on "
            f"{top.name}) — lower tensor_parallel_size × pipeline_parallel_size per pod, or "
            f"{across_nodes(workload, tp_fits=_tp_fits(workload, ranks_per_node(top)))}"
        )
    return "add a pool whose instances hold the request, or lower tensor_parallel_size / resources"


def _tp_fits(workload: object, node: int) -> bool:
    """Whether every tensor-parallel size of ``workload``'s engines fits a node of ``node`` ranks."""
    engines = getattr(workload, "engines", None) or [getattr(workload, "engine", None)]
    return all(getattr(e, "tensor_parallel_size", 1) <= node for e in engines if e is not None)


def _taints(pool: AcceleratedNodeGroupConfig | KarpenterPoolConfig) -> frozenset[tuple[str, str]]:
    return frozenset(pool_taints(pool))


RULE = Rule(id=SCHEDULING, title="Every serving pod fits a node of its pool", check=check_scheduling)
