"""Secrets stay out of the config: a credential written into it would end up in the CloudFormation template, the
cloud assembly (cdk.out) and the cluster's objects. inferstack only names Secrets created outside it; this rule
refuses what looks like the credential itself, in every string the user writes:

* an env var with a secret's name and a literal value (``overrides``);
* a command-line flag with a secret's name and a value (``extra_args: [--api-key, …]`` or ``--api-key=…``);
* a mapping entry with a secret's name and a literal string (``overrides`` of a gateway's config: ``api_key: …``);
* any string shaped like a known credential (Hugging Face, NGC, AWS access key, OpenAI-style ``sk-`` keys, GitHub
  and Slack tokens, a PEM private key, a dockerconfigjson auth).

A name is a secret's when one of its words (split at ``-``, ``_``, ``.`` and case changes) is token, secret,
password, passwd or credential(s), or it holds api-key / apikey / access-key: ``--max-num-batched-tokens`` and
``--tokenizer`` are not, ``--hf-token`` and ``--api-key`` are. Fields that name a Secret (``*_secret``,
``*_secrets``) hold its name, not its value."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from inferstack.config.model import InferstackConfig
from inferstack.rules.base import Finding, Rule

INLINE = "SECRET-INLINE"
#: Env var names that hold credentials (HF_TOKEN, NGC_API_KEY, AWS_SECRET_ACCESS_KEY, *_PASSWORD…).
SECRET_NAME = re.compile(r"(?i)(token|api_?key|secret|password|passwd|credential)")
#: Credential shapes: Hugging Face user tokens, NGC API keys, AWS access key ids, OpenAI-style keys (``sk-``,
#: ``sk-proj-``; LiteLLM master keys are written so), GitHub and Slack tokens, PEM private keys, a dockerconfigjson
#: auth.
CREDENTIAL = re.compile(
    r"(hf_[A-Za-z0-9]{30,}|nvapi-[A-Za-z0-9_-]{30,}|\b(AKIA|ASIA)[A-Z0-9]{16}\b|\bsk-[A-Za-z0-9_-]{20,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{36,}|\bxox[abprs]-[A-Za-z0-9-]{10,}|-----BEGIN [A-Z ]*PRIVATE KEY-----|\"auths\"\s*:)"
)
_SECRET_WORDS = frozenset({"token", "secret", "password", "passwd", "credential", "credentials"})
_SECRET_PAIRS = ("apikey", "api-key", "accesskey", "access-key", "secretkey", "secret-key")


def secret_named(name: str) -> bool:
    """Whether ``name`` (an env var, a flag, a key) names a credential (see the module docstring)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", name.strip("-")).lower()
    words = re.split(r"[-_.]+", spaced)
    if words[-1] in ("secret", "secrets") and len(words) > 1:
        return False  # names a Secret object (hf_token_secret, pull_secrets), not its value
    joined = "-".join(words)
    return bool(_SECRET_WORDS & set(words)) or any(p in joined or p in joined.replace("-", "") for p in _SECRET_PAIRS)


def _flag_values(items: list[Any] | tuple[Any, ...], path: str) -> Iterator[tuple[str, str]]:
    """``(path, why)`` of each ``--secret-flag value`` / ``--secret-flag=value`` in a list of arguments."""
    for index, item in enumerate(items):
        if not isinstance(item, str) or not item.startswith("-"):
            continue
        flag, eq, inline = item.partition("=")
        if not secret_named(flag):
            continue
        following = items[index + 1] if index + 1 < len(items) else None
        if eq and inline:
            yield f"{path}[{index}]", f"flag {flag} carries a literal value"
        elif not eq and isinstance(following, str) and following and not following.startswith("-"):
            yield f"{path}[{index + 1}]", f"flag {flag} is followed by a literal value"


def inline_secrets(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """``(path, why)`` of every credential-like item inside ``value`` (a config fragment)."""
    if isinstance(value, Mapping):
        name, literal = value.get("name"), value.get("value")
        if isinstance(name, str) and isinstance(literal, str) and SECRET_NAME.search(name) and literal:
            yield f"{path}.value", f"env {name} carries a literal value"
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and isinstance(item, str) and item and secret_named(key) and key != "name":
                yield child, f"{key} carries a literal value"
                continue
            yield from inline_secrets(item, child)
    elif isinstance(value, list | tuple):
        yield from _flag_values(value, path)
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
