"""Constrained scalar types shared by the config models, each with an error that says what is valid."""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from typing import Annotated

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from inferstack.catalog.instances import INSTANCE_TYPES, near_matches

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_CLUSTER_NAME = re.compile(r"^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$")
_STACK_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,63}$")
_AZ = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d[a-z]$")
_REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$")
_ACCOUNT = re.compile(r"^\d{12}$")
_PRINCIPAL = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:(role|user)/[\w+=,.@/-]+$")


def check_plain(value: str, what: str, subject: str = "") -> str:
    """``value`` if every character is printable ASCII, else a config error naming the first that is not, by
    position (a space is left to the field's own pattern). An identifier AWS or Kubernetes compares byte for byte
    (an ARN, an account id, a bucket name, a Kubernetes name…) with a look-alike letter (Cyrillic U+0430 for 'a'), a
    digit of another script, an invisible character or a line break (a YAML block scalar's) names something other
    than what it reads as — and would pass a pattern whose ``$`` allows a trailing newline, or whose ``\\d`` and
    ``\\w`` take any script's digits and letters. ``subject``: a prefix naming the part of the value (``label key
    'team': ``)."""
    for position, char in enumerate(value, start=1):
        if not " " <= char <= "~":
            name = unicodedata.name(char, "")
            raise PydanticCustomError(
                "not_ascii",
                "{subject}character {position} is {char} ({code}) — {what} is printable ASCII only: retype it (a "
                "look-alike letter, an invisible character or a line break was pasted with it)",
                {
                    "subject": subject,
                    "position": position,
                    "char": repr(char),
                    "code": f"U+{ord(char):04X}" + (f" {name}" if name else ""),
                    "what": what,
                },
            )
    return value


def _check_instance_type(value: str) -> str:
    if value in INSTANCE_TYPES:
        return value
    matches = near_matches(value)
    hint = f"did you mean {', '.join(matches)}?" if matches else "see inferstack.catalog.instances for the list"
    raise PydanticCustomError("instance_type", "unknown instance type — {hint}", {"hint": hint})


def _check_dns_label(value: str) -> str:
    check_plain(value, "a Kubernetes name")
    if len(value) <= 63 and _DNS_LABEL.match(value):
        return value
    raise PydanticCustomError(
        "k8s_name",
        "not a valid Kubernetes name — use at most 63 lowercase letters, digits and '-', "
        "starting and ending with a letter or digit (e.g. 'llm-serving')",
    )


def _check_cluster_name(value: str) -> str:
    check_plain(value, "an EKS cluster name")
    if _CLUSTER_NAME.match(value):
        return value
    raise PydanticCustomError(
        "cluster_name", "not a valid EKS cluster name — 1-100 letters, digits, '-' or '_', starting alphanumeric"
    )


def _check_stack_prefix(value: str) -> str:
    check_plain(value, "a stack name")
    if _STACK_PREFIX.match(value):
        return value
    raise PydanticCustomError(
        "stack_prefix", "not a valid stack name prefix — start with a letter, then letters, digits or '-' (max 64)"
    )


def _check_cidr(value: str) -> str:
    try:
        network = ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        raise PydanticCustomError(
            "cidr", "not an IPv4 CIDR block ({reason}) — write it as e.g. '10.0.0.0/16'", {"reason": str(exc)}
        ) from None
    return str(network)


