"""What every prefill/decode split needs, whichever kind renders it (``ray_serve``'s ``prefill_decode``,
``dynamo``'s ``mode: disaggregated``): EFA workers, one zone, NIXL on LIBFABRIC. Each kind's rule calls these with
its own rule id and config paths."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.compute import AcceleratedNodeGroupConfig, KarpenterPoolConfig
from inferstack.config.model import InferstackConfig
from inferstack.config.ray_serve import NixlBackend
from inferstack.config.workloads import WorkloadBase
from inferstack.rules.base import Finding


def pool_gpus(pool: AcceleratedNodeGroupConfig | KarpenterPoolConfig) -> int:
    """GPUs the pool can hold at most."""
    if isinstance(pool, KarpenterPoolConfig):
        return pool.accelerator_limit or 0
    return pool.max_size * pool.instance.accelerator_count


def efa_findings(
    rule: str, config: InferstackConfig, path: str, workload: WorkloadBase, split: str
) -> Iterator[Finding]:
    """The workers are on an EFA pool and request EFA: prefill hands every request's KV cache to decode across
    nodes. ``split``: how the config asks for the split (named in the fix)."""
    pool = config.pool(workload.pool)
    if not pool.efa:
        yield Finding(
            rule=rule,
            path=f"{path}.pool",
            message=f"pool {pool.name!r} has no EFA: NIXL would move every request's KV cache over TCP",
            fix=f"use an EFA pool (efa: true, e.g. p5.48xlarge) for {split}",
        )
    elif not workload.efa:
        yield Finding(
            rule=rule,
            path=f"{path}.efa",
            message=f"pool {pool.name!r} has EFA but the workers do not request it",
            fix="set efa: true (each worker pod takes every EFA device of its node)",
            suggestions=({f"{path}.efa": True},),
        )


def zone_findings(rule: str, config: InferstackConfig, path: str, workload: WorkloadBase) -> Iterator[Finding]:
    """Prefill and decode in one Availability Zone: EFA does not cross zones."""
    if config.pool(workload.pool).availability_zone is None:
        yield Finding(
            rule=rule,
            path=f"{path}.pool",
            message=f"pool {workload.pool!r} spans every zone, so prefill and decode pods may land in different "
            "zones, where EFA cannot reach",
            fix="pin the pool to one zone (availability_zone: 0)",
        )


def nixl_findings(
    rule: str, config: InferstackConfig, workload: WorkloadBase, backends: tuple[NixlBackend, ...], backends_path: str
) -> Iterator[Finding]:
    """NIXL over EFA only with the LIBFABRIC backend: UCX falls back to TCP speed without an error."""
    if config.pool(workload.pool).efa and NixlBackend.LIBFABRIC not in backends:
        yield Finding(
            rule=rule,
            path=backends_path,
            message=f"{', '.join(b.value for b in backends)} on an EFA pool: UCX cannot drive EFA and falls back to "
            "TCP (~0.3 GB/s) without an error",
            fix="use kv_backends: [LIBFABRIC] (the default)",
            suggestions=({backends_path: ["LIBFABRIC"]},),
        )
