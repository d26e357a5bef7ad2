"""Facts of the request router ``workloads[].routing`` deploys: the Gateway API inference extension's endpoint picker
(EPP) v1.5.0 with an Envoy proxy beside it in one pod — the extension's ``standalone`` layout, which needs no
Gateway API implementation on the cluster — and the ``InferencePool`` (``inference.networking.k8s.io/v1``) it
serves.

Read at kubernetes-sigs/gateway-api-inference-extension tag v1.5.0 (``df9f8909``):

* ``config/charts/standalone/values.yaml``: the Envoy listener on 8081 whose ``ext_proc`` filter asks the picker on
  ``127.0.0.1:9002`` (TLS: the picker serves a self-signed certificate, ``--secure-serving`` defaults on) and routes
  to the ``ORIGINAL_DST`` cluster by the ``x-gateway-destination-endpoint`` header the picker sets; ``/ready`` on
  19001; the admin listener on 127.0.0.1:19000;
* ``config/charts/epplib/templates/``: the picker's flags (``--pool-name``, ``--pool-namespace``, ``--pool-group``,
  ``--config-file``, ``--ha-enable-leader-election`` above one replica), its ports (gRPC 9002, gRPC health 9003,
  metrics 9090), probes (gRPC health service ``inference-extension``; ``liveness``/``readiness`` with leader
  election), RBAC (pods; InferencePools, InferenceObjectives, InferenceModelRewrites; leases and events with leader
  election), resources (4 CPU, 8 GiB requested, 16 GiB memory limit: the chart's "validated with scale testing"
  defaults) and the ``EndpointPickerConfig`` (queue 2, KV-cache utilization 2, prefix cache 3);
* ``pkg/epp/server/options.go``: defaults (tracing and pprof on, metrics behind Kubernetes authentication);
* ``pkg/epp/server/controller_config.go``: InferenceObjective/InferenceModelRewrite reconcilers start only when
  discovery finds those CRDs, so the InferencePool CRD is the only one the picker needs;
* ``pkg/epp/framework/plugins/datalayer/extractor/metrics/factories.go`` and ``extractor.go``: the
  ``core-metrics-extractor`` reads per engine a queue, running, KV-usage, LoRA and cache-size metric; a metric the
  server does not export fails that extraction at every scrape (logged when the state changes:
  ``pkg/epp/datalayer/collector.go``), and without the cache-size metrics ``scheduling/scorer/prefix`` cannot size
  its prefix blocks from the server's (``autoTune``) — so each engine's specs below name what the pinned server
  exports; plugin parameters are decoded leniently (a misspelled key is dropped, not refused), so the keys are
  pinned in :data:`ENGINE_CONFIG_FIELDS`;
* ``pkg/epp/server/runserver.go``: ``--health-checking`` registers the gRPC health service on the ext_proc port,
  which Envoy's ext_proc cluster health-checks (without it the one host is unhealthy and Envoy routes in panic
  mode).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

#: The Envoy listener clients send OpenAI requests to.
ROUTER_PORT = 8081
#: Envoy's readiness listener (``/ready``) and its admin listener (loopback only).
ENVOY_READY_PORT, ENVOY_ADMIN_PORT = 19001, 19000
#: The picker's ext_proc gRPC port (Envoy calls it over loopback), its gRPC health port and its metrics port.
EPP_GRPC_PORT, EPP_HEALTH_PORT, EPP_METRICS_PORT = 9002, 9003, 9090
#: The header the picker sets to the chosen ``<pod IP>:<port>``; Envoy's ORIGINAL_DST cluster connects there.
DESTINATION_HEADER = "x-gateway-destination-endpoint"
#: The picker's config API (``EndpointPickerConfig``).
EPP_CONFIG_API = "inference.networking.x-k8s.io/v1alpha1"
#: The InferencePool API the picker watches (``--pool-group``).
POOL_GROUP = "inference.networking.k8s.io"
POOL_API = f"{POOL_GROUP}/v1"
#: The run-as user of both images (distroless ``nonroot``).
ROUTER_UID = 65532
#: The Envoy sidecar's requests in the standalone chart, vCPU and GiB (no limits there; inferstack limits its
#: memory to :data:`ENVOY_MEMORY_LIMIT_GIB`: streamed bodies are buffered per connection, 32 KiB each).
ENVOY_CPU, ENVOY_MEMORY_GIB, ENVOY_MEMORY_LIMIT_GIB = 0.1, 0.5, 1.0
#: The picker's gauge of the pool's pods with fresh metrics (scraped within the staleness threshold, 2 s), label
#: ``name`` = the pool (``pkg/epp/metrics/metrics.go`` ``inference_pool`` subsystem, ``poolLabels``; set by
#: ``pkg/epp/datalayer/logger/logger.go`` ``refreshPrometheusMetrics``): 0 while it cannot read any replica —
#: none ready, or their metrics port unreachable from the router.
READY_PODS = "inference_pool_ready_pods"
#: The JSON field names of an ``engineConfigs`` entry (``engineConfigParams`` in ``extractor/metrics/factories.go``).
ENGINE_CONFIG_FIELDS = frozenset(
    {
        "name",
        "queuedRequestsSpec",
        "runningRequestsSpec",
        "kvUsageSpec",
        "loraSpec",
        "cacheInfoSpec",
        "cacheBlockSizeLabelName",
        "cacheNumBlocksLabelName",
        "cacheBlockSizeSpec",
        "cacheNumBlocksSpec",
    }
)


@dataclass(frozen=True)
class EngineMetricSpecs:
    """What the picker reads from one engine's ``/metrics`` (an ``engineConfigs`` entry of the
    ``core-metrics-extractor``): ``""`` turns a spec off."""

    name: str
    """The engine's name in the picker's config (``vllm``, ``sglang``)."""
    queued: str
    running: str
    kv_usage: str
    lora: str = ""
    """Read only where the server runs LoRA adapters (vLLM exports it with ``--enable-lora`` only)."""
    cache_info: str = ""
    """An info gauge whose labels give the KV block size and block count."""
    cache_block_size: str = ""
    cache_num_blocks: str = ""
    """Gauges of the block size and count, for servers without an info gauge."""

    def engine_config(self, *, lora: bool) -> dict[str, Any]:
        """The ``engineConfigs`` entry (JSON field names of the extractor's ``engineConfigParams``)."""
        entry: dict[str, Any] = {
            "name": self.name,
            "queuedRequestsSpec": self.queued,
            "runningRequestsSpec": self.running,
            "kvUsageSpec": self.kv_usage,
            "loraSpec": self.lora if lora else "",
            "cacheInfoSpec": self.cache_info,
        }
        if self.cache_block_size:
            entry["cacheBlockSizeSpec"] = self.cache_block_size
        if self.cache_num_blocks:
            entry["cacheNumBlocksSpec"] = self.cache_num_blocks
        return entry


#: Per engine, the metrics its pinned server exports (the picker's own vLLM defaults, and SGLang's without the
#: ``sglang:cache_config_info`` the picker's SGLang defaults name).
#:
#: * vLLM: ``vllm:num_requests_waiting``, ``vllm:num_requests_running``, ``vllm:kv_cache_usage_perc`` and
#:   ``vllm:cache_config_info`` (labels ``block_size``, ``num_gpu_blocks``) in ``vllm/v1/metrics/loggers.py`` of the
#:   0.19.0 and 0.31.0 wheels; ``vllm:lora_requests_info`` only when LoRA is on (``vllm_config.lora_config``). The
#:   Neuron image's vLLM 0.16 keeps vLLM's V1 scheduler and metrics; the plugin's KV usage is not confirmed offline (?).
#: * SGLang 0.5.19 (``srt/observability/metrics_collector.py`` of the wheel, exported with ``--enable-metrics``):
#:   ``sglang:num_queue_reqs``, ``sglang:num_running_reqs``, ``sglang:token_usage``, and the constants
#:   ``sglang:page_size`` / ``sglang:num_pages`` (``emit_constants``) — no ``sglang:cache_config_info``, no LoRA info.
ENGINE_METRICS: dict[str, EngineMetricSpecs] = {
    "vllm": EngineMetricSpecs(
        name="vllm",
        queued="vllm:num_requests_waiting",
        running="vllm:num_requests_running",
        kv_usage="vllm:kv_cache_usage_perc",
        lora="vllm:lora_requests_info",
        cache_info="vllm:cache_config_info",
    ),
    "sglang": EngineMetricSpecs(
        name="sglang",
        queued="sglang:num_queue_reqs",
        running="sglang:num_running_reqs",
        kv_usage="sglang:token_usage",
        cache_block_size="sglang:page_size",
        cache_num_blocks="sglang:num_pages",
    ),
}

_MANIFESTS = resources.files("inferstack.catalog").joinpath("crd_manifests")
#: The InferencePool CRD inferstack installs (v1.6.0, the vendored schema; v1.5.0's differs only in requiring
#: ``endpointPickerRef``, which inferstack always sets). See ``crd_manifests/PROVENANCE.md``.
INFERENCE_POOL_CRD_FILE = "inference.networking.k8s.io_inferencepools.yaml"
#: Its name, and the annotation upstream stamps its release on.
INFERENCE_POOL_CRD_NAME = "inferencepools.inference.networking.k8s.io"
INFERENCE_POOL_BUNDLE_ANNOTATION = "inference.networking.k8s.io/bundle-version"
#: The label inferstack puts on the CRD it applies (upstream's file carries none), so a cluster's own is told apart.
APPLIED_BY_LABEL, APPLIED_BY = "app.kubernetes.io/part-of", "inferstack"


@cache
def inference_pool_crd() -> dict[str, Any]:
    """The InferencePool CustomResourceDefinition, as upstream ships it."""
    loaded = yaml.safe_load(_MANIFESTS.joinpath(INFERENCE_POOL_CRD_FILE).read_text())
    assert isinstance(loaded, dict)
    return loaded
