"""What a cluster runs from one synthesized app: our objects, every Helm release rendered offline (helm v4.2.3 of the
kubectl layer, chart sources from ../shared/upstream/charts-src) and the pods the operators make. Rendered once
per app per test session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inferstack.catalog.kubernetes import POOL_LABEL, SYSTEM_POOL
from inferstack.catalog.versions import kube_scheduler_tag
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
