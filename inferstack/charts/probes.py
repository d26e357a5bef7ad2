"""A workload's ``probes`` onto the probes its chart rendered (:mod:`inferstack.config.probes`): the containers of
the pods serving it (:func:`~inferstack.charts.pod_customization.serving_templates`), a NIMService's probes (its
``spec.<probe>.probe``, which the NIM operator copies into the container) and a KServe predictor's ``model``
container. Only probes the kind renders are tuned; a probe configured that the kind renders nowhere is a config
error naming ``workloads[i].probes.<probe>`` (inferstack never invents one an engine or operator did not plan)."""

from __future__ import annotations

import math
from collections.abc import Iterator, MutableMapping
from typing import Any

import cdk8s
from constructs import Construct

from inferstack.charts.pod_customization import serving_templates
from inferstack.charts.rendered import set_rendered
from inferstack.config.errors import ConfigError, Problem
from inferstack.config.probes import ProbeHandler, ProbeScheme, ProbesConfig

#: Config name → the container field of each probe.
PROBES = {"readiness": "readinessProbe", "liveness": "livenessProbe", "startup": "startupProbe"}
#: ProbeTiming field → Probe field.
TIMING = {
    "period_seconds": "periodSeconds",
    "timeout_seconds": "timeoutSeconds",
    "failure_threshold": "failureThreshold",
    "initial_delay_seconds": "initialDelaySeconds",
}


class PortlessProbeError(ValueError):
    """A probe without a port (Knative fills in the user container's for ``httpGet``): ``tcp`` cannot name one."""


#: The least timeout of an exec probe, seconds: the kubelet enforces it (Kubernetes 1.20+) and a program (an
#: interpreter) takes a moment to start — a NIMService's startup probe is rendered with 1 s. ``timeout_seconds``
#: set in the config still wins.
EXEC_TIMEOUT_SECONDS = 5
#: The handler keys of a Kubernetes Probe (one of them is set).
HANDLERS = ("httpGet", "tcpSocket", "exec", "grpc")


def tune(probe: MutableMapping[str, Any], name: str, config: ProbesConfig) -> None:
    """Apply ``config`` to ``probe`` (a rendered Kubernetes Probe, edited in place), which is the ``name`` one.

    :raises PortlessProbeError: ``handler: tcp`` on an ``httpGet`` probe that names no port."""
    if config.handler is ProbeHandler.EXEC:
        for handler in HANDLERS:
            probe.pop(handler, None)
        probe["exec"] = {"command": list(config.command)}
        if int(probe.get("timeoutSeconds", 1)) < EXEC_TIMEOUT_SECONDS:
            probe["timeoutSeconds"] = EXEC_TIMEOUT_SECONDS  # a program starts; a timing set below still wins
    elif config.handler is ProbeHandler.TCP and "httpGet" in probe:
        if "port" not in probe["httpGet"]:
            raise PortlessProbeError(name)
        probe["tcpSocket"] = {"port": probe.pop("httpGet")["port"]}
    elif config.scheme is ProbeScheme.HTTPS and "httpGet" in probe:
        probe["httpGet"]["scheme"] = "HTTPS"
    if name == "startup":
        budget = int(probe.get("periodSeconds", 10)) * int(probe.get("failureThreshold", 3))
        if config.startup.period_seconds is not None:
            probe["periodSeconds"] = config.startup.period_seconds
            probe["failureThreshold"] = max(1, math.ceil(budget / config.startup.period_seconds))
        if config.startup.timeout_seconds is not None:
            probe["timeoutSeconds"] = config.startup.timeout_seconds
        return
    timing = getattr(config, name)
    for field, key in TIMING.items():
        value = getattr(timing, field)
        if value is not None:
            probe[key] = value


def _probes_of(
    manifest: MutableMapping[str, Any], workload: str, probes: ProbesConfig
) -> Iterator[tuple[str, MutableMapping[str, Any]]]:
    """``(name, probe)`` of every probe rendered on a pod that serves ``workload`` in ``manifest``."""
    kind, spec = manifest.get("kind"), manifest.get("spec") or {}
    containers: list[MutableMapping[str, Any]] = []
    if kind == "NIMService":
        for name, field in PROBES.items():
            holder = spec.get(field) or {}
            if holder.get("enabled", True) and isinstance(holder.get("probe"), MutableMapping):
                yield name, holder["probe"]
        return
    if kind == "InferenceService":
        model = (spec.get("predictor") or {}).get("model")
        containers = [model] if isinstance(model, MutableMapping) else []
    else:
        for template in serving_templates(manifest, workload):
            containers += (template.get("spec") or {}).get("containers") or []
    for container in containers:
        for name, field in PROBES.items():
            if isinstance(container.get(field), MutableMapping):
                yield name, container[field]


def apply_probes(scope: Construct, workload: str, probes: ProbesConfig, path: str) -> None:
    """Tune the probes of every pod of ``scope`` (a workload chart) that serves ``workload``.

    :param path: the config path of ``probes``, e.g. ``workloads[0].probes``.
    :raises ConfigError: a probe configured that the kind renders on none of its serving containers.
    """
    if probes.empty:
        return
    found: set[str] = set()
    for obj in (node for node in scope.node.find_all() if isinstance(node, cdk8s.ApiObject)):
        manifest = obj.to_json()
        tuned = False
        rendered = list(_probes_of(manifest, workload, probes))
        for name, probe in rendered:
            try:
                tune(probe, name, probes)
            except PortlessProbeError:
                raise ConfigError(
                    "probes",
                    [
                        Problem(
                            f"{path}.handler",
                            f"tcp — the {name} probe of {obj.kind}/{obj.name} names no port (Knative fills in the "
                            "container's for httpGet only): keep handler http",
                            "tcp",
                        )
                    ],
                ) from None
            found.add(name)
            tuned = True
        if tuned:
            set_rendered(obj, manifest)
    configured = {name for name in PROBES if not getattr(probes, name).empty}
    missing = sorted(configured - found)
    if not found:
        missing = missing or ["handler"]
    if missing:
        raise ConfigError(
            "probes",
            [
                Problem(
                    f"{path}.{name}",
                    "this workload's kind renders no such probe of its own on its serving containers (an "
                    "operator's default probe, e.g. a NIMService's readiness, is tuned through overrides)"
                    + (f" (it renders {', '.join(sorted(found))})" if found else "")
                    + " — remove it",
                )
                for name in missing
            ],
        )
