"""EKS-LOGS: every control-plane log type is sent to CloudWatch Logs.

cdk-nag's EKS2 does not fire for aws_eks_v2 clusters, so this rule covers it.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.model import ControlPlaneLog, InferstackConfig
from inferstack.rules.base import Finding, Rule

RULE_ID = "EKS-LOGS"


def check(config: InferstackConfig) -> Iterator[Finding]:
    enabled = set(config.cluster.control_plane_logs)
    missing = [log.value for log in ControlPlaneLog if log not in enabled]
    if missing:
        yield Finding(
            rule=RULE_ID,
            path="cluster.control_plane_logs",
            message=f"log types {', '.join(missing)} are off, so API, audit and scheduling history is lost",
            fix=f"add {', '.join(missing)} (or remove the key: the default enables all five), or acknowledge "
            f"{RULE_ID} with a reason",
        )


RULE = Rule(id=RULE_ID, title="All EKS control-plane log types enabled", check=check)
