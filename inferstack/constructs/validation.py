"""Construction-time checks of construct props, in aws-eks-v2's style: the error names the construct, the prop,
the bad value and what would be valid. Constructs call these before they create anything."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_PORT_NAME = re.compile(r"^(?=.*[a-z])[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
_QUANTITY = re.compile(r"^[+]?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?\d+)?$")
#: An unresolved CDK token (a deploy-time value): never judged here.
_TOKEN = re.compile(r"\$\{Token\[[^\]]+\]\}")


class PropError(ValueError):
    """A construct prop with an invalid value."""


def _fail(owner: str, prop: str, value: object, valid: str) -> PropError:
    return PropError(f"{owner}: {prop} {value!r} — {valid}")


def dns_label(owner: str, prop: str, value: str) -> None:
    """A Kubernetes name that must be an RFC 1123 label (Service, namespace, container, port names)."""
    if _TOKEN.search(value):
        return
    if len(value) > 63 or not _DNS_LABEL.match(value):
        raise _fail(owner, prop, value, "must be lowercase letters, digits and '-', start and end alphanumeric, ≤ 63")


_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def dns_subdomain(owner: str, prop: str, value: str) -> None:
    """A Kubernetes object name that must be an RFC 1123 subdomain (most kinds: NetworkPolicy, ConfigMap…)."""
    if _TOKEN.search(value):
        return
    if len(value) > 253 or not _DNS_SUBDOMAIN.match(value):
        raise _fail(
            owner, prop, value, "must be lowercase letters, digits, '-' and '.', alphanumeric at both ends, ≤ 253"
        )


def port_name(owner: str, prop: str, value: str) -> None:
    """An IANA service name (container port names): ≤ 15 characters, lowercase alphanumerics and '-'."""
    if len(value) > 15 or "--" in value or not _PORT_NAME.match(value):
        raise _fail(owner, prop, value, "must be ≤ 15 lowercase letters, digits and single '-', with a letter")


def pinned_image(owner: str, prop: str, value: str) -> None:
    """An image pinned by tag or digest (never ``latest`` or untagged: a restart could pull something else). A CDK
    token is taken as pinned: it resolves at deploy, e.g. to a container asset's URI, tagged with the asset's
    content hash."""
    if _TOKEN.search(value):
        return
    reference = value.split("@", 1)
    if len(reference) == 2 and reference[1].startswith("sha256:"):
        return
    slash, colon = value.rfind("/"), value.rfind(":")
    tag = value[colon + 1 :] if colon > slash else ""
    if not tag or tag == "latest":
        raise _fail(owner, prop, value, "pin the image by tag or digest, e.g. vllm/vllm-openai:v0.19.0")


def quantities(owner: str, prop: str, values: Mapping[str, str]) -> None:
    """Every value a Kubernetes quantity (``8``, ``500m``, ``48Gi``)."""
    for key, value in values.items():
        if not _TOKEN.search(value) and not _QUANTITY.match(value):
            raise _fail(owner, f"{prop}[{key!r}]", value, "must be a Kubernetes quantity such as 8, 500m or 48Gi")


def extended_resources_equal(owner: str, requests: Mapping[str, str], limits: Mapping[str, str]) -> None:
    """Extended resources (``nvidia.com/gpu``, ``aws.amazon.com/neuron``, ``vpc.amazonaws.com/efa``) need limits
    equal to requests: the API server rejects anything else, and one without a limit is never allocated."""
    for name in sorted(set(requests) | set(limits)):
        if "/" in name and requests.get(name, limits.get(name)) != limits.get(name):
            raise _fail(
                owner,
                f"limits[{name!r}]",
                limits.get(name),
                f"extended resources take a limit equal to the request ({requests.get(name)})",
            )


def at_least(owner: str, prop: str, value: float, minimum: float, why: str) -> None:
    if value < minimum:
        raise _fail(owner, prop, value, f"must be ≥ {minimum:g} ({why})")


def one_of(owner: str, prop: str, value: str, valid: Iterable[str]) -> None:
    options = sorted(valid)
    if value not in options:
        raise _fail(owner, prop, value, f"valid: {', '.join(options)}")


_NAME_PART = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def qualified_name(owner: str, prop: str, value: str) -> None:
    """A label, annotation or taint key: an optional DNS-subdomain prefix and ``/``, then a name of ≤ 63
    alphanumerics, '-', '_' and '.', alphanumeric at both ends (``inferstack.io/pool``, ``nvidia.com/gpu``)."""
    if _TOKEN.search(value):
        return
    prefix, _, name = value.rpartition("/")
    valid_prefix = not prefix or (len(prefix) <= 253 and _DNS_SUBDOMAIN.match(prefix))
    if not valid_prefix or len(name) > 63 or not _NAME_PART.match(name):
        raise _fail(
            owner,
            prop,
            value,
            "must be [prefix/]name: a DNS-subdomain prefix, a name of ≤ 63 alphanumerics, '-', "
            "'_' and '.', alphanumeric at both ends",
        )


def label_value(owner: str, prop: str, value: str) -> None:
    """A label value: empty, or ≤ 63 alphanumerics, '-', '_' and '.', alphanumeric at both ends."""
    if _TOKEN.search(value):
        return
    if value and (len(value) > 63 or not _NAME_PART.match(value)):
        raise _fail(
            owner, prop, value, "must be empty or ≤ 63 alphanumerics, '-', '_' and '.', alphanumeric at both ends"
        )
