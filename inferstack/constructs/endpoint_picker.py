"""EndpointPicker: a request router for one model server's replicas — the Gateway API inference extension's endpoint
picker (EPP) and an Envoy proxy in one pod (the extension's ``standalone`` layout: no Gateway API implementation
needed), the ``InferencePool`` the picker watches, its RBAC, configuration, Service and PodMonitor.

A request reaches Envoy on 8081; Envoy's ``ext_proc`` filter streams it to the picker on ``127.0.0.1:9002``; the
picker scores the pool's ready pods from their ``/metrics`` (queue, KV-cache use, the prefixes it routed) and sets
``x-gateway-destination-endpoint: <pod IP>:<port>``; Envoy's ``ORIGINAL_DST`` cluster connects there. Layout, flags,
ports, probes, RBAC and Envoy's configuration follow kubernetes-sigs/gateway-api-inference-extension v1.5.0
(``config/charts/standalone`` and ``config/charts/epplib``; :mod:`inferstack.catalog.routing`), with these changes:
Envoy logs at ``info`` (the chart's ``trace`` logs every request) and has a liveness probe and a 1 GiB memory
limit, the pod carries ``karpenter.sh/do-not-disrupt`` (consolidation would cut the workload's only way in), the
picker serves the gRPC health check Envoy's ext_proc cluster sends (``--health-checking``), its tracing and pprof
are off, its metrics need no Kubernetes token (the NetworkPolicy admits Prometheus only), and both containers run
restricted (non-root uid 65532, no capabilities, read-only root file system: the picker's
certificate is made in memory, ``pkg/epp/server/runserver.go``; Envoy's hot-restart memory is in ``/dev/shm``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.routing import (
    DESTINATION_HEADER,
    ENGINE_CONFIG_FIELDS,
    ENVOY_ADMIN_PORT,
    ENVOY_CPU,
    ENVOY_MEMORY_GIB,
    ENVOY_MEMORY_LIMIT_GIB,
    ENVOY_READY_PORT,
    EPP_CONFIG_API,
    EPP_GRPC_PORT,
    EPP_HEALTH_PORT,
    EPP_METRICS_PORT,
    POOL_API,
    POOL_GROUP,
    READY_PODS,
    ROUTER_PORT,
    ROUTER_UID,
)
from inferstack.constructs import validation as check
from inferstack.constructs.custom_resource import CustomResource
from inferstack.constructs.monitoring import pod_monitor
from inferstack.constructs.observability import check_rule_groups, prometheus_rule_problems
from inferstack.constructs.pod import PodPlacement

#: The picker's scorer plugins (``type`` in its config), by the name of :attr:`EndpointPickerProps.scorers`' keys.
SCORERS = ("queue-scorer", "kv-cache-utilization-scorer", "prefix-cache-scorer")
CONFIG_DIR, CONFIG_FILE = "/config", "config.yaml"
ENVOY_DIR, ENVOY_FILE = "/etc/envoy", "envoy.yaml"
#: Karpenter leaves a node with such a pod out of voluntary disruption (consolidation).
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
#: As the chart: "this timeout should mirror the longest grace period of the pods within the pool".
TERMINATION_GRACE_SECONDS = 130


@dataclass(frozen=True, kw_only=True)
class EndpointPickerProps:
    """One router: the pods it picks among, what it reads from them, and where it runs."""

    name: str
    """Names the Deployment, Service, ServiceAccount, Role, InferencePool (``<name>``) and ConfigMaps
    (``<name>-config``, ``<name>-envoy``). A DNS-1035 label."""
    namespace: str
    """Namespace of the router and of the pods it routes to (an InferencePool selects pods of its own namespace)."""
    pool_selector: Mapping[str, str]
    """Labels of the serving pods (the InferencePool's ``selector.matchLabels``): those that answer requests only."""
    target_port: int
    """The serving pods' port: requests go there, and ``/metrics`` is scraped there."""
    engine: str
    """The engine the picker reads the pods' metrics as (``defaultEngine``), e.g. ``vllm``."""
    engine_config: Mapping[str, Any]
    """The ``core-metrics-extractor``'s ``engineConfigs`` entry for :attr:`engine` (its metric names)."""
    picker_image: str
    """The endpoint picker's image, pinned."""
    envoy_image: str
    """The Envoy image beside it, pinned."""
    scorers: Mapping[str, int] = field(
        default_factory=lambda: {"queue-scorer": 2, "kv-cache-utilization-scorer": 2, "prefix-cache-scorer": 3}
    )
    """Scorer plugin (of :data:`SCORERS`) → weight; 0 leaves it out. Default the chart's: queue 2, KV cache 2,
    prefix cache 3."""
    replicas: int = 1
    """Router pods (1–3); above 1 the pickers elect a leader and only it is ready. Default 1."""
    cpu: str = "2"
    """The picker's CPU request (no limit). Default ``2``."""
    memory: str = "4Gi"
    """The picker's memory request. Default ``4Gi``."""
    memory_limit: str = "8Gi"
    """The picker's memory limit. Default ``8Gi``."""
    placement: PodPlacement = field(default_factory=PodPlacement)
    """Where the router pods run. Default anywhere."""
    monitoring: bool = True
    """A PodMonitor for the picker's metrics (port ``metrics``) and a PrometheusRule ``<name>`` alerting when it
    reads no replica (:func:`router_alerts`). Default on."""
    workload: str = ""
    """The routed workload's name, on the alerts' ``inferstack_workload`` label (they go where its alerts go).
    Default: :attr:`name`."""


def _validate(props: EndpointPickerProps) -> None:
    owner = f"EndpointPicker {props.name!r}"
    unknown_fields = sorted(set(props.engine_config) - ENGINE_CONFIG_FIELDS)
    if unknown_fields:  # the picker would drop them silently and read its defaults
        valid = ", ".join(sorted(ENGINE_CONFIG_FIELDS))
        raise check.PropError(f"{owner}: engine_config {unknown_fields} — valid: {valid}")
    check.dns_label(owner, "name", props.name)
    check.dns_label(owner, "namespace", props.namespace)
    check.pinned_image(owner, "picker_image", props.picker_image)
    check.pinned_image(owner, "envoy_image", props.envoy_image)
    check.quantities(owner, "resources", {"cpu": props.cpu, "memory": props.memory, "memory_limit": props.memory_limit})
    if not props.pool_selector:
        raise check.PropError(f"{owner}: pool_selector is empty — it would select every pod of the namespace")
    unknown = sorted(set(props.scorers) - set(SCORERS))
    if unknown:
        raise check.PropError(f"{owner}: scorers {unknown} — valid: {', '.join(SCORERS)}")
    if not any(weight > 0 for weight in props.scorers.values()):
        raise check.PropError(f"{owner}: every scorer weight is 0 — give one a weight above 0")
    if not 1 <= props.replicas <= 3:
        raise check.PropError(f"{owner}: replicas {props.replicas} — 1 to 3")
    if not 1 <= props.target_port <= 65535 or props.target_port in (ROUTER_PORT, ENVOY_READY_PORT):
        raise check.PropError(f"{owner}: target_port {props.target_port} — a port of the serving pods")


def picker_config(props: EndpointPickerProps) -> dict[str, Any]:
    """The picker's ``EndpointPickerConfig`` (strictly decoded by the picker: only its API's fields)."""
    weighted = [(plugin, weight) for plugin, weight in props.scorers.items() if weight > 0]
    extractor = {"defaultEngine": props.engine, "engineConfigs": [dict(props.engine_config)]}
    return {
        "apiVersion": EPP_CONFIG_API,
        "kind": "EndpointPickerConfig",
        "plugins": [
            *({"type": plugin} for plugin, _ in weighted),
            {
                "type": "metrics-data-source",
                "parameters": {"scheme": "http", "path": "/metrics", "insecureSkipVerify": True},
            },
            {"type": "core-metrics-extractor", "parameters": extractor},
        ],
        "schedulingProfiles": [
            {"name": "default", "plugins": [{"pluginRef": plugin, "weight": weight} for plugin, weight in weighted]}
        ],
    }


def envoy_config() -> dict[str, Any]:
    """Envoy's bootstrap: the readiness listener (``/ready``, ``/stats/prometheus``), the request listener whose
    ``ext_proc`` filter asks the picker (TLS over loopback, full-duplex streamed bodies) and routes to the
    destination the picker sets (``ORIGINAL_DST`` by header), and the admin listener on loopback — the v1.5.0
    standalone chart's ``envoy.yaml`` with access logs to stdout for requests the picker found no endpoint for."""
    router = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"
    manager = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
    file_log = "type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog"
    thresholds = {"max_connections": 40000, "max_pending_requests": 40000, "max_requests": 40000}
    ready = {
        "name": "envoy-ready",
        "address": {"socket_address": {"address": "0.0.0.0", "port_value": ENVOY_READY_PORT}},  # noqa: S104
        "filter_chains": [
            {
                "filters": [
                    {
                        "name": "envoy.filters.network.http_connection_manager",
                        "typed_config": {
                            "@type": manager,
                            "stat_prefix": "envoy-ready-http",
                            "route_config": {
                                "name": "local_route",
                                "virtual_hosts": [
                                    {
                                        "name": "prometheus_stats",
                                        "domains": ["*"],
                                        "routes": [
                                            {
                                                "match": {"prefix": "/stats/prometheus"},
                                                "route": {"cluster": "prometheus_stats"},
                                            }
                                        ],
                                    }
                                ],
                            },
                            "http_filters": [
                                {
                                    "name": "envoy.filters.http.health_check",
                                    "typed_config": {
                                        "@type": "type.googleapis.com/envoy.extensions.filters.http.health_check.v3."
                                        "HealthCheck",
                                        "pass_through_mode": False,
                                        "headers": [{"name": ":path", "string_match": {"exact": "/ready"}}],
                                    },
                                },
                                {"name": "envoy.filters.http.router", "typed_config": {"@type": router}},
                            ],
                        },
                    }
                ]
            }
        ],
    }
    requests = {
        "name": "requests",
        "address": {"socket_address": {"address": "0.0.0.0", "port_value": ROUTER_PORT}},  # noqa: S104
        "per_connection_buffer_limit_bytes": 32768,
        "access_log": [
            {
                "name": "envoy.access_loggers.file",
                "filter": {"response_flag_filter": {"flags": ["NR"]}},
                "typed_config": {"@type": file_log, "path": "/dev/stdout"},
            }
        ],
        "filter_chains": [
            {
                "name": "requests",
                "filters": [
                    {
                        "name": "envoy.filters.network.http_connection_manager",
                        "typed_config": {
                            "@type": manager,
                            "stat_prefix": f"http-{ROUTER_PORT}",
                            "route_config": {
                                "name": "requests",
                                "virtual_hosts": [
                                    {
                                        "name": "default",
                                        "domains": ["*"],
                                        "routes": [
                                            {
                                                "match": {"prefix": "/"},
                                                "route": {
                                                    "cluster": "original_destination_cluster",
                                                    "timeout": "86400s",
                                                    "idle_timeout": "86400s",
                                                    "upgrade_configs": [{"upgrade_type": "websocket"}],
                                                },
                                                "typed_per_filter_config": {
                                                    "envoy.filters.http.ext_proc": {
                                                        "@type": "type.googleapis.com/envoy.config.route.v3."
                                                        "FilterConfig",
                                                        "config": {},
                                                    }
                                                },
                                            }
                                        ],
                                    }
                                ],
                            },
                            "http_filters": [
                                {
                                    "name": "envoy.filters.http.ext_proc",
                                    "typed_config": {
                                        "@type": "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3."
                                        "ExternalProcessor",
                                        "grpc_service": {
                                            "envoy_grpc": {
                                                "cluster_name": "ext_proc",
                                                "authority": f"localhost:{EPP_GRPC_PORT}",
                                            },
                                            "timeout": "10s",
                                        },
                                        "processing_mode": {
                                            "request_header_mode": "SEND",
                                            "response_header_mode": "SEND",
                                            "request_body_mode": "FULL_DUPLEX_STREAMED",
                                            "response_body_mode": "FULL_DUPLEX_STREAMED",
                                            "request_trailer_mode": "SEND",
                                            "response_trailer_mode": "SEND",
                                        },
                                        "message_timeout": "1000s",
                                    },
                                },
                                {
                                    "name": "envoy.filters.http.router",
                                    "typed_config": {"@type": router, "suppress_envoy_headers": True},
                                },
                            ],
                            "http2_protocol_options": {
                                "max_concurrent_streams": 100,
                                "initial_stream_window_size": 65536,
                                "initial_connection_window_size": 1048576,
                            },
                            "use_remote_address": True,
                            "normalize_path": True,
                            "merge_slashes": True,
                            "server_header_transformation": "PASS_THROUGH",
                            "common_http_protocol_options": {"headers_with_underscores_action": "REJECT_REQUEST"},
                            "path_with_escaped_slashes_action": "UNESCAPE_AND_REDIRECT",
                        },
                    }
                ],
            }
        ],
    }

    def static(name: str, port: int) -> dict[str, Any]:
        endpoint = {"endpoint": {"address": {"socket_address": {"address": "127.0.0.1", "port_value": port}}}}
        return {"cluster_name": name, "endpoints": [{"lb_endpoints": [endpoint]}]}

    clusters = [
        {
            "name": "prometheus_stats",
            "type": "STATIC",
            "connect_timeout": "0.250s",
            "load_assignment": static("prometheus_stats", ENVOY_ADMIN_PORT),
        },
        {
            "name": "original_destination_cluster",
            "type": "ORIGINAL_DST",
            "connect_timeout": "1000s",
            "lb_policy": "CLUSTER_PROVIDED",
            "circuit_breakers": {"thresholds": [thresholds]},
            "original_dst_lb_config": {"use_http_header": True, "http_header_name": DESTINATION_HEADER},
        },
        {
            "name": "ext_proc",
            "type": "STATIC",
            "connect_timeout": "86400s",
            "lb_policy": "LEAST_REQUEST",
            "circuit_breakers": {"thresholds": [{**thresholds, "max_retries": 1024}]},
            "health_checks": [
                {
                    "timeout": "2s",
                    "interval": "10s",
                    "unhealthy_threshold": 3,
                    "healthy_threshold": 2,
                    "reuse_connection": True,
                    "grpc_health_check": {"service_name": "envoy.service.ext_proc.v3.ExternalProcessor"},
                    "tls_options": {"alpn_protocols": ["h2"]},
                }
            ],
            "transport_socket": {  # the picker serves a self-signed certificate (--secure-serving, default on)
                "name": "envoy.transport_sockets.tls",
                "typed_config": {
                    "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
                    "common_tls_context": {"validation_context": {}},
                },
            },
            "typed_extension_protocol_options": {
                "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
                    "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
                    "explicit_http_config": {
                        "http2_protocol_options": {
                            "initial_stream_window_size": 65536,
                            "initial_connection_window_size": 1048576,
                        }
                    },
                },
            },
            "load_assignment": static("ext_proc", EPP_GRPC_PORT),
        },
    ]
    return {
        "admin": {
            "address": {"socket_address": {"address": "127.0.0.1", "port_value": ENVOY_ADMIN_PORT}},
            "access_log": [
                {"name": "envoy.access_loggers.file", "typed_config": {"@type": file_log, "path": "/dev/null"}}
            ],
        },
        "static_resources": {"listeners": [ready, requests], "clusters": clusters},
    }


