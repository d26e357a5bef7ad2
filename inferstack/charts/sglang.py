"""SglangChart: the ``sglang`` kind — SGLang's ``launch_server`` on the shared serving pod (:class:`~inferstack.
constructs.engine.EngineServer`): OpenAI-compatible and native APIs on 30000, readiness on ``/health`` (503 until
the warm-up generation succeeded; the port is closed while the model loads), liveness on ``/v1/models`` (no
generation under load), ``/metrics`` with ``--enable-metrics``."""

from __future__ import annotations

from cdk8s_plus_36 import k8s

from inferstack.catalog.metrics import SGLANG_QUEUE
from inferstack.charts.engine import autoscaling_props, engine_placement, hub_env, optional_flags
from inferstack.charts.workload import StorageRefs, WorkloadChart
from inferstack.config.sglang import SglangEngineConfig, SglangWorkloadConfig
from inferstack.config.workloads import ModelSourceType
from inferstack.constructs.engine import EngineServer, EngineSpec
from inferstack.constructs.pod import QueueMetric
from inferstack.plan import ResolvedWorkload

PORT = 30000
HOME = "/home/sglang"
#: The serving user's cache root (``~/.cache``): a compile cache is mounted here, not at :data:`SGLANG_CACHE_DIR`
#: itself — the runtime would create the missing ``~/.cache`` for a nested mount owned by root, and what else
#: writes there (Hugging Face's module cache, torch extensions, outlines) would fail for the serving uid.
SGLANG_CACHE_ROOT = f"{HOME}/.cache"
#: ``SGLANG_CACHE_DIR``: SGLang 0.5.19 points Triton, Inductor, DeepGEMM, FlashInfer and CUDA's JIT caches under it
#: when it is imported (``sglang/__init__.py`` → ``environ.redirect_third_party_caches``), and its torch.compile
#: backend keeps its graphs there (``srt/compilation/backend.py``).
SGLANG_CACHE_DIR = f"{SGLANG_CACHE_ROOT}/sglang"
#: What autoscaling scales on: SGLang's waiting requests (needs ``--enable-metrics``, always passed). With priority
#: scheduling the total is the ``priority=""`` series and each priority has its own (metrics_collector.py
#: ``_log_gauge_queue_count``, 0.5.19 wheel): the matcher keeps the sum to the totals (it also matches a series
#: without the label). With pipeline parallelism every stage receives the requests and logs the gauge under its own
#: ``pp_rank`` (request_receiver.py): the first stage's is the queue.
QUEUE = QueueMetric(prometheus=SGLANG_QUEUE, pods=SGLANG_QUEUE.replace(":", "_"), matchers='priority="",pp_rank="0"')


def sglang_args(engine: SglangEngineConfig) -> list[str]:
    """The typed settings as SGLang 0.5.19 flags (srt/server_args.py: ``--tp-size``, not the prefix ``--tp``)."""
    args = [
        "--tp-size",
        str(engine.tensor_parallel_size),
        "--context-length",
        str(engine.context_length),
        "--dtype",
        engine.dtype.value,
        "--kv-cache-dtype",
        engine.kv_cache_dtype.value,
        "--grammar-backend",
        engine.grammar_backend.value,
    ]
    optional: dict[str, object] = {
        "--mem-fraction-static": engine.mem_fraction_static,
        "--max-running-requests": engine.max_running_requests,
        "--chunked-prefill-size": engine.chunked_prefill_size,
        "--quantization": engine.quantization.value if engine.quantization else None,
        "--tool-call-parser": engine.tool_call_parser,
        "--reasoning-parser": engine.reasoning_parser,
    }
    args += optional_flags(optional)
    if engine.disable_radix_cache:
        args.append("--disable-radix-cache")
    return args


class SglangChart(WorkloadChart):
    """The ``sglang`` kind: storage plumbing, then the SGLang Deployment, Service, PDB and PodMonitor."""

    server: EngineServer

    def serve(self, resolved: ResolvedWorkload, refs: StorageRefs) -> None:
        workload = resolved.config
        assert isinstance(workload, SglangWorkloadConfig)
        loading = self.loading
        assert loading is not None
        model = workload.model
        args = ["--model-path", loading.model, "--served-model-name", model.name, "--host", "0.0.0.0"]  # noqa: S104
        args += ["--port", str(PORT), *sglang_args(workload.engine), "--enable-metrics"]
        if model.source.type is ModelSourceType.HF:
            args += ["--revision", model.revision]
        env = {"SGLANG_CACHE_DIR": SGLANG_CACHE_DIR, **hub_env(model)}
        spec = EngineSpec(
            component="sglang",
            image=resolved.image,
            command=["python3", "-m", "sglang.launch_server"],
            args=[*args, *workload.engine.extra_args],
            container_name="sglang",
            port=PORT,
            health_path="/health",
            live_path="/v1/models",
            home=HOME,
            user="sglang",
            env=[*loading.env, *(k8s.EnvVar(name=k, value=v) for k, v in env.items())],
            queue_metric=QUEUE,
            recreate=self.caches.recreate,
        )
        self.server = EngineServer(
            self,
            "sglang",
            spec,
            engine_placement(self, resolved, refs),
            owner=f"SglangServer {workload.name!r}",
            autoscaling=autoscaling_props(workload.autoscaling),
        )
