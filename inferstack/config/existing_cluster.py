"""A team's own cluster already runs its add-ons: on it, what inferstack would install is off unless the config
turns it on (creating an EKS add-on twice fails the deploy with "Addon already exists"; two GPU operators, device
plugins or Karpenters fight over the same nodes)."""

from __future__ import annotations

from typing import Any

from inferstack.config.loader import parse_config
from inferstack.config.model import InferstackConfig

#: The install switches that are off on a team's own cluster unless the config sets them (config paths).
OFF_ON_A_TEAMS_CLUSTER: tuple[str, ...] = (
    "storage.install_csi_drivers",  # the Mountpoint for S3 and FSx CSI drivers
    "observability.install_ebs_csi_driver",
    "observability.install_cert_manager",
    "observability.install_metrics_server",
    "observability.install_prometheus_stack",
    "compute.install_karpenter",
    "compute.gpu_operator.install",
    "compute.neuron_plugin.install",
    "compute.efa_plugin.install",
)


def _is_set(config: InferstackConfig, path: str) -> bool:
    """Whether the config itself sets ``path`` (each section on the way, and the switch in the last)."""
    node: Any = config
    *sections, switch = path.split(".")
    for name in sections:
        if name not in node.model_fields_set:
            return False
        node = getattr(node, name)
    return switch in node.model_fields_set


def on_a_teams_cluster(config: InferstackConfig) -> InferstackConfig:
    """``config`` for a team's own cluster: every switch of :data:`OFF_ON_A_TEAMS_CLUSTER` it does not set is off.

    :raises ConfigError: naming what the changed config then lacks (e.g. ``compute.karpenter_node_role`` for pools
        that go to the cluster's own Karpenter)."""
    unset = [path for path in OFF_ON_A_TEAMS_CLUSTER if not _is_set(config, path)]
    if not unset:
        return config
    data: dict[str, Any] = config.model_dump(mode="json", by_alias=True, exclude_unset=True)
    for path in unset:
        *sections, switch = path.split(".")
        node = data
        for name in sections:
            node = node.setdefault(name, {})
        node[switch] = False
    return parse_config(data, "config (on a team's own cluster, where these add-ons are off unless set)")
