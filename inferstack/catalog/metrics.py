"""The Prometheus series each pinned engine exports that inferstack's dashboards and alerts use, read from each
engine's source at (or next to) the pinned version. A dashboard panel or an alert may only use these (tested).

Conventions (prometheus_client): a counter ``X`` is exposed as ``X_total``, a histogram ``X`` as ``X_bucket``,
``X_sum`` and ``X_count``. Names below are as exposed (counters with ``_total``), histograms by their base name.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Suffixes a histogram's base name is exposed with.
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


@dataclass(frozen=True)
class EngineMetrics:
    """The series one engine release exports, and which of them answer the serving questions."""

    engine: str
    release: str
    source: str
    gauges: frozenset[str]
    counters: frozenset[str]
    """As exposed (with ``_total``)."""
    histograms: frozenset[str]
    """Base names."""
    ttft: str | None = None
    """Time-to-first-token histogram (seconds)."""
    inter_token: str | None = None
    """Inter-token latency histogram (seconds)."""
    e2e: str | None = None
    kv_usage: str | None = None
    """KV cache usage gauge, a 0–1 fraction."""
    queue: str | None = None
    running: str | None = None
    prompt_tokens: str | None = None
    generation_tokens: str | None = None
    requests: str | None = None
    """Finished requests counter."""
    request_label: str | None = None
    """The label of ``requests`` that says how a request finished."""

    def series(self) -> frozenset[str]:
        """Every exposed series name."""
        expanded = {f"{base}{suffix}" for base in self.histograms for suffix in HISTOGRAM_SUFFIXES}
        return frozenset(self.gauges | self.counters | expanded)


def _vllm_like(prefix: str, engine: str, release: str, source: str) -> EngineMetrics:
    def name(base: str) -> str:
        return f"{prefix}{base}"

    return EngineMetrics(
        engine=engine,
        release=release,
        source=source,
        gauges=frozenset(name(n) for n in ("num_requests_running", "num_requests_waiting", "kv_cache_usage_perc")),
        counters=frozenset(
            name(f"{n}_total")
            for n in (
                "prompt_tokens",
                "generation_tokens",
                "request_success",
                "num_preemptions",
                "prefix_cache_queries",
                "prefix_cache_hits",
            )
        ),
        histograms=frozenset(
            name(n)
            for n in (
                "time_to_first_token_seconds",
                "inter_token_latency_seconds",
                "e2e_request_latency_seconds",
                "request_queue_time_seconds",
            )
        ),
        ttft=name("time_to_first_token_seconds"),
        inter_token=name("inter_token_latency_seconds"),
        e2e=name("e2e_request_latency_seconds"),
        kv_usage=name("kv_cache_usage_perc"),
        queue=name("num_requests_waiting"),
        running=name("num_requests_running"),
        prompt_tokens=name("prompt_tokens_total"),
        generation_tokens=name("generation_tokens_total"),
        requests=name("request_success_total"),
        request_label="finished_reason",
    )


#: vLLM's ``PrometheusStatLogger`` (vllm/v1/metrics/loggers.py): the same names at 0.19.0 (commit 2a69949b) and in
#: the 0.33.0 wheel; ``inter_token_latency_seconds`` since 0.11.0 (PR 24110), ``kv_cache_usage_perc`` since 0.9.2
#: (the old ``gpu_cache_usage_perc`` is gone, PR 29330). 0.31.0 (the pinned DLC) sits between two releases read; its
#: own file was not (?). Labels: ``model_name``, ``engine``; ``finished_reason`` on ``request_success``.
VLLM = _vllm_like(
    "vllm:",
    "vllm",
    "0.19.0–0.33.0",
    "vllm/v1/metrics/loggers.py at 0.19.0 (2a69949b) and in the 0.33.0 wheel",
)
#: Ray Serve LLM re-exports vLLM's metrics through ``ray.util.metrics``: ``vllm:x`` → ``ray_vllm_x``, counters
#: ``_total``, plus a ``ReplicaId`` label (Ray 2.52.0 wheel: serve/engines/vllm/vllm_engine.py passes
#: vllm.v1.metrics.ray_wrappers.RayPrometheusStatLogger; ``log_engine_metrics`` defaults to True). Scraped on the
#: Ray metrics port 8080. Read at Ray 2.52; the pinned 2.58 was not re-read (?).
RAY_VLLM = _vllm_like("ray_vllm_", "ray-serve-llm", "2.52.0", "Ray 2.52.0 wheel + vllm ray_wrappers.py")
#: SGLang's queue depth: the gauge ``sglang:num_queue_reqs`` ("The number of requests in the waiting queue."), exported
#: with ``--enable-metrics`` on the serving port's ``/metrics`` — read in the sglang 0.5.19 wheel from PyPI
#: (``sglang-0.5.19-cp311-cp311-manylinux_2_34_x86_64.whl``, ``srt/observability/metrics_collector.py:283-288``).
SGLANG_QUEUE = "sglang:num_queue_reqs"
#: TGI's queue depth: the gauge ``tgi_queue_size`` ("Current queue size", set from the queue's length), served on the
#: router's ``/metrics`` of the main port — read at huggingface/text-generation-inference v3.3.7
#: (``backends/v3/src/queue.rs:143,158``, ``router/src/server.rs:2047,2243``).
TGI_QUEUE = "tgi_queue_size"
#: NVIDIA NIM for LLMs 1.x on ``/v1/metrics`` (the operator's ServiceMonitor scrapes it on port ``api``):
#: unprefixed names, ``gpu_cache_usage_perc`` for KV use, ``time_per_output_token_seconds`` for inter-token latency
#: (docs.nvidia.com/nim/large-language-models, "Observability"). NIM 2.x (vLLM inside) is not confirmed (?).
NIM = EngineMetrics(
    engine="nim",
    release="1.x",
    source="NVIDIA NIM for LLMs 1.x observability docs",
    gauges=frozenset({"gpu_cache_usage_perc", "num_requests_running", "num_requests_waiting"}),
    counters=frozenset({"prompt_tokens_total", "generation_tokens_total", "request_success_total"}),
    histograms=frozenset(
        {"time_to_first_token_seconds", "time_per_output_token_seconds", "e2e_request_latency_seconds"}
    ),
    ttft="time_to_first_token_seconds",
    inter_token="time_per_output_token_seconds",  # noqa: S106 (a metric name)
    e2e="e2e_request_latency_seconds",
    kv_usage="gpu_cache_usage_perc",
    queue="num_requests_waiting",
    running="num_requests_running",
    prompt_tokens="prompt_tokens_total",
    generation_tokens="generation_tokens_total",
    requests="request_success_total",
)
#: The DCGM exporter of gpu-operator v26.7.0 (dcgm-exporter 4.6.0-4.8.3, collectors
#: ``dcp-metrics-included.csv``; read at dcgm-exporter 4.5.3-4.8.2, the file unchanged since 2025-12 — 4.8.3 itself
#: not read (?)). ``DCGM_FI_DEV_GPU_UTIL`` is 0–100 %, ``DCGM_FI_PROF_*`` 0–1 ratios, ``FB_*`` MiB, power W. The
#: operator's ServiceMonitor keeps ``honorLabels: false``, so the GPU's pod arrives as ``exported_pod`` /
#: ``exported_namespace``.
DCGM = EngineMetrics(
    engine="dcgm",
    release="4.8.3",
    source="dcgm-exporter etc/dcp-metrics-included.csv (4.5.3-4.8.2)",
    gauges=frozenset(
        {
            "DCGM_FI_DEV_GPU_UTIL",
            "DCGM_FI_DEV_FB_USED",
            "DCGM_FI_DEV_FB_FREE",
            "DCGM_FI_DEV_POWER_USAGE",
            "DCGM_FI_DEV_GPU_TEMP",
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
            "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        }
    ),
    counters=frozenset(),
    histograms=frozenset(),
)
#: kube-state-metrics v2.20.0 (kube-prometheus-stack 88.5.3's subchart 8.4.0): ``kube_pod_labels`` carries the
#: allow-listed pod labels as ``label_<sanitized key>`` with ``namespace`` and ``pod`` (docs/metrics/workload/
#: pod-metrics.md; ``--metric-labels-allowlist``). The GPU panels join DCGM's series to a workload's pods with it.
KUBE_STATE_METRICS = EngineMetrics(
    engine="kube-state-metrics",
    release="2.20.0",
    source="kubernetes/kube-state-metrics docs/metrics/workload/pod-metrics.md",
    gauges=frozenset({"kube_pod_labels"}),
    counters=frozenset(),
    histograms=frozenset(),
)
#: Series every GPU panel and alert may read: DCGM's and the pod-label join.
GPU_SERIES = DCGM.series() | KUBE_STATE_METRICS.series()
