"""EKS-ENDPOINT: a public API endpoint must be limited to an allow-list of CIDRs.

cdk-nag's EKS1 does not fire for aws_eks_v2 clusters, so this rule covers it.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.model import EndpointAccess, InferstackConfig
from inferstack.rules.base import Finding, Rule

RULE_ID = "EKS-ENDPOINT"
_OPEN = {"0.0.0.0/0"}


def check(config: InferstackConfig) -> Iterator[Finding]:
    cluster = config.cluster
    if cluster.endpoint_access is EndpointAccess.PRIVATE:
        return
    cidrs = set(cluster.public_access_cidrs)
    if not cidrs:
        yield Finding(
            rule=RULE_ID,
            path="cluster.public_access_cidrs",
            message=f"endpoint_access is {cluster.endpoint_access.value} with no allow-list, so the Kubernetes API "
            "is open to the whole internet",
            fix="list the CIDRs that may reach it (e.g. ['203.0.113.0/24']) or set cluster.endpoint_access: private",
        )
    elif cidrs & _OPEN:
        yield Finding(
            rule=RULE_ID,
            path="cluster.public_access_cidrs",
            message="0.0.0.0/0 opens the Kubernetes API to the whole internet",
            fix="replace 0.0.0.0/0 with your office/VPN CIDRs, or set cluster.endpoint_access: private",
        )


RULE = Rule(id=RULE_ID, title="Public EKS endpoint limited to an allow-list", check=check)
