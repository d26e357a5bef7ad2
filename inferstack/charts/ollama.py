"""OllamaChart: the ``ollama`` kind — an Ollama server on the shared serving pod with a persistent model volume:
``ollama serve`` on 11434, health on ``GET /``. One pod owns the ReadWriteOnce volume, so pods are replaced by
stopping the old one first.

The models are pulled by an init container (``pull-models``: a second ``ollama serve`` bound to 127.0.0.1, then
``ollama pull`` of each model), and the serving container mounts the model volume **read-only**: Ollama's pull,
create, copy and delete API (``/api/pull``, ``/api/create``, ``/api/blobs``, ``/api/copy``, ``/api/delete``) share
the serving port with the chat API, and NetworkPolicies cannot tell them apart (L4), so on the serving pod they fail
on the read-only store instead — a client can neither replace nor delete a model. Read at ollama/ollama v0.32.15:
every write to the store is one of those handlers (``manifest/layer.go``, ``manifest/manifest.go``,
``server/download.go``, ``server/images.go``, ``server/create.go``); at start ``Serve`` only creates
``blobs/``/``manifests/`` when missing (``manifest/paths.go``, ``os.MkdirAll`` — the pull made them) and prunes
unless ``OLLAMA_NOPRUNE`` (``server/routes.go:1963``), which the serving container sets; the model recommendations
snapshot goes under HOME (``server/model_recommendations.go``)."""

from __future__ import annotations

import dataclasses
import shlex

from cdk8s_plus_36 import k8s

from inferstack.charts.engine import engine_placement
from inferstack.charts.workload import StorageRefs, WorkloadChart
from inferstack.config.ollama import OllamaWorkloadConfig
from inferstack.constructs.batch import hardened
from inferstack.constructs.engine import EngineServer, EngineSpec
from inferstack.constructs.pod import SERVING_UID
from inferstack.constructs.pod.mounts import Mount, empty_dir, volume_mounts
from inferstack.plan import ResolvedWorkload

PORT = 11434
HOME = "/home/ollama"
#: Where the model volume is mounted (``OLLAMA_MODELS``).
MODELS = "/ollama/models"


#: Where the init container's own server listens: the pod's loopback only (the serving container is not started yet).
PULL_HOST = f"127.0.0.1:{PORT}"


def pull_command(models: tuple[str, ...]) -> list[str]:
    """The init container: start a server on the loopback, wait until it answers (or fail if it exits), pull each
    model (the CLI talks to ``OLLAMA_HOST``) — a model whose pull fails but which the store holds already (the
    registry unreachable at a restart) is kept — stop the server and exit with the pulls' status."""
    pulls = " && ".join(
        f"{{ /bin/ollama pull {shlex.quote(model)} || /bin/ollama show {shlex.quote(model)} >/dev/null; }}"
        for model in models
    )
    return [
        "/bin/sh",
        "-c",
        "/bin/ollama serve & server=$!; "
        'until /bin/ollama ps >/dev/null 2>&1; do kill -0 "$server" || exit 1; sleep 1; done; '
        f'{pulls}; status=$?; kill "$server"; wait "$server"; exit "$status"',
    ]


def pull_container(image: str, models: tuple[str, ...], store: k8s.Volume) -> k8s.Container:
    """``pull-models``: the only container that writes the model store (``store``, mounted read-write). Non-root
    (the serving uid), no GPU (``NVIDIA_VISIBLE_DEVICES=void``: the image sets ``all``, which would otherwise expose
    the node's GPUs to a container that requests none)."""
    env = {
        "OLLAMA_HOST": PULL_HOST,
        "OLLAMA_MODELS": MODELS,
        "HOME": HOME,
        "NVIDIA_VISIBLE_DEVICES": "void",
    }
    return k8s.Container(
        name="pull-models",
        image=image,
        command=pull_command(models),
        env=[k8s.EnvVar(name=k, value=v) for k, v in env.items()],
        security_context=hardened(SERVING_UID),
        resources=k8s.ResourceRequirements(
            requests={"cpu": k8s.Quantity.from_string("500m"), "memory": k8s.Quantity.from_string("512Mi")},
            limits={"memory": k8s.Quantity.from_string("2Gi")},
        ),
        volume_mounts=volume_mounts(
            [
                Mount(path=MODELS, volume=store),
                Mount(path=HOME, volume=empty_dir("home")),
                Mount(path="/tmp", volume=empty_dir("tmp")),  # noqa: S108 - a pod-local emptyDir
            ]
        ),
    )


class OllamaChart(WorkloadChart):
    """The ``ollama`` kind: the model PVC, then the Ollama Deployment, Service and PDB (no metrics endpoint)."""

    server: EngineServer

    def serve(self, resolved: ResolvedWorkload, refs: StorageRefs) -> None:
        workload = resolved.config
        assert isinstance(workload, OllamaWorkloadConfig)
        claim = f"{workload.name}-models"
        k8s.KubePersistentVolumeClaim(
            self,
            "models",
            metadata=k8s.ObjectMeta(
                name=claim,
                namespace=workload.namespace,
                labels={"app.kubernetes.io/name": workload.name, "app.kubernetes.io/part-of": "inferstack"},
            ),
            spec=k8s.PersistentVolumeClaimSpec(
                access_modes=["ReadWriteOnce"],
                storage_class_name=workload.storage_class,
                resources=k8s.VolumeResourceRequirements(
                    requests={"storage": k8s.Quantity.from_string(f"{workload.storage_gib}Gi")}
                ),
            ),
        )
        env = {
            "OLLAMA_HOST": f"0.0.0.0:{PORT}",
            "OLLAMA_MODELS": MODELS,
            "OLLAMA_KEEP_ALIVE": workload.keep_alive,
            "OLLAMA_NUM_PARALLEL": str(workload.num_parallel),
            "OLLAMA_NOPRUNE": "true",  # the store is read-only here: pruning is the init container's
        }
        if workload.context_length is not None:
            env["OLLAMA_CONTEXT_LENGTH"] = str(workload.context_length)
        spec = EngineSpec(
            component="ollama",
            image=resolved.image,
            command=["/bin/ollama"],
            args=["serve"],
            container_name="ollama",
            port=PORT,
            health_path="/",
            home=HOME,
            user="ollama",
            env=[k8s.EnvVar(name=k, value=v) for k, v in env.items()],
            recreate=True,
        )
        placement = engine_placement(self, resolved, refs)
        volume = k8s.Volume(
            name="models", persistent_volume_claim=k8s.PersistentVolumeClaimVolumeSource(claim_name=claim)
        )
        placement = dataclasses.replace(
            placement,
            mounts=[Mount(path=MODELS, volume=volume, read_only=True)],
            init_containers=[*placement.init_containers, pull_container(resolved.image, workload.models, volume)],
            monitoring=False,
        )
        self.server = EngineServer(self, "ollama", spec, placement, owner=f"OllamaServer {workload.name!r}")