#: Envoy's command line: the chart's, logging at ``info``.
ENVOY_ARGS = [
    "--service-node", "envoy-sidecar",
    "--log-level", "info",
    "--cpuset-threads",
    "--drain-strategy", "immediate",
    "--drain-time-s", "60",
    "-c", f"{ENVOY_DIR}/{ENVOY_FILE}",
]  # fmt: skip


def picker_args(props: EndpointPickerProps) -> list[str]:
    """The picker's command line: the chart's for an InferencePool (its log level, 2, left as it is), with the
    gRPC health service on the ext_proc port for Envoy's health check (``--health-checking``), tracing and pprof
    off, and metrics without a token."""
    args = [
        "--pool-name", props.name,
        "--pool-namespace", props.namespace,
        "--pool-group", POOL_GROUP,
        "--zap-encoder", "json",
        "--config-file", f"{CONFIG_DIR}/{CONFIG_FILE}",
        "--health-checking",
        "--tracing=false",
        "--enable-pprof=false",
        "--metrics-endpoint-auth=false",
    ]  # fmt: skip
    if props.replicas > 1:
        args.append("--ha-enable-leader-election")
    return args


def router_alerts(props: EndpointPickerProps) -> list[dict[str, Any]]:
    """The router's alerts: its picker reads no replica (none ready, or their metrics unreachable — requests fail),
    or it exports nothing (down, or not scraped)."""
    series = f'{READY_PODS}{{namespace="{props.namespace}", name="{props.name}"}}'
    workload = props.workload or props.name
    labels = {"severity": "warning", "inferstack_workload": workload, "namespace": props.namespace}
    return [
        {
            "alert": "InferstackRouterNoReplica",
            "expr": f"max({series}) == 0",
            "for": "5m",
            "labels": labels,
            "annotations": {
                "summary": f"{workload}: the router {props.name} reads no replica's metrics — its requests fail; "
                "check the serving pods are ready and reachable on their port"
            },
        },
        {
            "alert": "InferstackRouterAbsent",
            "expr": f"absent({series})",
            "for": "10m",
            "labels": labels,
            "annotations": {
                "summary": f"{workload}: the router {props.name} exports no metrics (down, or not scraped)"
            },
        },
    ]


