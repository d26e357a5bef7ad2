"""vLLM engine settings as typed fields (never a free-form argument string), plus scaling and resources."""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from inferstack.catalog.engine_flags import (
    OLDEST_SIZED_VLLM,
    VLLM_VERSIONS,
    UnknownFlag,
    engine_flags,
    vllm_version_of_image,
)
from inferstack.catalog.kubernetes import PROMETHEUS_URL
from inferstack.config.base import StrictModel, refuse_unread
from inferstack.config.types import PinnedImage

_FLAG = re.compile(r"^--[a-z0-9][a-z0-9-]*(=.*)?$")
#: A tool-call parser's name: vLLM's own (``hermes``, ``llama3_json``, ``granite-20b-fc``) or a plugin's.
_PARSER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
#: Flags inferstack sets from typed fields: passing them through extra_args would contradict those fields.
MANAGED_FLAGS = frozenset(
    {
        "--model",
        "--tensor-parallel-size",
        "--pipeline-parallel-size",
        "--gpu-memory-utilization",
        "--max-model-len",
        "--max-num-seqs",
        "--max-num-batched-tokens",
        "--dtype",
        "--quantization",
        "--kv-cache-dtype",
        "--enable-prefix-caching",
        "--no-enable-prefix-caching",
        "--disable-prefix-caching",
        "--load-format",
        "--served-model-name",
        "--port",
        "--device",
        "--tool-call-parser",
        "--enable-auto-tool-choice",
        "--kv-transfer-config",
        "--shutdown-timeout",
    }
)


#: ``max_model_len`` where the model's full context does not fit (see :attr:`VllmEngineConfig.max_model_len`).
DEFAULT_MAX_MODEL_LEN = 8192


def flags_version_of(image: str) -> str | None:
    """The vLLM release of ``image`` when inferstack carries its flag list, else None."""
    version = vllm_version_of_image(image)
    return version if version in VLLM_VERSIONS else None


#: What an argument no flag takes does to each engine's parser (argparse reads it as a positional).
_STRAY = {
    "vllm": "vLLM would read it as a second model and stop at start",
    "sglang": "SGLang takes no positional argument and would stop at start (unrecognized arguments)",
    "tgi": "TGI's launcher takes no positional argument and would stop at start (unexpected argument)",
}


def check_extra_args(
    args: tuple[str, ...] | list[str],
    version: str,
    prefix: str = "",
    *,
    engine: str = "vllm",
    managed: frozenset[str] = MANAGED_FLAGS,
) -> None:
    """Raise a config error for the first problem of ``args`` against the flags of ``engine`` (``vllm``, default,
    ``sglang``, ``tgi``) at ``version``: an unknown flag (with the nearest known spellings), a spelling of a flag a
    typed field sets (``managed``, default vLLM's), a value no flag takes, a value outside a flag's choices. Error
    paths are ``<prefix>extra_args[i]``."""
    flags = engine_flags(engine, version)
    for index, written, name in flags.known_flags(args):
        if name in managed:
            raise PydanticCustomError(
                "managed_flag",
                "{flag} ({name}) is set by a typed field of engine — use that field instead",
                {"flag": written, "name": name, "field": f"{prefix}extra_args[{index}]"},
            )
    for index, switch in flags.valued_switches(args):
        raise PydanticCustomError(
            "switch_value",
            "{flag} is a switch and takes no value: {release} would stop at start — write {flag} alone",
            {"flag": switch, "release": flags.label, "field": f"{prefix}extra_args[{index}]"},
        )
    for index, value in flags.stray_values(args):
        raise PydanticCustomError(
            "stray_value",
            "{value} follows no flag that takes a value: {effect} — put its flag before it (e.g. "
            "['--max-loras', '4']) or remove it",
            {"value": repr(value), "effect": _STRAY[engine], "field": f"{prefix}extra_args[{index}]"},
        )
    unknown = flags.parse(args)
    if not unknown:
        for index, flag, value, valid in flags.bad_choices(args):
            raise PydanticCustomError(
                "flag_choice",
                "{value} is not a value of {flag} in {release} — valid: {valid}",
                {
                    "value": value,
                    "flag": flag,
                    "release": flags.label,
                    "valid": ", ".join(valid),
                    "field": f"{prefix}extra_args[{index}]",
                },
            )
        return

    def describe(item: UnknownFlag) -> str:
        whole = flags.abbreviation_of(item.flag) if engine == "sglang" else None
        if whole is not None:
            return (
                f"{item.flag} is not a flag of {flags.label}: argparse would take it as an abbreviation of {whole}, "
                f"which the next release may make ambiguous — write {whole}"
            )
        near = " or ".join(item.near)
        return f"{item.flag} is not a flag of {flags.label}" + (f" — did you mean {near}?" if near else "")

    if len(unknown) == 1:
        (item,) = unknown
        raise PydanticCustomError(
            "unknown_flag", "{detail}", {"detail": describe(item), "field": f"{prefix}extra_args[{item.index}]"}
        )
    raise PydanticCustomError(
        "unknown_flag",
        "{detail}",
        {"detail": "; ".join(f"[{item.index}] {describe(item)}" for item in unknown), "field": f"{prefix}extra_args"},
    )


