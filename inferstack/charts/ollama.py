"""OllamaChart: the ``ollama`` kind — an Ollama server on the shared serving pod with a persistent model volume:
``ollama serve`` on 11434, the models pulled by a postStart hook once the server answers (probes wait for it; the
upstream otwld chart does the same), health on ``GET /``. One pod owns the ReadWriteOnce volume, so pods are
replaced by stopping the old one first."""

from __future__ import annotations

import dataclasses
import shlex

from cdk8s_plus_36 import k8s

from inferstack.charts.engine import engine_placement
from inferstack.charts.workload import StorageRefs, WorkloadChart
from inferstack.config.ollama import OllamaWorkloadConfig
from inferstack.constructs.engine import EngineServer, EngineSpec
from inferstack.constructs.pod.mounts import Mount
from inferstack.plan import ResolvedWorkload

PORT = 11434
HOME = "/home/ollama"
#: Where the model volume is mounted (``OLLAMA_MODELS``).
MODELS = "/ollama/models"


def pull_command(models: tuple[str, ...]) -> list[str]:
    """The postStart hook: wait until the server answers, then pull each model (the CLI talks to OLLAMA_HOST)."""
    pulls = " && ".join(f"/bin/ollama pull {shlex.quote(model)}" for model in models)
    return ["/bin/sh", "-c", f"until /bin/ollama ps >/dev/null 2>&1; do sleep 2; done; {pulls}"]


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
            post_start=pull_command(workload.models),
            recreate=True,
        )
        placement = engine_placement(self, resolved, refs)
        volume = k8s.Volume(
            name="models", persistent_volume_claim=k8s.PersistentVolumeClaimVolumeSource(claim_name=claim)
        )
        placement = dataclasses.replace(
            placement,
            mounts=[Mount(path=MODELS, volume=volume)],
            monitoring=False,
        )
        self.server = EngineServer(self, "ollama", spec, placement, owner=f"OllamaServer {workload.name!r}")