def _restricted() -> k8s.SecurityContext:
    return k8s.SecurityContext(
        run_as_non_root=True,
        run_as_user=ROUTER_UID,
        run_as_group=ROUTER_UID,
        allow_privilege_escalation=False,
        read_only_root_filesystem=True,
        capabilities=k8s.Capabilities(drop=["ALL"]),
    )


class EndpointPicker(Construct):
    """ServiceAccount, Role(Binding), the picker's and Envoy's ConfigMaps, the router Deployment and Service, the
    InferencePool (+ PodMonitor)."""

    def __init__(self, scope: Construct, construct_id: str, props: EndpointPickerProps) -> None:
        super().__init__(scope, construct_id)
        _validate(props)
        self.props = props
        name, namespace = props.name, props.namespace
        labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "inferstack"}
        pods = {"app.kubernetes.io/name": name, "app.kubernetes.io/component": "router"}
        meta = k8s.ObjectMeta(name=name, namespace=namespace, labels=labels)
        # the picker watches pods and its InferencePool through the API server: its token is mounted
        k8s.KubeServiceAccount(self, "sa", metadata=meta)
        read = ["get", "watch", "list"]
        rules = [
            k8s.PolicyRule(api_groups=[""], resources=["pods"], verbs=read),
            k8s.PolicyRule(api_groups=[POOL_GROUP], resources=["inferencepools"], verbs=read),
            # started only when discovery finds their CRDs (pkg/epp/server/controller_config.go)
            k8s.PolicyRule(
                api_groups=["inference.networking.x-k8s.io"],
                resources=["inferenceobjectives", "inferencemodelrewrites"],
                verbs=read,
            ),
        ]
        if props.replicas > 1:
            rules += [
                k8s.PolicyRule(
                    api_groups=["coordination.k8s.io"],
                    resources=["leases"],
                    verbs=["get", "list", "watch", "create", "update", "patch", "delete"],
                ),
                k8s.PolicyRule(api_groups=[""], resources=["events"], verbs=["create", "patch"]),
            ]
        k8s.KubeRole(self, "role", metadata=meta, rules=rules)
        k8s.KubeRoleBinding(
            self,
            "role-binding",
            metadata=meta,
            role_ref=k8s.RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name=name),
            subjects=[k8s.Subject(kind="ServiceAccount", name=name, namespace=namespace)],
        )
        k8s.KubeConfigMap(
            self,
            "config",
            metadata=k8s.ObjectMeta(name=f"{name}-config", namespace=namespace, labels=labels),
            data={CONFIG_FILE: yaml.safe_dump(picker_config(props), sort_keys=False)},
        )
        k8s.KubeConfigMap(
            self,
            "envoy",
            metadata=k8s.ObjectMeta(name=f"{name}-envoy", namespace=namespace, labels=labels),
            data={ENVOY_FILE: yaml.safe_dump(envoy_config(), sort_keys=False)},
        )
        self.deployment = self._deployment(props, labels, pods)
        self.service = k8s.KubeService(
            self,
            "service",
            metadata=meta,
            spec=k8s.ServiceSpec(
                selector=pods,
                ports=[
                    k8s.ServicePort(name="http", port=ROUTER_PORT, target_port=k8s.IntOrString.from_string("http")),
                    # what a Gateway would call (endpointPickerRef); the NetworkPolicy admits no one to it
                    k8s.ServicePort(
                        name="grpc-ext-proc", port=EPP_GRPC_PORT, target_port=k8s.IntOrString.from_string("grpc")
                    ),
                    k8s.ServicePort(
                        name="http-metrics", port=EPP_METRICS_PORT, target_port=k8s.IntOrString.from_string("metrics")
                    ),
                ],
            ),
        )
        self.pool = CustomResource(
            self,
            "pool",
            manifest={
                "apiVersion": POOL_API,
                "kind": "InferencePool",
                "metadata": {"name": name, "namespace": namespace, "labels": labels},
                "spec": {
                    "selector": {"matchLabels": dict(props.pool_selector)},
                    "targetPorts": [{"number": props.target_port}],
                    "endpointPickerRef": {"name": name, "port": {"number": EPP_GRPC_PORT}},
                },
            },
        )
        if props.monitoring:
            selector = {"matchLabels": pods}
            pod_monitor(
                self, "pod-monitor", name=name, namespace=namespace, labels=labels, selector=selector, port="metrics"
            )
            groups = [{"name": f"inferstack-{name}", "rules": router_alerts(props)}]
            check_rule_groups(f"PrometheusRule {namespace}/{name}", groups)
            rule = CustomResource(
                self,
                "alerts",
                manifest={
                    "apiVersion": "monitoring.coreos.com/v1",
                    "kind": "PrometheusRule",
                    "metadata": {"name": name, "namespace": namespace, "labels": labels},
                    "spec": {"groups": groups},
                },
            )
            problems = prometheus_rule_problems(rule.to_json())
            if problems:
                raise check.PropError(f"EndpointPicker {name!r}: " + "; ".join(problems))

    def _deployment(
        self, props: EndpointPickerProps, labels: Mapping[str, str], pods: Mapping[str, str]
    ) -> k8s.KubeDeployment:
        single = props.replicas == 1
        health = "inference-extension" if single else None
        envoy = k8s.Container(
            name="envoy",
            image=props.envoy_image,
            command=["envoy"],
            args=ENVOY_ARGS,
            ports=[
                k8s.ContainerPort(name="http", container_port=ROUTER_PORT),
                k8s.ContainerPort(name="envoy-ready", container_port=ENVOY_READY_PORT),
            ],
            readiness_probe=k8s.Probe(
                http_get=k8s.HttpGetAction(path="/ready", port=k8s.IntOrString.from_number(ENVOY_READY_PORT)),
                period_seconds=5,
                failure_threshold=1,
                timeout_seconds=1,
            ),
            # not in the chart: a hung proxy is restarted (three missed checks, 30 s)
            liveness_probe=k8s.Probe(
                http_get=k8s.HttpGetAction(path="/ready", port=k8s.IntOrString.from_number(ENVOY_READY_PORT)),
                period_seconds=10,
                failure_threshold=3,
                timeout_seconds=1,
            ),
            resources=k8s.ResourceRequirements(
                requests={
                    "cpu": k8s.Quantity.from_string(f"{round(ENVOY_CPU * 1000)}m"),
                    "memory": k8s.Quantity.from_string(f"{round(ENVOY_MEMORY_GIB * 1024)}Mi"),
                },
                limits={"memory": k8s.Quantity.from_string(f"{round(ENVOY_MEMORY_LIMIT_GIB * 1024)}Mi")},
            ),
            security_context=_restricted(),
            volume_mounts=[k8s.VolumeMount(name="envoy", mount_path=ENVOY_DIR, read_only=True)],
        )
        picker = k8s.Container(
            name="epp",
            image=props.picker_image,
            args=picker_args(props),
            ports=[
                k8s.ContainerPort(name="grpc", container_port=EPP_GRPC_PORT),
                k8s.ContainerPort(name="grpc-health", container_port=EPP_HEALTH_PORT),
                k8s.ContainerPort(name="metrics", container_port=EPP_METRICS_PORT),
            ],
            liveness_probe=k8s.Probe(
                grpc=k8s.GrpcAction(port=EPP_HEALTH_PORT, service=health or "liveness"),
                initial_delay_seconds=5,
                period_seconds=10,
            ),
            readiness_probe=k8s.Probe(
                grpc=k8s.GrpcAction(port=EPP_HEALTH_PORT, service=health or "readiness"), period_seconds=2
            ),
            env=[
                k8s.EnvVar(
                    name="NAMESPACE",
                    value_from=k8s.EnvVarSource(field_ref=k8s.ObjectFieldSelector(field_path="metadata.namespace")),
                ),
                k8s.EnvVar(
                    name="POD_NAME",
                    value_from=k8s.EnvVarSource(field_ref=k8s.ObjectFieldSelector(field_path="metadata.name")),
                ),
            ],
            resources=k8s.ResourceRequirements(
                requests={"cpu": k8s.Quantity.from_string(props.cpu), "memory": k8s.Quantity.from_string(props.memory)},
                limits={"memory": k8s.Quantity.from_string(props.memory_limit)},
            ),
            security_context=_restricted(),
            volume_mounts=[k8s.VolumeMount(name="config", mount_path=CONFIG_DIR, read_only=True)],
        )
        return k8s.KubeDeployment(
            self,
            "deployment",
            metadata=k8s.ObjectMeta(name=props.name, namespace=props.namespace, labels=dict(labels)),
            spec=k8s.DeploymentSpec(
                replicas=props.replicas,
                # one active picker (its prefix table is in memory), and only the leader is ready: a rolling update
                # could never make a new (standby) pod ready, so the old ones go first (the chart's reason); for the
                # same reason no PodDisruptionBudget — it would count the standbys unhealthy and block every drain
                strategy=k8s.DeploymentStrategy(type="Recreate"),
                selector=k8s.LabelSelector(match_labels=dict(pods)),
                template=k8s.PodTemplateSpec(
                    # the workload's only way in: Karpenter does not move it to consolidate a node (a PDB cannot
                    # protect it, see above; drift and expiry still replace it after the pool's grace period)
                    metadata=k8s.ObjectMeta(labels={**labels, **pods}, annotations={DO_NOT_DISRUPT: "true"}),
                    spec=k8s.PodSpec(
                        service_account_name=props.name,
                        termination_grace_period_seconds=TERMINATION_GRACE_SECONDS,
                        **props.placement.pod_spec_kwargs(),
                        security_context=k8s.PodSecurityContext(
                            run_as_non_root=True,
                            run_as_user=ROUTER_UID,
                            run_as_group=ROUTER_UID,
                            seccomp_profile=k8s.SeccompProfile(type="RuntimeDefault"),
                        ),
                        containers=[envoy, picker],
                        volumes=[
                            k8s.Volume(
                                name="envoy",
                                config_map=k8s.ConfigMapVolumeSource(
                                    name=f"{props.name}-envoy", items=[k8s.KeyToPath(key=ENVOY_FILE, path=ENVOY_FILE)]
                                ),
                            ),
                            k8s.Volume(
                                name="config",
                                config_map=k8s.ConfigMapVolumeSource(
                                    name=f"{props.name}-config",
                                    items=[k8s.KeyToPath(key=CONFIG_FILE, path=CONFIG_FILE)],
                                ),
                            ),
                        ],
                    ),
                ),
            ),
        )
