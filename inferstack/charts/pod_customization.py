"""A workload's ``pod`` (labels, annotations, environment) onto every pod that serves it, in the objects its chart
rendered — where each kind's pods are specified:

* pod templates (Deployment, StatefulSet, LeaderWorkerSet leader and workers, RayService head and workers,
  DynamoGraphDeployment components: :data:`~inferstack.constructs.pod.templates.POD_TEMPLATE_PATHS`) whose labels
  name the workload (``app.kubernetes.io/name``) and are not one of its Jobs or a gateway's Postgres: the template's
  labels and annotations, and the env of each of its containers (not the init containers);
* a NIMService: ``spec.labels``, ``spec.annotations``, ``spec.env`` — the NIM operator puts them on the pods it makes
  (``GetServiceLabels``, ``GetNIMServiceAnnotations`` → ``PodAnnotations``, ``MergeEnvVars`` with ``spec.env`` first;
  NVIDIA/k8s-nim-operator ``api/apps/v1alpha1/nimservice_types.go``);
* a KServe InferenceService: ``spec.predictor.labels`` and ``annotations`` (KServe v0.20.0 copies both onto the
  predictor pods: ``pkg/controller/v1beta1/inferenceservice/components/predictor.go:161-172``, annotations less the
  configured disallowed list, whose keys :mod:`inferstack.config.pod` refuses anyway) and the ``model`` container's
  env (merged into the runtime's container).

``ports`` go on the serving container (the first) of each pod template; a NIMService or InferenceService has none
to give: the NIM operator builds its container's ports itself (``spec.expose``), and Knative admits one port per
container (KServe's Knative mode) — a config error names them.

A key, variable or port the object carries already, with another value, is a config error at ``workloads[i].pod…``:
inferstack's own is never silently replaced.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

import cdk8s
from constructs import Construct

from inferstack.charts.rendered import set_rendered
from inferstack.config.errors import ConfigError, Problem
from inferstack.config.pod import EnvFromSecret, PodConfig
from inferstack.constructs.pod.templates import POD_TEMPLATE_PATHS, walk_path

NAME_LABEL, COMPONENT_LABEL = "app.kubernetes.io/name", "app.kubernetes.io/component"
#: Components of a workload's pods that do not serve it: its Jobs and a gateway's Postgres.
NOT_SERVING = frozenset({"model-sync", "neuron-compile", "bench", "postgres"})


def env_entries(pod: PodConfig) -> list[dict[str, Any]]:
    """``pod.env`` as container ``env`` entries, in the config's order."""
    entries: list[dict[str, Any]] = []
    for name, value in pod.env.items():
        if isinstance(value, EnvFromSecret):
            ref = {"name": value.secret.name, "key": value.secret.key}
            entries.append({"name": name, "valueFrom": {"secretKeyRef": ref}})
        else:
            entries.append({"name": name, "value": value})
    return entries


