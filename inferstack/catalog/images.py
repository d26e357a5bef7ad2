"""What each pinned engine image contains, one entry per image, each fact with its source; ``unconfirmed`` names
the facts that could not be read offline (?).

Rules hold a workload's needs against its image (:mod:`inferstack.rules.images`): NIXL's LIBFABRIC backend needs
libfabric, NCCL across nodes over EFA needs aws-ofi-nccl, a flag must exist in the image's own engine release, and
a Neuron image never runs on a GPU pool (nor a CUDA image on a CPU or Neuron pool).

An image that is not catalogued is read from its repository where the repository tells (``vllm/vllm-openai:vX.Y.Z``,
``rayproject/ray-llm:X.Y.Z-…``: upstream builds without the EFA stack); anything else has no facts (None).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from inferstack.catalog.instances import AcceleratorKind
from inferstack.catalog.versions import ENGINE_IMAGES

DLC = "aws/deep-learning-containers"


@dataclass(frozen=True, kw_only=True)
class ImageFacts:
    """One container image as it runs."""

    uri: str
    runs_on: frozenset[AcceleratorKind]
    """The pools its engine can use: ``{NVIDIA}`` (CUDA builds), ``{NEURON}``, ``{NONE}`` (CPU only), or several."""
    uid: int
    """The user it runs as when the pod sets none (0 = root)."""
    home: str
    workdir: str
    entrypoint: tuple[str, ...]
    engine: str | None = None
    """``vllm``, ``ray``, ``sglang``, ``tgi``, ``ollama``, ``triton``, ``dynamo``, ``kserve``; None for tools."""
    engine_version: str | None = None
    """The engine's own release (for Ray and Dynamo images: Ray's / Dynamo's); :attr:`vllm_version` is vLLM's."""
    vllm_version: str | None = None
    python: str | None = None
    libfabric: bool = False
    """EFA's libfabric (the EFA installer, ``/opt/amazon/efa``)."""
    aws_ofi_nccl: bool = False
    nixl_backends: frozenset[str] = frozenset()
    """NIXL plugins that can load (LIBFABRIC needs the system libfabric: NIXL's wheel excludes it,
    ai-dynamo/nixl ``contrib/build-wheel.sh:103`` at v1.3.0)."""
    runai_streamer: bool = False
    sources: tuple[str, ...] = ()
    """Where the facts were read (repository · path · commit, or release notes)."""
    unconfirmed: frozenset[str] = field(default_factory=frozenset)
    """Fields whose value could not be confirmed offline (?)."""


NVIDIA = frozenset({AcceleratorKind.NVIDIA})

