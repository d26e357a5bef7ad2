"""Kubernetes label and annotation keys and values, checked as the API server checks them (``IsQualifiedName``,
``IsValidLabelValue``), each refusal naming the key."""

from __future__ import annotations

import re

from pydantic_core import PydanticCustomError

from inferstack.config.types import check_plain

LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")


def check_key(key: str, what: str = "label") -> str:
    """``key`` if it is a qualified name (an optional DNS-subdomain prefix of at most 253 and ``/``, then a name of at
    most 63), else a config error naming it. ``what``: ``label`` or ``annotation``, for the message."""
    check_plain(key, f"an {what} key" if what[0] in "aeiou" else f"a {what} key", subject=f"{what} key {key[:60]!r}: ")
    prefix = key.rpartition("/")[0]
    if len(prefix) > 253:
        raise PydanticCustomError(
            f"{what}_key",
            "{key} has a {length}-character prefix: a {what} key's prefix is a DNS subdomain of at most 253",
            {"key": key[:60] + "…", "length": len(prefix), "what": what},
        )
    if not LABEL_KEY.match(key):
        raise PydanticCustomError(
            f"{what}_key",
            "{key} is not a valid {what} key — e.g. 'team' or 'example.com/tier'",
            {"key": key, "what": what},
        )
    return key


def check_label(key: str, value: str) -> None:
    """A label ``key: value`` the API server accepts, else a config error naming the key."""
    check_key(key)
    check_plain(value, "a label value", subject=f"the value of label {key[:60]!r}: ")
    if not _LABEL_VALUE.match(value):
        raise PydanticCustomError(
            "label_value",
            "{value} (label {key}) is not a valid label value — at most 63 letters, digits, '-', '_', '.'",
            {"key": key, "value": value},
        )


def key_domain(key: str) -> str:
    """The DNS prefix of a qualified key (``example.com`` of ``example.com/tier``; empty for ``tier``)."""
    return key.rpartition("/")[0]


def in_domains(key: str, domains: tuple[str, ...]) -> str | None:
    """The first of ``domains`` whose subtree holds ``key``'s prefix (the domain itself or a subdomain of it)."""
    prefix = key_domain(key)
    return next((d for d in domains if prefix == d or prefix.endswith(f".{d}")), None)
