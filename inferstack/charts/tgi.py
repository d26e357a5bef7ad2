"""TgiChart: the ``tgi`` kind — Hugging Face TGI 3.3.7's launcher on the shared serving pod: HTTP on 8080 (the
image's ``PORT=80`` needs a capability the pod drops), ``/health`` (503 until warm-up; the port is closed while the
model loads) for probes, ``/metrics`` on the main port. It runs as the image's root user: its Python lives under
``/root/.local`` (Dockerfile at v3.3.7), still without privilege escalation or capabilities."""

from __future__ import annotations

from cdk8s_plus_36 import k8s

from inferstack.catalog.metrics import TGI_QUEUE
from inferstack.charts.engine import autoscaling_props, engine_placement, hub_env, optional_flags
from inferstack.charts.workload import StorageRefs, WorkloadChart
from inferstack.config.tgi import TgiEngineConfig, TgiWorkloadConfig
from inferstack.config.workloads import ModelSourceType
from inferstack.constructs.engine import EngineServer, EngineSpec
from inferstack.constructs.pod import QueueMetric
from inferstack.plan import ResolvedWorkload

PORT = 8080
PROMETHEUS_PORT = 9000
#: The image's data directory (``HF_HOME=/data``): the pod's writable home.
DATA = "/data"
#: What autoscaling scales on: TGI's queue (catalog.metrics.TGI_QUEUE), on the scraped main port.
QUEUE = QueueMetric(prometheus=TGI_QUEUE, pods=TGI_QUEUE)


def tgi_args(engine: TgiEngineConfig) -> list[str]:
    """The typed settings as launcher flags (launcher/src/main.rs at v3.3.7)."""
    args = [
        "--num-shard",
        str(engine.num_shard),
        "--max-total-tokens",
        str(engine.max_total_tokens),
        "--max-concurrent-requests",
        str(engine.max_concurrent_requests),
        "--cuda-memory-fraction",
        f"{engine.cuda_memory_fraction:g}",
    ]
    optional: dict[str, object] = {
        "--max-input-tokens": engine.max_input_tokens,
        "--max-batch-prefill-tokens": engine.max_batch_prefill_tokens,
        "--quantize": engine.quantize.value if engine.quantize else None,
        "--dtype": engine.dtype.value if engine.dtype else None,
        "--kv-cache-dtype": engine.kv_cache_dtype.value if engine.kv_cache_dtype else None,
    }
    args += optional_flags(optional)
    return args


class TgiChart(WorkloadChart):
    """The ``tgi`` kind: storage plumbing, then the TGI Deployment, Service, PDB and PodMonitor."""

    server: EngineServer

    def serve(self, resolved: ResolvedWorkload, refs: StorageRefs) -> None:
        workload = resolved.config
        assert isinstance(workload, TgiWorkloadConfig)
        loading = self.loading
        assert loading is not None
        model = workload.model
        args = ["--model-id", loading.model, "--hostname", "0.0.0.0", "--port", str(PORT)]  # noqa: S104
        args += ["--prometheus-port", str(PROMETHEUS_PORT), *tgi_args(workload.engine)]
        if model.source.type is ModelSourceType.HF:
            args += ["--revision", model.revision]
        spec = EngineSpec(
            component="tgi",
            image=resolved.image,
            command=["/tgi-entrypoint.sh"],
            args=[*args, *workload.engine.extra_args],
            container_name="tgi",
            port=PORT,
            health_path="/health",
            home=DATA,
            user="root",
            env=[*loading.env, *(k8s.EnvVar(name=k, value=v) for k, v in hub_env(model).items())],
            run_as_image_user=True,
            queue_metric=QUEUE,
            recreate=self.caches.recreate,
        )
        self.server = EngineServer(
            self,
            "tgi",
            spec,
            engine_placement(self, resolved, refs),
            owner=f"TgiServer {workload.name!r}",
            autoscaling=autoscaling_props(workload.autoscaling),
        )
