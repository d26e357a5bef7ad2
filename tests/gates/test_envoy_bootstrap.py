"""GATE: the router's Envoy bootstrap is one Envoy can read. Envoy parses its bootstrap strictly (proto3 JSON: an
unknown field, a misspelled enum value or an unregistered ``@type`` stops it at start), so the rendered
``envoy.yaml`` of every router of every example is decoded here against Envoy's own API — the envoyproxy/
data-plane-api messages as ``envoy_data_plane`` 2.2.0 generates them (betterproto2; strict: unknown fields raise).

That package follows Envoy's newest API; the pinned image is Envoy 1.33.2 (catalog ``envoy-router``), so a field
added after 1.33 would pass here — every field the bootstrap uses is also in the v1.5.0 standalone chart's config,
which that release runs. betterproto2 cannot read an empty ``Any`` (``{}``), which protobuf's JSON mapping (Envoy's
parser) reads as an empty message: the route's per-filter ``FilterConfig.config: {}`` — the chart's, too — is
decoded without it.
"""

from __future__ import annotations

import copy
import importlib
from typing import Any

import pytest
import yaml

from inferstack.constructs.endpoint_picker import envoy_config
from tests.charts.conftest import ROOT, render

#: envoy_data_plane's generated modules use a pydantic validator form deprecated since 2.12 (a warning per message).
pytestmark = pytest.mark.filterwarnings("ignore::pydantic.PydanticDeprecatedSince212")

#: The modules whose messages the bootstrap names by ``@type`` (importing them registers the types).
TYPED = (
    "envoy_data_plane.envoy.extensions.access_loggers.file.v3",
    "envoy_data_plane.envoy.extensions.filters.network.http_connection_manager.v3",
    "envoy_data_plane.envoy.extensions.filters.http.router.v3",
    "envoy_data_plane.envoy.extensions.filters.http.health_check.v3",
    "envoy_data_plane.envoy.extensions.filters.http.ext_proc.v3",
    "envoy_data_plane.envoy.config.route.v3",
    "envoy_data_plane.envoy.extensions.transport_sockets.tls.v3",
    "envoy_data_plane.envoy.extensions.upstreams.http.v3",
)


@pytest.fixture(scope="module")
def bootstrap() -> Any:
    for module in TYPED:
        importlib.import_module(module)
    from envoy_data_plane.envoy.config.bootstrap.v3 import Bootstrap

    return Bootstrap


def _without_empty_any(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with every per-filter ``FilterConfig`` whose ``config`` is the empty Any dropped (see above)."""
    readable = copy.deepcopy(config)
    for listener in readable["static_resources"]["listeners"]:
        for chain in listener["filter_chains"]:
            for network_filter in chain["filters"]:
                for host in network_filter["typed_config"].get("route_config", {}).get("virtual_hosts", []):
                    for route in host["routes"]:
                        per_filter = route.get("typed_per_filter_config", {})
                        for name, filter_config in list(per_filter.items()):
                            assert filter_config.get("config") == {}, name  # nothing else is dropped
                            del per_filter[name]
    return readable


def test_envoy_reads_the_routers_bootstrap(bootstrap):
    parsed = bootstrap.from_dict(_without_empty_any(envoy_config()))
    assert [listener.name for listener in parsed.static_resources.listeners] == ["envoy-ready", "requests"]
    assert {cluster.name for cluster in parsed.static_resources.clusters} == {
        "prometheus_stats",
        "original_destination_cluster",
        "ext_proc",
    }


def test_every_rendered_bootstrap_is_the_one_checked(bootstrap):
    """What the ConfigMaps carry is :func:`envoy_config`, for each router of the example."""
    objects = render(yaml.safe_load((ROOT / "examples" / "litellm-gateway.yaml").read_text()))
    rendered = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-router-envoy")]
    assert len(rendered) == 2
    for config_map in rendered:
        assert yaml.safe_load(config_map["data"]["envoy.yaml"]) == envoy_config()


@pytest.mark.parametrize(
    ("where", "change"),
    [
        ("a misspelled field", lambda c: c["static_resources"]["clusters"][1].update(original_dst_lb_confg={})),
        ("an unknown enum value", lambda c: c["static_resources"]["clusters"][1].update(type="ORIGINAL_DEST")),
        (
            "a field inside a typed config",
            lambda c: c["static_resources"]["listeners"][1]["filter_chains"][0]["filters"][0]["typed_config"][
                "http_filters"
            ][0]["typed_config"].update(processing_mod={}),
        ),
    ],
)
def test_the_gate_refuses_what_envoy_refuses(bootstrap, where, change):
    broken = _without_empty_any(envoy_config())
    change(broken)
    with pytest.raises((KeyError, ValueError, TypeError)):
        bootstrap.from_dict(broken)