#: IPv4 ranges no VPC can use: "this network" (0.0.0.0/8), loopback, link-local (the instance metadata service and
#: the Pod Identity agent answer on 169.254.169.254 and 169.254.170.23 inside every VPC), multicast and the reserved
#: class E (RFC 6890). Whether CreateVpc itself refuses each was not confirmed offline (?): a VPC in one cannot work.
UNUSABLE_VPC_RANGES: tuple[tuple[str, str], ...] = (
    ("0.0.0.0/8", "'this network'"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local (the instance metadata service, the Pod Identity agent)"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),
)


def _check_vpc_cidr(value: str) -> str:
    network = ipaddress.IPv4Network(_check_cidr(value))
    if not 16 <= network.prefixlen <= 24:
        raise PydanticCustomError("vpc_cidr", "a VPC CIDR block must be between /16 and /24 (e.g. '10.0.0.0/16')")
    for reserved, what in UNUSABLE_VPC_RANGES:
        if network.overlaps(ipaddress.IPv4Network(reserved)):
            raise PydanticCustomError(
                "vpc_cidr",
                "in {range}, {what}: no VPC can use it — use a private range such as '10.0.0.0/16', "
                "'172.16.0.0/16' or '192.168.0.0/16'",
                {"range": reserved, "what": what},
            )
    return str(network)


def _check_az(value: str) -> str:
    check_plain(value, "an Availability Zone name")
    if _AZ.match(value):
        return value
    raise PydanticCustomError("az", "not an Availability Zone name — e.g. 'us-west-2a'")


def _check_region(value: str) -> str:
    check_plain(value, "a region name")
    if _REGION.match(value):
        return value
    raise PydanticCustomError("region", "not an AWS region name — e.g. 'us-west-2'")


def _check_account(value: str) -> str:
    check_plain(value, "an AWS account id")
    if _ACCOUNT.match(value):
        return value
    raise PydanticCustomError("account", "not an AWS account id — 12 digits, quoted in YAML (e.g. '123456789012')")


def _check_principal(value: str) -> str:
    check_plain(value, "an IAM ARN")
    if _PRINCIPAL.match(value):
        return value
    raise PydanticCustomError(
        "principal", "not an IAM role or user ARN — e.g. 'arn:aws:iam::123456789012:role/platform-admins'"
    )


InstanceTypeName = Annotated[str, AfterValidator(_check_instance_type)]
KubernetesName = Annotated[str, AfterValidator(_check_dns_label)]


def _check_service_name(value: str) -> str:
    value = _check_dns_label(value)
    if not value[0].isalpha():
        raise PydanticCustomError(
            "service_name",
            "starts with a digit — it names the workload's Service, a DNS-1035 label that must start with a letter "
            "(e.g. 'llama-70b' rather than '70b')",
        )
    return value


#: A name that becomes a Service name (Kubernetes DNS-1035 label: a letter first).
ServiceName = Annotated[str, AfterValidator(_check_service_name)]
ClusterName = Annotated[str, AfterValidator(_check_cluster_name)]
StackPrefix = Annotated[str, AfterValidator(_check_stack_prefix)]
Cidr = Annotated[str, AfterValidator(_check_cidr)]
VpcCidr = Annotated[str, AfterValidator(_check_vpc_cidr)]
AvailabilityZone = Annotated[str, AfterValidator(_check_az)]
Region = Annotated[str, AfterValidator(_check_region)]
AccountId = Annotated[str, AfterValidator(_check_account)]
PrincipalArn = Annotated[str, AfterValidator(_check_principal)]


_PINNED_IMAGE = re.compile(
    r"^[a-z0-9.-]+(:[0-9]+)?/[a-z0-9._/-]+(?P<tag>:[A-Za-z0-9._-]+)?(?P<digest>@sha256:[a-f0-9]{64})?$"
)


def _check_pinned_image(value: str) -> str:
    check_plain(value, "an image reference")
    match = _PINNED_IMAGE.match(value)
    pinned = match is not None and (match["digest"] or (match["tag"] and match["tag"] != ":latest"))
    if not pinned:
        raise PydanticCustomError(
            "image",
            "not a pinned image reference — registry/repo:tag (not latest), registry/repo@sha256:digest or "
            "registry/repo:tag@sha256:digest",
        )
    return value


#: A container image pinned by tag or digest or both (``registry/repository:tag``, ``…@sha256:…``; ``latest`` moves,
#: so it is refused unless a digest pins it).
PinnedImage = Annotated[str, AfterValidator(_check_pinned_image)]
