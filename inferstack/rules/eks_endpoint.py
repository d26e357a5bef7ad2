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
#: An allow-list of offices and VPN egress is a few addresses; more than a /16 (65,536 addresses) is a network
#: range, not an allow-list. Judged on the addresses the CIDRs cover together (0.0.0.0/1 + 128.0.0.0/1 is
#: 0.0.0.0/0; 256 /24s of one /16 are that /16), so splitting a range into many small CIDRs does not pass.
MAX_ALLOWED_ADDRESSES = 2**16


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
        size = _union_size(cidrs)
        yield Finding(
            rule=RULE_ID,
            path="cluster.public_access_cidrs",
            message=f"together the CIDRs admit {size:,} addresses ({size / 2**32:.2%} of the IPv4 internet), more "
            f"than a /16 ({MAX_ALLOWED_ADDRESSES:,}): that is a network range, not an allow-list of the Kubernetes API",
            fix="list only your office/VPN egress CIDRs, set cluster.endpoint_access: private, or acknowledge "
            "EKS-ENDPOINT with the reason the range is yours",
        )


def _union_size(cidrs: set[str]) -> int:
    """Addresses the CIDRs cover together (overlaps counted once)."""
    networks = [ipaddress.ip_network(c, strict=False) for c in cidrs]
    return sum(n.num_addresses for n in ipaddress.collapse_addresses(n for n in networks if n.version == 4))


RULE = Rule(id=RULE_ID, title="Public EKS endpoint limited to an allow-list", check=check)
