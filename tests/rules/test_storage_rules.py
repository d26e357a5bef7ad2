"""Storage rules: compliant and non-compliant cases."""

from __future__ import annotations

from typing import ClassVar

from inferstack.config import parse_config
from inferstack.rules import storage

POOLS = {
    "karpenter_pools": [
        {"name": "gpu", "instance_families": ["g6e"]},
        {"name": "gpu-z1", "instance_families": ["p5"], "availability_zone": 1},
    ]
}


def cfg(workload: dict, storage_config: dict | None = None):
    base = {"name": "w", "pool": "gpu", **workload}
    return parse_config({"compute": POOLS, "storage": storage_config or {}, "workloads": [base]})


QWEN = {"id": "Qwen/Qwen3-8B"}
FSX_QWEN = {"pool": "gpu-z1", "model": {"id": "Qwen/Qwen3-8B", "source": {"type": "fsx"}}}
LLAMA = {"id": "meta-llama/Llama-3.1-8B-Instruct"}


class TestBackend:
    def test_s3_with_bucket_is_compliant(self):
        assert list(storage.check_backend(cfg({"model": QWEN}))) == []

    def test_s3_without_bucket_is_flagged(self):
        (finding,) = storage.check_backend(cfg({"model": QWEN}, {"model_bucket": None}))
        assert finding.rule == "MODEL-SOURCE-BACKEND" and finding.path == "workloads[0].model.source.type"

    def test_fsx_source_without_fsx_is_flagged(self):
        (finding,) = storage.check_backend(cfg({"model": {**QWEN, "source": {"type": "fsx"}}}))
        assert "storage.fsx is not set" in finding.message


class TestFsxZone:
    FSX: ClassVar[dict] = {"fsx": {"availability_zone": 1}}

    def test_same_zone_is_compliant(self):
        config = cfg(FSX_QWEN, self.FSX)
        assert list(storage.check_fsx_zone(config)) == []

    def test_unpinned_pool_is_flagged(self):
        (finding,) = storage.check_fsx_zone(cfg({"model": {**QWEN, "source": {"type": "fsx"}}}, self.FSX))
        assert finding.rule == "FSX-AZ" and "availability_zone: 1" in finding.fix

    def test_other_zone_is_flagged(self):
        config = cfg(
            {"pool": "gpu-z1", "model": {**QWEN, "source": {"type": "fsx"}}}, {"fsx": {"availability_zone": 0}}
        )
        (finding,) = storage.check_fsx_zone(config)
        assert "zone 1 but FSx is in zone 0" in finding.message


class TestPrefix:
    def test_prefix_under_import_prefix_is_compliant(self):
        config = cfg(
            {"pool": "gpu-z1", "model": {**QWEN, "source": {"type": "fsx"}}}, {"fsx": {"availability_zone": 1}}
        )
        assert list(storage.check_prefix(config)) == []

    def test_prefix_outside_import_prefix_is_flagged(self):
        model = {**QWEN, "source": {"type": "fsx", "prefix": "other/qwen/"}}
        (finding,) = storage.check_prefix(cfg({"pool": "gpu-z1", "model": model}, {"fsx": {"availability_zone": 1}}))
        assert finding.rule == "MODEL-PREFIX" and finding.path == "workloads[0].model.source.prefix"


class TestToken:
    def test_ungated_model_needs_no_token(self):
        assert list(storage.check_token(cfg({"model": QWEN}))) == []

    def test_gated_model_with_token_is_compliant(self):
        model = {**LLAMA, "hf_token_secret": {"name": "hf-token"}}
        assert list(storage.check_token(cfg({"model": model}))) == []

    def test_gated_model_synced_without_token_is_flagged(self):
        (finding,) = storage.check_token(cfg({"model": LLAMA}))
        assert finding.rule == "HF-TOKEN" and finding.path == "workloads[0].model.hf_token_secret"

    def test_gated_model_from_image_needs_no_token(self):
        model = {**LLAMA, "source": {"type": "image", "image": "example.com/llm/llama:1.0", "path": "/weights"}}
        assert list(storage.check_token(cfg({"model": model}))) == []
