"""SECRET-INLINE covers every string the user writes (issue 24 §4): env values, flags in ``extra_args``, mapping
entries in ``overrides`` and credential-shaped strings anywhere — and leaves names of Secrets, token counts and
tokenizers alone."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from inferstack.config import parse_config
from inferstack.rules import evaluate
from inferstack.rules.secrets import CREDENTIAL, secret_named

POOLS = {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]}
QWEN = {"name": "qwen", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}}
#: Shapes only; none is a real key.
OPENAI_LIKE = "sk-proj-" + "Q" * 40


def _findings(**fields: Any) -> list[str]:
    workload = copy.deepcopy({**QWEN, **fields})
    report = evaluate(parse_config({"compute": POOLS, "workloads": [workload]}))
    return [f.path for f in report.errors if f.rule == "SECRET-INLINE"]


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"engine": {"extra_args": ["--api-key", "abc123"]}}, "workloads[0].engine.extra_args[1]"),
        ({"engine": {"extra_args": ["--api-key=abc123"]}}, "workloads[0].engine.extra_args[0]"),
        ({"engine": {"extra_args": ["--max-loras", "2", "--api-key", "x"]}}, "workloads[0].engine.extra_args[3]"),
        (
            {"overrides": {"ConfigMap": {"data": {"api_key": "plain-text"}}}},
            "workloads[0].overrides.ConfigMap.data.api_key",
        ),
        (
            {"overrides": {"Deployment": {"metadata": {"annotations": {"note": OPENAI_LIKE}}}}},
            "workloads[0].overrides.Deployment.metadata.annotations.note",
        ),
    ],
)
def test_a_literal_credential_is_refused_where_it_is_written(fields, path):
    assert _findings(**fields) == [path]


@pytest.mark.parametrize(
    "fields",
    [
        {"engine": {"extra_args": ["--max-loras", "2"]}},
        {"overrides": {"ConfigMap": {"data": {"max_tokens": "8192", "tokenizer": "auto"}}}},
        {"engine": {"extra_args": ["--tokenizer-mode", "auto"]}},
        {"engine": {"extra_args": ["--enable-lora", "--max-loras", "2"]}},
        {"model": {"id": "meta-llama/Llama-3.2-1B-Instruct", "hf_token_secret": {"name": "hf-token", "key": "token"}}},
    ],
)
def test_names_of_secrets_counts_and_tokenizers_pass(fields):
    assert _findings(**fields) == []


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("--api-key", True),
        ("--hf-token", True),
        ("NGC_API_KEY", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("apiKey", True),
        ("db_password", True),
        ("--max-num-batched-tokens", False),
        ("--tokenizer", False),
        ("hf_token_secret", False),
        ("pull_secrets", False),
        ("--ssl-keyfile", False),
    ],
)
def test_secret_names(name, secret):
    assert secret_named(name) is secret


@pytest.mark.parametrize(
    "text",
    [OPENAI_LIKE, "ghp_" + "a" * 36, "xoxb-" + "1" * 12, "-----BEGIN RSA PRIVATE KEY-----", "hf_" + "A" * 34],
)
def test_credential_shapes(text):
    assert CREDENTIAL.search(f"value: {text}")


@pytest.mark.parametrize("text", ["disk-" + "a" * 30, "task-" + "b" * 30, "sk-short", "sha256:" + "0" * 64])
def test_lookalikes_are_not_credentials(text):
    assert not CREDENTIAL.search(text)
