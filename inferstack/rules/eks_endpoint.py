"""EKS-ENDPOINT: a public API endpoint must be limited to an allow-list of CIDRs.

cdk-nag's EKS1 does not fire for aws_eks_v2 clusters, so this rule covers it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from inferstack.config.model import EndpointAccess, InferstackConfig
from inferstack.rules.base import Finding, Rule

RULE_ID = "EKS-ENDPOINT"
_OPEN = {"0.0.0.0/0"}
#: More than a /8 of the IPv4 internet in the allow-list is no allow-list (judged on the union: 0.0.0.0/1 +
#: 128.0.0.0/1 is 0.0.0.0/0).
MAX_ALLOWED_ADDRESSES = 2**24


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
    elif cidrs & _OPEN or _union_size(cidrs) > MAX_ALLOWED_ADDRESSES:
        share = _union_size(cidrs) / 2**32
        yield Finding(
            rule=RULE_ID,
            path="cluster.public_access_cidrs",
            message=f"together the CIDRs cover {share:.1%} of the IPv4 internet (more than a /8): the Kubernetes API "
            "is effectively open",
            fix="list only your office/VPN CIDRs, or set cluster.endpoint_access: private",
        )


def _union_size(cidrs: set[str]) -> int:
    """Addresses the CIDRs cover together (overlaps counted once)."""
    networks = [ipaddress.ip_network(c, strict=False) for c in cidrs]
    return sum(n.num_addresses for n in ipaddress.collapse_addresses(n for n in networks if n.version == 4))


RULE = Rule(id=RULE_ID, title="Public EKS endpoint limited to an allow-list", check=check)
