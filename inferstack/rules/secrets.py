"""Secrets stay out of the config: a credential written into it would end up in the CloudFormation template, the
cloud assembly (cdk.out) and the cluster's objects. inferstack only names Secrets created outside it; this rule
refuses what looks like the credential itself — an ``overrides`` env var with a secret's name and a literal value,
or any config string shaped like a Hugging Face, NGC or AWS key."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from inferstack.config.model import InferstackConfig
from inferstack.rules.base import Finding, Rule

INLINE = "SECRET-INLINE"
#: Env var names that hold credentials (HF_TOKEN, NGC_API_KEY, AWS_SECRET_ACCESS_KEY, *_PASSWORD…).
SECRET_NAME = re.compile(r"(?i)(token|api_?key|secret|password|passwd|credential)")
#: Credential shapes: Hugging Face user tokens, NGC API keys, AWS access key ids, a dockerconfigjson auth.
CREDENTIAL = re.compile(r"(hf_[A-Za-z0-9]{30,}|nvapi-[A-Za-z0-9_-]{30,}|\b(AKIA|ASIA)[A-Z0-9]{16}\b|\"auths\"\s*:)")


def inline_secrets(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """``(path, why)`` of every credential-like item inside ``value`` (a config fragment)."""
    if isinstance(value, Mapping):
        name, literal = value.get("name"), value.get("value")
        if isinstance(name, str) and isinstance(literal, str) and SECRET_NAME.search(name) and literal:
            yield f"{path}.value", f"env {name} carries a literal value"
        for key, item in value.items():
            yield from inline_secrets(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from inline_secrets(item, f"{path}[{index}]")
    elif isinstance(value, str) and CREDENTIAL.search(value):
        yield path, "the value looks like a credential (a Hugging Face, NGC or AWS key)"


def check_inline(config: InferstackConfig) -> Iterator[Finding]:
    data = config.model_dump(mode="json", exclude_none=True)
    for path, why in inline_secrets(data, ""):
        yield Finding(
            rule=INLINE,
            path=path,
            message=f"{why}: it would be stored in the CloudFormation template, cdk.out and the cluster",
            fix="create a Kubernetes Secret outside inferstack and reference it (the model's hf_token_secret, a "
            "NIM's ngc secrets, or env valueFrom.secretKeyRef in overrides)",
        )


RULE = Rule(id=INLINE, title="No credential is written into the config", check=check_inline, acknowledgeable=False)