def check_engine_extra_args(
    args: tuple[str, ...], engine: str, version: str | None, index: int, managed: frozenset[str]
) -> None:
    """``args`` of workload ``index`` against ``engine``'s flag list at ``version`` (none: not vendored, nothing
    checked — rule ENGINE-FLAGS-UNVERIFIED warns), the ``managed`` flags refused (:func:`check_extra_args`)."""
    if args and version is not None:
        check_extra_args(args, version, prefix=f"workloads[{index}].engine.", engine=engine, managed=managed)


def check_extra_args_near(args: tuple[str, ...] | list[str], versions: tuple[str, ...], prefix: str = "") -> None:
    """``args`` of an engine whose vLLM release has no vendored flag list, against the vendored ``versions`` around
    it: a flag must be one of any of them; when none knows it, the first list's error is raised (?)."""
    for version in versions:
        try:
            check_extra_args(args, version, prefix=prefix)
            return
        except PydanticCustomError:
            continue
    check_extra_args(args, versions[0], prefix=prefix)


class Dtype(StrEnum):
    AUTO = "auto"
    BFLOAT16 = "bfloat16"
    FLOAT16 = "float16"


class Quantization(StrEnum):
    FP8 = "fp8"
    AWQ = "awq"
    GPTQ = "gptq"


class KvCacheDtype(StrEnum):
    AUTO = "auto"
    FP8 = "fp8"
    FP8_E4M3 = "fp8_e4m3"
    FP8_E5M2 = "fp8_e5m2"


class ToolCallingConfig(StrictModel):
    """OpenAI-style tool calling (``--enable-auto-tool-choice --tool-call-parser …``)."""

    parser: str | None = None
    """vLLM tool-call parser. Default: the model family's parser from the catalog (``mistral``, ``llama3_json``,
    ``hermes``…)."""

    @field_validator("parser")
    @classmethod
    def _parser(cls, value: str | None) -> str | None:
        if value is not None and not _PARSER.fullmatch(value):
            raise PydanticCustomError(
                "tool_call_parser",
                "not a vLLM tool-call parser name — letters, digits, '_', '.', '-' (e.g. hermes, llama3_json); leave "
                "parser unset for the model family's",
            )
        return value


class LmCacheConfig(StrictModel):
    """LMCache KV tiering to CPU memory (``LMCacheConnectorV1``, ``kv_both``)."""

    cpu_cache_gib: float = Field(default=20, gt=0)
    """CPU memory for offloaded KV, GiB (added to the pod's memory request). Default 20."""
    chunk_size: int = Field(default=256, ge=16)
    """Tokens per cached chunk. Default 256."""


