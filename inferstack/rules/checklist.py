"""The production checklist of seed 001 — monitoring and alerting, log aggregation, network isolation — as warnings
when the config turns an item off (requests and limits, probes, PodDisruptionBudgets and priority classes are
always rendered; tests/gates/test_checklist.py holds every example to them)."""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.catalog.metrics import KIND_METRICS
from inferstack.config.model import InferstackConfig
from inferstack.rules.base import Finding, Rule, Severity

MONITORING = "CHECKLIST-MONITORING"
#: Kinds whose server exports no Prometheus metrics at all (Ollama 0.32: no /metrics route).
NO_METRICS = frozenset({"ollama"})
LOGS = "CHECKLIST-LOGS"
NETWORK = "CHECKLIST-NETWORK-POLICY"


def check_monitoring(config: InferstackConfig) -> Iterator[Finding]:
    """A serving workload without monitoring has no metrics, no alerts and no dashboard row."""
    for index, workload in enumerate(config.workloads):
        if not workload.monitoring and workload.kind not in NO_METRICS:
            alerts = " and alerts" if workload.kind in KIND_METRICS else ""
            yield Finding(
                rule=MONITORING,
                path=f"workloads[{index}].monitoring",
                message=f"{workload.name} is not scraped: no metrics{alerts} for TTFT, queue depth or KV cache use",
                fix="set monitoring: true, or acknowledge CHECKLIST-MONITORING with the reason",
                severity=Severity.WARNING,
            )


def check_logs(config: InferstackConfig) -> Iterator[Finding]:
    """Container logs that stay on the nodes are lost with them (Karpenter replaces GPU nodes)."""
    if config.workloads and not config.observability.log_shipping:
        yield Finding(
            rule=LOGS,
            path="observability.log_shipping",
            message="container logs stay on the nodes: a replaced or consolidated node takes them with it",
            fix="set log_shipping: true (Fluent Bit to CloudWatch Logs), or acknowledge with where logs go instead",
            severity=Severity.WARNING,
        )


def check_network(config: InferstackConfig) -> Iterator[Finding]:
    """Without policies any pod of the cluster can call the engines (which serve without authentication)."""
    if config.workloads and not config.network_policies.enabled:
        yield Finding(
            rule=NETWORK,
            path="network_policies.enabled",
            message="no NetworkPolicies: every pod of the cluster can reach the engines, which take no credentials",
            fix="set network_policies.enabled: true, or acknowledge with the isolation you use instead",
            severity=Severity.WARNING,
        )


RULES = (
    Rule(id=MONITORING, title="Serving workloads are monitored", check=check_monitoring),
    Rule(id=LOGS, title="Container logs leave the nodes", check=check_logs),
    Rule(id=NETWORK, title="The engines are network-isolated", check=check_network),
)