#: key → facts; the keys and URIs are those of :data:`inferstack.catalog.versions.ENGINE_IMAGES`.
IMAGE_FACTS: dict[str, ImageFacts] = {
    "vllm-gpu": ImageFacts(
        uri=ENGINE_IMAGES["vllm-gpu"],
        runs_on=NVIDIA,
        uid=0,
        home="/root",
        workdir="/",
        entrypoint=("/usr/local/bin/dockerd_entrypoint.sh",),
        engine="vllm",
        engine_version="0.31.0",
        vllm_version="0.31.0",
        python="3.12",
        libfabric=True,
        aws_ofi_nccl=True,
        nixl_backends=frozenset({"UCX", "LIBFABRIC"}),
        runai_streamer=True,
        sources=(
            f"{DLC} · docs/src/data/vllm/0.31.0-gpu-ec2.yml · c6e3ca18 (release, EFA 1.47.0 + aws-ofi-nccl)",
            f"{DLC} · docker/vllm/Dockerfile · dceae132 (0.27.1: no USER, WORKDIR /, ENTRYPOINT)",
        ),
        unconfirmed=frozenset({"uid", "home", "workdir", "nixl_backends", "runai_streamer"}),
    ),
    "vllm-neuron": ImageFacts(
        uri=ENGINE_IMAGES["vllm-neuron"],
        runs_on=frozenset({AcceleratorKind.NEURON}),
        uid=0,
        home="/root",
        workdir="/workspace/vllm",
        entrypoint=(),
        engine="vllm",
        engine_version="0.16.0",
        vllm_version="0.16.0",
        python="3.12",
        sources=("aws-neuron/deep-learning-containers · vllm/inference/0.16.0/Dockerfile.neuronx · 8d2d8380",),
    ),
    "ray-llm": ImageFacts(
        uri=ENGINE_IMAGES["ray-llm"],
        runs_on=NVIDIA,
        uid=1000,
        home="/home/ray",
        workdir="/home/ray",
        entrypoint=(),
        engine="ray",
        engine_version="2.58.0",
        vllm_version="0.26.0",
        python="3.12",
        libfabric=False,
        aws_ofi_nccl=False,
        nixl_backends=frozenset({"UCX"}),
        sources=(
            "ray-project/ray · docker/base-deps/Dockerfile · 2135df0b (USER 1000, HOME /home/ray)",
            "ray-project/ray PR #57706 (NIXL from its wheel; no EFA installer in any ray-llm Dockerfile)",
            "ai-dynamo/nixl · contrib/build-wheel.sh:103 · v1.3.0 5949ccf9 (the wheel excludes libfabric)",
            "ray[llm]==2.58.0 wheel metadata (vllm[audio]==0.26.0)",
        ),
        unconfirmed=frozenset({"uid", "home", "libfabric"}),
    ),
    "ray-llm-efa": ImageFacts(
        uri=ENGINE_IMAGES["ray-llm-efa"],
        runs_on=NVIDIA,
        uid=0,
        home="/root",
        workdir="/workspace",
        entrypoint=("/usr/local/bin/entrypoint.sh",),
        engine="ray",
        engine_version="2.58.0",
        vllm_version="0.26.0",
        python="3.13",
        libfabric=True,
        aws_ofi_nccl=True,
        nixl_backends=frozenset({"UCX", "LIBFABRIC"}),
        sources=(
            f"{DLC} · docs/ray-llm/changelog/index.md · 4645ac8f (serve-llm-cuda-v1.0: Ray 2.58.0, vLLM 0.26.0)",
            f"{DLC} · docs/src/data/ray-llm/2.58-gpu-ec2.yml · 845a7a4f (py313, cu130, amzn2023)",
            f"{DLC} · docker/ray_llm/Dockerfile.cuda · 140b5392 (EFA installer 1.49.0, /opt/amazon/efa, "
            "aws-ofi-nccl, no USER, WORKDIR /workspace)",
        ),
        # NIXL over LIBFABRIC is not in AWS's own tests (their P/D test runs on g5, over TCP).
        unconfirmed=frozenset({"nixl_backends"}),
    ),
    "triton-vllm": ImageFacts(
        uri=ENGINE_IMAGES["triton-vllm"],
        runs_on=NVIDIA,
        uid=1000,
        home="/home/triton-server",
        workdir="/opt/tritonserver",
        entrypoint=("/opt/nvidia/nvidia_entrypoint.sh",),
        engine="triton",
        engine_version="26.10",
        vllm_version="0.31.0",
        python="3.12",
        sources=("NVIDIA Triton release notes 26.10",),
        unconfirmed=frozenset({"vllm_version", "uid", "home", "python"}),
    ),
    "kserve-huggingface": ImageFacts(
        uri=ENGINE_IMAGES["kserve-huggingface"],
        runs_on=NVIDIA,
        uid=1000,
        home="/home/kserve",
        workdir="/",
        entrypoint=("python", "-m", "huggingfaceserver"),
        engine="kserve",
        engine_version="0.20.0",
        vllm_version="0.24.0",
        python="3.11",
        sources=("kserve/kserve · python/huggingface_server.Dockerfile, uv.lock · v0.20.0 1fb78105 (USER 1000)",),
        unconfirmed=frozenset({"home", "workdir", "python"}),
    ),
    "sglang": ImageFacts(
        uri=ENGINE_IMAGES["sglang"],
        runs_on=NVIDIA,
        uid=0,
        home="/root",
        workdir="/sgl-workspace",
        entrypoint=(),
        engine="sglang",
        engine_version="0.5.19",
        python="3.12",
        sources=("sgl-project/sglang · docker/Dockerfile (no USER)",),
        unconfirmed=frozenset({"workdir", "python"}),
    ),
    "tgi": ImageFacts(
        uri=ENGINE_IMAGES["tgi"],
        runs_on=NVIDIA,
        uid=0,
        home="/root",
        workdir="/usr/src",
        entrypoint=("text-generation-launcher",),
        engine="tgi",
        engine_version="3.3.7",
        sources=("huggingface/text-generation-inference · Dockerfile · v3.3.7 dfb3fbe7",),
        unconfirmed=frozenset({"workdir"}),
    ),
    "ollama": ImageFacts(
        uri=ENGINE_IMAGES["ollama"],
        runs_on=frozenset({AcceleratorKind.NVIDIA, AcceleratorKind.NONE}),
        uid=0,
        home="/root",
        workdir="/",
        entrypoint=("/bin/ollama",),
        engine="ollama",
        engine_version="0.32.15",
        sources=("ollama/ollama · Dockerfile · b7871fc0 (no USER, ENTRYPOINT /bin/ollama, CMD serve)",),
    ),
    "dynamo-vllm": ImageFacts(
        uri=ENGINE_IMAGES["dynamo-vllm"],
        runs_on=NVIDIA,
        uid=1000,
        home="/home/dynamo",
        workdir="/workspace",
        entrypoint=(),
        engine="dynamo",
        engine_version="1.4.0",
        vllm_version="0.26.0",
        python="3.12",
        nixl_backends=frozenset({"UCX"}),
        runai_streamer=True,
        sources=("ai-dynamo/dynamo · container/Dockerfile.vllm, pyproject.toml · 1.4.0 (user dynamo uid 1000)",),
        unconfirmed=frozenset({"home", "workdir", "python"}),
    ),
    "dynamo-vllm-efa": ImageFacts(
        uri=ENGINE_IMAGES["dynamo-vllm-efa"],
        runs_on=NVIDIA,
        uid=1000,
        home="/home/dynamo",
        workdir="/workspace",
        entrypoint=(),
        engine="dynamo",
        engine_version="1.4.0",
        vllm_version="0.26.0",
        python="3.12",
        libfabric=True,
        aws_ofi_nccl=True,
        nixl_backends=frozenset({"UCX", "LIBFABRIC"}),
        runai_streamer=True,
        sources=("ai-dynamo/dynamo · container/Dockerfile.vllm (EFA stage: libfabric + aws-ofi-nccl) · 1.4.0",),
        unconfirmed=frozenset({"home", "workdir", "python"}),
    ),
    "dynamo-frontend": ImageFacts(
        uri=ENGINE_IMAGES["dynamo-frontend"],
        runs_on=frozenset({AcceleratorKind.NONE, AcceleratorKind.NVIDIA}),
        uid=1000,
        home="/home/dynamo",
        workdir="/workspace",
        entrypoint=(),
        engine="dynamo",
        engine_version="1.4.0",
        sources=("ai-dynamo/dynamo · container/Dockerfile.frontend · 1.4.0",),
        unconfirmed=frozenset({"home", "workdir"}),
    ),
    "aws-cli": ImageFacts(
        uri=ENGINE_IMAGES["aws-cli"],
        runs_on=frozenset({AcceleratorKind.NONE, AcceleratorKind.NVIDIA, AcceleratorKind.NEURON}),
        uid=0,
        home="/root",
        workdir="/aws",
        entrypoint=("/usr/local/bin/aws",),
        sources=("aws/aws-cli · docker/Dockerfile · 2.27.50",),
    ),
}

