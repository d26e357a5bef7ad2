"""TritonServer: NVIDIA Triton Inference Server with its vLLM backend on the shared serving pod — a Deployment of
``tritonserver`` pods loading a one-model repository (a ConfigMap: ``<model>/config.pbtxt`` with ``backend: "vllm"``
and ``<model>/1/model.json``, the vLLM engine arguments), its Service (HTTP 8000, gRPC 8001, metrics 8002),
PodDisruptionBudget and PodMonitor.

Triton's contract this relies on (triton-inference-server/server docs, vllm_backend README;
../shared/facts/serving-apis.md §4): ``/v2/health/ready`` is ready once every model in the repository loaded,
``/v2/health/live`` once the server runs; metrics are on ``--metrics-port`` at ``/metrics``; the vLLM backend passes
``model.json`` to vLLM's ``AsyncEngineArgs`` and reports ``vllm:`` metrics only with ``REPORT_CUSTOM_METRICS``;
``--model-control-mode explicit`` with ``--load-model <name>`` loads that one model at start and exits on a load error
(``none``, the default, would take the kubelet's ``..data`` entries of the ConfigMap volume for models too).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.kubernetes import SERVING_TERMINATION_GRACE_SECONDS
from inferstack.constructs import validation as check
from inferstack.constructs.engine import EnginePlacement, EngineServer, EngineSpec
from inferstack.constructs.pod import PRE_STOP_SECONDS
from inferstack.constructs.pod.mounts import Mount
from inferstack.constructs.vllm import EXIT_MARGIN_SECONDS

TERMINATION_GRACE_SECONDS = SERVING_TERMINATION_GRACE_SECONDS

HTTP_PORT, GRPC_PORT, METRICS_PORT = 8000, 8001, 8002
#: How long tritonserver finishes in-flight requests after SIGTERM (its default 30 s): the termination grace period
#: (120 s) less the preStop pause and an exit margin, like vLLM's drain.
EXIT_TIMEOUT_SECONDS = TERMINATION_GRACE_SECONDS - PRE_STOP_SECONDS - EXIT_MARGIN_SECONDS
REPOSITORY = "/opt/inferstack/model-repository"
HOME = "/home/triton"
READY_PATH = "/v2/health/ready"
LIVE_PATH = "/v2/health/live"
#: Caches of Triton's Python stub and vLLM, on the writable home (as for the vLLM kind).
CACHE_ENV = {
    "XDG_CACHE_HOME": f"{HOME}/.cache",
    "VLLM_CACHE_ROOT": f"{HOME}/.cache/vllm",
    "TRITON_CACHE_DIR": f"{HOME}/.cache/triton",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
}
_MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


def config_pbtxt(report_metrics: bool = True) -> str:
    """The vLLM backend's model configuration: one model instance (vLLM itself spreads over the GPUs), custom vLLM
    metrics on the metrics port."""
    text = 'backend: "vllm"\ninstance_group [\n  {\n    count: 1\n    kind: KIND_MODEL\n  }\n]\n'
    if report_metrics:
        text += 'parameters: {\n  key: "REPORT_CUSTOM_METRICS"\n  value: { string_value: "true" }\n}\n'
    return text


@dataclass(frozen=True, kw_only=True)
class TritonServerProps:
    """One Triton deployment of one vLLM-backend model.

    :param model_name: the model's name in the repository and in the v2 API (``/v2/models/<name>/generate``).
    :param engine_args: ``model.json``: vLLM ``AsyncEngineArgs`` by name (``model`` is the path, URI or id to load).
    :param placement: the pods' identity, resources, placement and model volumes (from the plan).
    """

    image: str
    """The Triton image with the vLLM backend (``tritonserver``), pinned by tag or digest."""
    model_name: str
    """The model's name in the repository and the v2 API (``/v2/models/<name>/generate``): letters, digits, ``_``,
    ``.`` and ``-``, starting with a letter or digit, at most 63."""
    engine_args: Mapping[str, Any]
    """``model.json``: vLLM ``AsyncEngineArgs`` by name; ``model`` (the path, URI or id to load) is required."""
    placement: EnginePlacement
    """The pods' name, namespace, resources, placement and model volumes (from the plan); ``monitoring`` also turns
    on the vLLM backend's custom metrics."""
    env: Sequence[k8s.EnvVar] = ()
    """Extra environment of the Triton container (after the cache variables). Default none."""


class TritonServer(Construct):
    """The model repository ConfigMap and the Triton Deployment + Service + PDB (+ PodMonitor on ``metrics``)."""

    def __init__(self, scope: Construct, construct_id: str, props: TritonServerProps) -> None:
        super().__init__(scope, construct_id)
        placement = props.placement
        owner = f"TritonServer {placement.name!r}"
        if not _MODEL_NAME.match(props.model_name):
            raise check.PropError(f"{owner}: model_name {props.model_name!r} — letters, digits, '_', '.', '-'")
        if "model" not in props.engine_args:
            raise check.PropError(f"{owner}: engine_args — 'model' (the weights to load) is required")
        self.props = props
        self.repository_name = f"{placement.name}-model-repository"
        model_json = json.dumps(dict(props.engine_args), indent=2, sort_keys=True) + "\n"
        self.repository = k8s.KubeConfigMap(
            self,
            "repository",
            metadata=k8s.ObjectMeta(
                name=self.repository_name,
                namespace=placement.namespace,
                labels={"app.kubernetes.io/name": placement.name, "app.kubernetes.io/part-of": "inferstack"},
            ),
            data={"config.pbtxt": config_pbtxt(placement.monitoring), "model.json": model_json},
        )
        volume = k8s.Volume(
            name="model-repository",
            config_map=k8s.ConfigMapVolumeSource(
                name=self.repository_name,
                items=[
                    k8s.KeyToPath(key="config.pbtxt", path=f"{props.model_name}/config.pbtxt"),
                    k8s.KeyToPath(key="model.json", path=f"{props.model_name}/1/model.json"),
                ],
            ),
        )
        spec = EngineSpec(
            component="triton",
            image=props.image,
            command=["tritonserver"],
            args=[
                f"--model-repository={REPOSITORY}",
                # The kubelet writes a ConfigMap volume as ..data and ..<timestamp> entries beside the items
                # (pkg/volume/util/atomic_writer.go); in mode none Triton takes every entry of the repository for a
                # model and stops with "failed to load all models". Explicit mode loads only the one named.
                "--model-control-mode=explicit",
                f"--load-model={props.model_name}",
                f"--http-port={HTTP_PORT}",
                f"--grpc-port={GRPC_PORT}",
                f"--metrics-port={METRICS_PORT}",
                f"--exit-timeout-secs={EXIT_TIMEOUT_SECONDS}",
            ],
            container_name="triton",
            port=HTTP_PORT,
            ports={"grpc": GRPC_PORT, "metrics": METRICS_PORT},
            service_ports=("grpc", "metrics"),
            health_path=READY_PATH,
            live_path=LIVE_PATH,
            metrics_port="metrics",
            home=HOME,
            user="triton",
            env=[*(k8s.EnvVar(name=k, value=v) for k, v in CACHE_ENV.items()), *props.env],
            termination_grace_seconds=TERMINATION_GRACE_SECONDS,
        )
        placement = dataclasses.replace(
            placement,
            mounts=[*placement.mounts, Mount(path=REPOSITORY, volume=volume, read_only=True)],
        )
        self.server = EngineServer(self, "server", spec, placement, owner=owner)
        self.deployment = self.server.deployment
        self.service = self.server.service
