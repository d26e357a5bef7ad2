"""What each workload is called and what it needs of storage: service accounts, which roles read or write the
model prefix, the model-sync file set. One place, read by the plan, the charts and the stacks alike."""

from __future__ import annotations

from typing import TYPE_CHECKING

from inferstack.catalog.instances import AcceleratorKind
from inferstack.config.workloads import BUCKET_SOURCES, ModelConfig, ModelSourceType, WorkloadBase

if TYPE_CHECKING:
    from inferstack.config.model import InferstackConfig

#: Files a checkpoint format never needs: vLLM 0.19's Run:ai streamer reads every top-level ``*.safetensors`` of
#: the prefix (runai_streamer_loader / runai_utils.list_safetensors, vLLM issue 40765), so a Mistral-format repo's
#: ``consolidated.safetensors`` next to its HF shards loads the weights twice. The sync copies one layout only.
MISTRAL_FORMAT_EXCLUDE = ("model*.safetensors", "model.safetensors.index.json", "original/*")
"""Mistral format (``--config-format mistral --tokenizer-mode mistral``): params.json, tekken.json /
tokenizer.model.v*, consolidated*.safetensors — never the HF shards."""
HF_FORMAT_EXCLUDE = ("consolidated*.safetensors", "consolidated.safetensors.index.json", "params.json", "original/*")
"""HF format: config.json, tokenizer files, model-*.safetensors — never the consolidated copy or Meta's
``original/`` checkpoint."""


def sync_excludes(model: ModelConfig) -> tuple[str, ...]:
    """The files of the model repository the engine's format does not read (the sync leaves them out)."""
    return MISTRAL_FORMAT_EXCLUDE if model.arch.mistral_format else HF_FORMAT_EXCLUDE


def sync_service_account(workload: WorkloadBase) -> str:
    """Service account of the model-sync and Neuron compile Jobs (bound to the prefix writer role)."""
    return f"{workload.name}-model-sync"


def server_service_account(workload: WorkloadBase) -> str:
    """Service account of the serving pods (bound to the prefix reader role where they read S3)."""
    return workload.service_account or workload.name


def needs_sync(workload: WorkloadBase, model: ModelConfig) -> bool:
    """A Job copies ``model`` from Hugging Face into its bucket prefix first."""
    return workload.sync_model and model.source.type in BUCKET_SOURCES


def needs_reader(workload: WorkloadBase, accelerator: AcceleratorKind) -> bool:
    """Server pods read S3 themselves: Run:ai streamer (or a bucket URI the engine loads), or the Neuron fetch of
    weights + compiled artifacts."""
    sources = {model.source.type for _, model in workload.model_entries}
    return ModelSourceType.S3 in sources or accelerator is AcceleratorKind.NEURON


def namespaces_to_create(config: InferstackConfig) -> list[str]:
    """Workload namespaces inferstack owns: all of them except the built-in ones and
    ``cluster.existing_namespaces`` (never relabel a namespace somebody else owns)."""
    existing = config.cluster.preexisting_namespaces
    return sorted({w.namespace for w in config.workloads} - existing)