_BY_URI = {facts.uri: facts for facts in IMAGE_FACTS.values()}
#: The upstream repositories, under any registry or mirror path, tagged or pinned by digest only; the release comes
#: from a ``vX.Y.Z`` / ``X.Y.Z`` tag when there is one (else unknown: None).
_VLLM_OPENAI = re.compile(r"^(?:.+/)?vllm/vllm-openai(?::v?(\d+\.\d+\.\d+)[^:@/]*|:[^:@/]+)?(?:@sha256:[0-9a-f]{64})?$")
#: The Dynamo vLLM runtime, wherever mirrored: ``…/ai-dynamo/vllm-runtime:<release>[-efa]`` (a digest may follow).
#: The release is the tag's semantic version; any ``-suffix`` follows (``1.4.0-cuda13-efa``), as the operator parses
#: it (runtimeversion.go: semver core, pre-release dropped); an ``efa`` token marks the EFA build.
_DYNAMO_RUNTIME = re.compile(
    r"^(?:.+/)?ai-dynamo/vllm-runtime:v?(\d+\.\d+\.\d+)((?:-[0-9A-Za-z.]+)*)(?:@sha256:[0-9a-f]{64})?$"
)
#: The Dynamo frontend, wherever mirrored: ``…/ai-dynamo/dynamo-frontend:<release>``.
_DYNAMO_FRONTEND = re.compile(
    r"^(?:.+/)?ai-dynamo/dynamo-frontend:v?(\d+\.\d+\.\d+)(?:-[0-9A-Za-z.]+)*(?:@sha256:[0-9a-f]{64})?$"
)
_RAY_LLM = re.compile(r"^(?:.+/)?rayproject/ray-llm(?::(\d+\.\d+\.\d+)[^:@/]*|:[^:@/]+)?(?:@sha256:[0-9a-f]{64})?$")