class _Merge:
    """Adds ``pod``'s keys into the maps and env lists of one object, collecting clashes as problems."""

    def __init__(self, pod: PodConfig, path: str, owner: str) -> None:
        self.pod, self.path, self.owner = pod, path, owner
        self.problems: list[Problem] = []

    def metadata(self, parent: MutableMapping[str, Any]) -> None:
        """Add the labels and annotations into ``parent['labels']`` / ``parent['annotations']`` (created only when
        there is something to add)."""
        for field, ours in (("labels", self.pod.labels), ("annotations", self.pod.annotations)):
            if not ours:
                continue
            target = parent.setdefault(field, {})
            for key, value in ours.items():
                if key in target and target[key] != value:
                    self.problems.append(
                        Problem(
                            f"{self.path}.{field}",
                            f"{key}: {self.owner} sets it to {target[key]!r} already — use another key",
                            value,
                        )
                    )
                    continue
                target[key] = value

    def env(self, container: MutableMapping[str, Any]) -> None:
        """Append the variables to ``container['env']``."""
        if not self.pod.env:
            return
        current = container.setdefault("env", [])
        present = {entry.get("name"): entry for entry in current}
        for entry in env_entries(self.pod):
            name = entry["name"]
            if name in present:
                if present[name] != entry:
                    self.problems.append(
                        Problem(
                            f"{self.path}.env",
                            f"{name}: {self.owner} sets it already (container {container.get('name')!r}) — "
                            "inferstack's value stays; use overrides to change it",
                            name,
                        )
                    )
                continue
            current.append(entry)

    def ports(self, container: MutableMapping[str, Any]) -> None:
        """Append the ports to ``container['ports']``: a name or number the container has already is a problem."""
        if not self.pod.ports:
            return
        current = container.setdefault("ports", [])
        for index, port in enumerate(self.pod.ports):
            taken = [p for p in current if p.get("name") == port.name or p.get("containerPort") == port.port]
            if taken:
                self.problems.append(
                    Problem(
                        f"{self.path}.ports[{index}]",
                        f"{self.owner}'s container {container.get('name')!r} has port {taken[0].get('name')!r} "
                        f"({taken[0].get('containerPort')}) already — pick a name and number it does not use",
                        port.port,
                    )
                )
                continue
            current.append({"name": port.name, "containerPort": port.port, "protocol": "TCP"})

    def refuse_ports(self, why: str) -> None:
        """A kind whose operator builds the container: its ports are not ours to add."""
        if self.pod.ports:
            self.problems.append(Problem(f"{self.path}.ports", why, [p.name for p in self.pod.ports]))


def serving_templates(manifest: Mapping[str, Any], workload: str) -> Iterator[MutableMapping[str, Any]]:
    """The pod templates of ``manifest`` (in place) whose labels name ``workload`` and that are not one of its Jobs or
    a gateway's Postgres."""
    for dotted in POD_TEMPLATE_PATHS.get(str(manifest.get("kind")), ()):
        for _, template in walk_path(manifest, dotted):
            if not isinstance(template, MutableMapping):
                continue
            labels = (template.get("metadata") or {}).get("labels") or {}
            if labels.get(NAME_LABEL) == workload and labels.get(COMPONENT_LABEL) not in NOT_SERVING:
                yield template


def customize(manifest: MutableMapping[str, Any], workload: str, merge: _Merge) -> bool:
    """Apply ``merge`` to ``manifest`` (rendered JSON, edited in place) when it holds pods serving ``workload``;
    whether it did."""
    kind, spec = manifest.get("kind"), manifest.get("spec") or {}
    if kind == "NIMService":
        merge.metadata(spec)
        merge.env(spec)
        merge.refuse_ports("the NIM operator builds the NIM container and its ports (spec.expose) — remove ports")
        return True
    if kind == "InferenceService":
        predictor = spec.get("predictor") or {}
        merge.metadata(predictor)
        containers = [predictor["model"]] if isinstance(predictor.get("model"), MutableMapping) else []
        for container in [*containers, *(predictor.get("containers") or [])]:
            merge.env(container)
        merge.refuse_ports(
            "KServe merges the model container into its runtime's (in Knative mode, Knative admits one port per "
            "container) — remove ports"
        )
        return True
    changed = False
    for template in serving_templates(manifest, workload):
        merge.metadata(template.setdefault("metadata", {}))
        containers = (template.get("spec") or {}).get("containers") or []
        for container in containers:
            merge.env(container)
        if containers:
            merge.ports(containers[0])
        changed = True
    return changed


def apply_pod_config(scope: Construct, workload: str, pod: PodConfig, path: str) -> None:
    """Add ``pod`` to every pod of ``scope`` (a workload chart) that serves ``workload``.

    :param path: the config path of ``pod``, e.g. ``workloads[0].pod``.
    :raises ConfigError: a label, annotation or variable the rendered object sets already to another value.
    """
    if pod.empty:
        return
    problems: list[Problem] = []
    for obj in (node for node in scope.node.find_all() if isinstance(node, cdk8s.ApiObject)):
        manifest = obj.to_json()
        merge = _Merge(pod, path, f"{obj.kind}/{obj.name}")
        if not customize(manifest, workload, merge):
            continue
        problems += merge.problems
        set_rendered(obj, manifest)
    if problems:
        raise ConfigError("pod", problems)