class VllmEngineConfig(StrictModel):
    """vLLM serving options. Defaults are vLLM's unless stated."""

    image: PinnedImage | None = None
    """Engine image, pinned by tag or digest. Default: the catalog's vLLM image for the pool's accelerator (GPU or
    Neuron). A vLLM release older than 0.10 (the oldest inferstack sizes) is refused; one without a vendored flag list
    runs with its ``extra_args`` unchecked (ENGINE-FLAGS-UNVERIFIED)."""
    gpu_memory_utilization: float = Field(default=0.90, gt=0, le=0.98)
    """Fraction of accelerator memory vLLM may use (weights + activations + KV cache). Default 0.90."""
    max_model_len: int | None = Field(default=None, ge=16)
    """Longest sequence (prompt + output), tokens. Default: the model's context, as vLLM's own default, when the
    plan finds that one sequence of it fits the KV cache on the pool's smallest instance that holds the replica
    (and, with ``enable_chunked_prefill: false``, fits ``max_num_batched_tokens``); otherwise
    :data:`DEFAULT_MAX_MODEL_LEN` (8192) or the model's context when shorter. ``inferstack plan`` shows the value
    chosen; the rendered engine always gets an explicit ``--max-model-len``."""
    tensor_parallel_size: int = Field(default=1, ge=1, le=64)
    """Accelerators (GPUs; NeuronCores on Neuron) one replica spans. Default 1."""
    pipeline_parallel_size: int = Field(default=1, ge=1, le=16)
    """Pipeline stages. Default 1."""
    dtype: Dtype = Dtype.AUTO
    """Weights and activations dtype. Default auto (the checkpoint's)."""
    quantization: Quantization | None = None
    """Quantize weights at load. Default none (the checkpoint as shipped)."""
    kv_cache_dtype: KvCacheDtype = KvCacheDtype.AUTO
    """``fp8`` halves KV memory (doubles the tokens that fit). Default auto (the model dtype)."""
    max_num_seqs: int = Field(default=256, ge=1)
    """Concurrent sequences per replica. Default 256."""
    max_num_batched_tokens: int = Field(default=8192, ge=16)
    """Tokens per engine step (chunked prefill budget). Default 8192."""
    enable_prefix_caching: bool = True
    """Automatic prefix caching. Default on."""
    enable_chunked_prefill: bool | None = None
    """Default: vLLM's (on with the V1 engine)."""
    enforce_eager: bool = False
    """Disable CUDA graphs. Default off (LMCache's connector runs with CUDA graphs: its docs launch ``vllm serve``
    with ``--kv-transfer-config`` only, LMCache 0c3076e4 ``offload_kv_cache.rst``; PR #2522 dropped
    ``--enforce-eager`` from its tests)."""
    tool_calling: ToolCallingConfig | None = None
    """Enable tool calling. Default off."""
    lmcache: LmCacheConfig | None = None
    """LMCache KV tiering. Default off."""
    extra_args: tuple[str, ...] = ()
    """Further vLLM flags (``--flag`` or ``--flag=value`` items, values as separate items are accepted)."""

    @field_validator("extra_args")
    @classmethod
    def _flags(cls, args: tuple[str, ...]) -> tuple[str, ...]:
        for arg in args:
            flag = arg.split("=", 1)[0]
            if flag in MANAGED_FLAGS:
                raise PydanticCustomError(
                    "managed_flag",
                    "{flag} is set by a typed field of engine — use that field instead",
                    {"flag": flag},
                )
        return args

    @property
    def flags_version(self) -> str | None:
        """The vLLM release whose flag list ``extra_args`` is checked against here: the version of an explicit
        ``image``, or None (no image given: the platform checks against the pool's default image, see
        ``InferstackConfig``; or the image's version is unknown / has no vendored list: unchecked)."""
        return flags_version_of(self.image) if self.image else None

    @field_validator("image")
    @classmethod
    def _sized_release(cls, image: str | None) -> str | None:
        version = vllm_version_of_image(image) if image else None
        if version is not None:
            parts = version.split(".")
            line = (int(parts[0]), int(parts[1])) if len(parts) > 1 and all(p.isdigit() for p in parts[:2]) else None
            if line is not None and line < OLDEST_SIZED_VLLM:
                oldest = ".".join(map(str, OLDEST_SIZED_VLLM))
                raise PydanticCustomError(
                    "vllm_release",
                    "{image} runs vLLM {version}, older than the oldest release inferstack sizes ({oldest}: the V1 "
                    "engine's memory profile) — its plan would be another release's; use vLLM {oldest} or newer",
                    {"image": image, "version": version, "oldest": oldest},
                )
        return image

    @model_validator(mode="after")
    def _known_flags(self) -> VllmEngineConfig:
        """Every flag of ``extra_args`` must be one the engine's vLLM release accepts (in any of its spellings, which
        must not stand for a managed flag either). Skipped when the release is unknown (see ``flags_version``)."""
        version = self.flags_version if self.extra_args else None
        if version is not None:
            check_extra_args(self.extra_args, version)
        return self

    @model_validator(mode="after")
    def _consistent(self) -> VllmEngineConfig:
        length = self.max_model_len
        if length is not None and self.max_num_batched_tokens < length and self.enable_chunked_prefill is False:
            raise PydanticCustomError(
                "batched_tokens",
                "below max_model_len ({len}) needs chunked prefill — enable it or raise the budget",
                {"len": length, "field": "max_num_batched_tokens"},
            )
        return self


