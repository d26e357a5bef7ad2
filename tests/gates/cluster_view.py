"""What a cluster runs from one synthesized app: our objects, every Helm release rendered offline (helm v4.2.3 of the
kubectl layer, chart sources from ../shared/upstream/charts-src) and the pods the operators make. Rendered once
per app per test session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inferstack.catalog.kubernetes import POOL_LABEL, SYSTEM_POOL
from inferstack.catalog.versions import kube_scheduler_tag
from inferstack.cli import MANIFEST_TYPE, json_property
from inferstack.gates.cluster_view import ADDON_CRDS, RUNTIME_CRDS, UNVENDORED_CHART_CRDS, DeployStep
from inferstack.gates.projections import projected_pods
from inferstack.gates.releases import RenderedRelease, releases, render_releases
from inferstack.plan import resolve
from tests.synth import ROOT, Synthesized

CHARTS_SRC = ROOT.parent / "shared" / "upstream" / "charts-src"
NO_CHARTS = "../shared/upstream/charts-src not present (a clean clone without ../shared): charts not rendered"


@dataclass(frozen=True)
class ClusterView:
    """One app as the cluster sees it."""

    app: Synthesized
    rendered: tuple[RenderedRelease, ...]
    ours: tuple[dict[str, Any], ...]
    charts: tuple[dict[str, Any], ...]
    projected: tuple[dict[str, Any], ...]

    @property
    def everything(self) -> list[dict[str, Any]]:
        """Ours, the charts' and the projected pods."""
        return [*self.ours, *self.charts, *self.projected]

    def deploy_steps(self) -> list[DeployStep]:
        """Each Helm release and manifest of the app with what CloudFormation completes before it."""
        rendered = {(r.release.stack, r.release.logical_id): r.objects for r in self.rendered}
        charts = {f"{r.release.stack}/{r.release.logical_id}": r.release.chart for r in self.rendered}
        local: dict[str, tuple[str, list[dict[str, Any]], set[str]]] = {}
        for stack, template in self.app.templates.items():
            resources = template.get("Resources") or {}
            for logical_id, resource in resources.items():
                depends = resource.get("DependsOn") or []
                depends = {f"{stack}/{d}" for d in ([depends] if isinstance(depends, str) else depends)}
                if (stack, logical_id) in rendered:
                    objects = list(rendered[(stack, logical_id)])
                elif resource.get("Type") == MANIFEST_TYPE:
                    objects = json_property(resource["Properties"]["Manifest"])
                else:
                    objects = []
                local[f"{stack}/{logical_id}"] = (stack, objects, depends)
        stacks_before = {
            name: {d.stack_name for d in _all_dependencies(stack)} for name, stack in self.app.stacks.items()
        }
        addons = {
            f"{stack}/{logical_id}": ADDON_CRDS.get(str(resource["Properties"].get("AddonName")), frozenset())
            for stack, template in self.app.templates.items()
            for logical_id, resource in (template.get("Resources") or {}).items()
            if resource.get("Type") == "AWS::EKS::Addon"
        }
        steps = []
        for name, (stack, objects, _) in local.items():
            chart = charts.get(name, "")
            applies = (
                RUNTIME_CRDS.get(chart, frozenset())
                | UNVENDORED_CHART_CRDS.get(chart, frozenset())
                | addons.get(name, frozenset())
            )
            if not objects and not applies:
                continue
            after = _ancestors(name, local) | {n for n, (s, _, _) in local.items() if s in stacks_before[stack]}
            steps.append(DeployStep(name=name, objects=objects, after=frozenset(after), applies_crds=applies))
        return steps

    def pools(self) -> dict[str, tuple[dict[str, str], frozenset[tuple[str, str]]]]:
        """Every node pool's labels and taints, the system node group's included."""
        platform = resolve(self.app.config)
        pools = {name: (dict(pool.labels), pool.taints) for name, pool in platform.pools.items()}
        pools[SYSTEM_POOL] = ({POOL_LABEL: SYSTEM_POOL}, frozenset())
        return pools


_VIEWS: dict[int, ClusterView] = {}


def cluster_view(app: Synthesized) -> ClusterView:
    if id(app) not in _VIEWS:
        kube = kube_scheduler_tag(app.config.cluster.kubernetes_version).removeprefix("v")
        rendered = tuple(render_releases(releases(app.templates), CHARTS_SRC, kube_version=kube))
        ours = tuple(app.kubernetes_objects())
        charts = tuple(obj for r in rendered for obj in r.objects)
        projected = tuple(projected_pods([*ours, *charts]))
        _VIEWS[id(app)] = ClusterView(app, rendered, ours, charts, projected)
    return _VIEWS[id(app)]


def _ancestors(name: str, graph: dict[str, tuple[str, list[dict[str, Any]], set[str]]]) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[name][2])
    while todo:
        current = todo.pop()
        if current in seen or current not in graph:
            continue
        seen.add(current)
        todo.extend(graph[current][2])
    return seen


def _all_dependencies(stack: Any) -> set[Any]:
    found: set[Any] = set()
    todo = list(stack.dependencies)
    while todo:
        current = todo.pop()
        if current in found:
            continue
        found.add(current)
        todo.extend(current.dependencies)
    return found