def _dynamo_runtime(image: str, version: str, *, efa: bool) -> ImageFacts:
    """A Dynamo vLLM runtime of release ``version`` (a mirror, another release): the catalog's facts of its build
    (``-efa``: libfabric and aws-ofi-nccl), its vLLM release known only for the catalog's own release."""
    base = IMAGE_FACTS["dynamo-vllm-efa" if efa else "dynamo-vllm"]
    same = version == base.engine_version
    return dataclasses.replace(
        base,
        uri=image,
        engine_version=version,
        vllm_version=base.vllm_version if same else None,
        sources=(*base.sources, f"{image}: a mirror or another release of it, by its tag"),
        unconfirmed=base.unconfirmed | (frozenset() if same else frozenset({"vllm_version", "runai_streamer"})),
    )


def image_facts(image: str) -> ImageFacts | None:
    """The facts of ``image``: its catalog entry, or what an upstream repository tells (wherever it is mirrored,
    however it is pinned; the engine release only from a release tag); None when unknown."""
    if image in _BY_URI:
        return _BY_URI[image]
    if match := _VLLM_OPENAI.match(image):
        version = match.group(1)
        return ImageFacts(
            uri=image,
            runs_on=NVIDIA,
            uid=0,
            home="/root",
            workdir="/vllm-workspace",
            entrypoint=("vllm", "serve"),
            engine="vllm",
            engine_version=version,
            vllm_version=version,
            nixl_backends=frozenset({"UCX"}),
            sources=("vllm-project/vllm · docker/Dockerfile (libibverbs and NCCL; no libfabric, no aws-ofi-nccl)",),
        )
    if match := _DYNAMO_RUNTIME.match(image):
        return _dynamo_runtime(image, match.group(1), efa="efa" in match.group(2).split("-"))
    if match := _DYNAMO_FRONTEND.match(image):
        base = IMAGE_FACTS["dynamo-frontend"]
        return dataclasses.replace(
            base, uri=image, engine_version=match.group(1), sources=(*base.sources, f"{image}: by its tag")
        )
    if match := _RAY_LLM.match(image):
        return ImageFacts(
            uri=image,
            runs_on=NVIDIA,
            uid=1000,
            home="/home/ray",
            workdir="/home/ray",
            entrypoint=(),
            engine="ray",
            engine_version=match.group(1),
            nixl_backends=frozenset({"UCX"}),
            sources=("ray-project/ray · docker/ray-llm (no EFA installer)",),
            unconfirmed=frozenset({"uid", "home"}),
        )
    return None