class AutoscalerKind(StrEnum):
    KEDA = "keda"
    """KEDA ScaledObject on the engine's queue gauge (Prometheus): ``vllm:num_requests_waiting``,
    ``sglang:num_queue_reqs``, ``tgi_queue_size``. Default."""
    HPA = "hpa"
    """HorizontalPodAutoscaler on that gauge as a pods metric (``vllm_num_requests_waiting``,
    ``sglang_num_queue_reqs``, ``tgi_queue_size``; needs a metrics adapter)."""


class AutoscalingConfig(StrictModel):
    """Scale replicas on queue depth (kinds ``vllm``, ``sglang`` and ``tgi``; the others refuse it at the field)."""

    kind: AutoscalerKind = AutoscalerKind.KEDA
    """``keda`` (default; queries Prometheus) or ``hpa`` (needs a custom-metrics adapter)."""
    min_replicas: int = Field(default=1, ge=0)
    """0 allows scale-to-zero (KEDA only). Default 1."""
    max_replicas: int = Field(default=4, ge=1)
    """Default 4."""
    target_waiting_requests: int = Field(default=5, ge=1)
    """Waiting requests per replica that trigger a scale-out. Default 5."""
    prometheus_url: str = Field(
        default=PROMETHEUS_URL, max_length=2048, pattern=r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~/-]*)?$"
    )
    """Prometheus KEDA queries: ``http(s)://host[:port][/path]``, no spaces, query or credentials (KEDA's prometheus
    scaler ``serverAddress``). Default: kube-prometheus-stack's service."""

    @model_validator(mode="after")
    def _range(self) -> AutoscalingConfig:
        if self.min_replicas > self.max_replicas:
            raise PydanticCustomError("replicas", "min_replicas must be ≤ max_replicas", {"field": "min_replicas"})
        if self.min_replicas == 0 and self.kind is AutoscalerKind.HPA:
            raise PydanticCustomError(
                "hpa_zero", "an HPA cannot scale to zero — use kind: keda", {"field": "min_replicas"}
            )
        if self.kind is AutoscalerKind.HPA:
            refuse_unread(
                self,
                ("prometheus_url",),
                "with kind keda (KEDA's Prometheus queries), and kind hpa reads the pods metric from the cluster's "
                "custom-metrics adapter",
                "set kind: keda",
            )
        return self


class ResourcesConfig(StrictModel):
    """CPU and memory per serving pod. Accelerators follow from the engine's parallelism."""

    cpu: float | None = Field(default=None, gt=0, le=896)
    """vCPUs (at most 896: the largest EC2 instance, u7in-32tb). Default: the accelerators' share of the smallest
    instance in the pool, minus system headroom."""
    memory_gib: float | None = Field(default=None, gt=0, le=32768)
    """GiB (at most 32,768: the largest EC2 instance's memory). Default: the accelerators' share of the smallest
    instance's memory, minus headroom."""
    shm_gib: float = Field(default=8, gt=0, le=4096)
    """``/dev/shm`` (memory-backed), GiB: NCCL and the tokenizer pool need it. Default 8."""
    cpu_limit: float | None = Field(default=None, gt=0, le=896)
    """vCPU limit (a CFS quota), at least the request. Default none: no CPU limit — an engine's tokenizer,
    scheduler and detokenizer threads burst, and a quota throttles them mid-request. On ``kind: kserve`` the
    default is the request instead: KServe merges its runtime's ``limits.cpu: 1`` over a container without one."""
    memory_limit_gib: float | None = Field(default=None, gt=0, le=32768)
    """Memory limit, GiB, at least the request. Default: the memory request (the pod is OOM-killed before it
    starves the node's other pods)."""

    @model_validator(mode="after")
    def _limits_not_below_requests(self) -> ResourcesConfig:
        """The API server refuses a request above its limit; with both given it is named here (with a derived
        request, by the rule RESOURCE-LIMITS)."""
        for limit, request, unit in (("cpu_limit", "cpu", "vCPU"), ("memory_limit_gib", "memory_gib", "GiB")):
            low, high = getattr(self, request), getattr(self, limit)
            if low is not None and high is not None and high < low:
                raise PydanticCustomError(
                    "limit_below_request",
                    "{limit}: {high} {unit} is below {request} {low} — the API server refuses a limit under its "
                    "request; raise {limit} to at least {low}, or leave it out",
                    {"limit": limit, "high": f"{high:g}", "unit": unit, "request": request, "low": f"{low:g}"},
                )
        return self
