"""``ami`` of a Karpenter pool: which AMI its EC2NodeClass launches (``amiSelectorTerms``, ``amiFamily``).

Either an EKS-optimized AMI release by alias (``al2023@v20260714``, ``bottlerocket@v1.51.0``: Karpenter resolves the
NVIDIA, Neuron or standard variant per instance type), or a team's own AMIs by selector terms with the family that
says how Karpenter writes their user data. Every rule here is one of the EC2NodeClass CRD's (Karpenter v1.14.1,
``pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml``: its CEL rules, which no offline check evaluates) or of
Karpenter's alias resolution (``pkg/providers/amifamily/bottlerocket.go``, ``al2023.go``), so a config that passes
them is one the API server and Karpenter accept.
"""

from __future__ import annotations

import re
import tomllib
from enum import StrEnum

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from inferstack.config.base import StrictModel
from inferstack.config.types import check_plain

#: AWS tag text (Tagging AWS resources: letters, digits, spaces and _ . : / = + - @); a selector value may be ``*``.
_TAG_KEY = re.compile(r"^[\w .:/=+\-@]+$", re.ASCII)
_TAG_VALUE = re.compile(r"^([\w .:/=+\-@]+|\*)$", re.ASCII)
#: The CRD's pattern of an AMI id.
_AMI_ID = re.compile(r"^ami-[0-9a-z]+$")
#: An AL2023 EKS AMI release (awslabs/amazon-eks-ami tags: ``v20260714``).
_AL2023_RELEASE = re.compile(r"^v\d{8}$")
#: A Bottlerocket release (bottlerocket-os/bottlerocket tags: ``v1.51.0``; Karpenter trims the ``v``).
_BOTTLEROCKET_RELEASE = re.compile(r"^v\d+\.\d+\.\d+$")


class AmiFamily(StrEnum):
    """How Karpenter bootstraps the node (the EC2NodeClass ``amiFamily``): the user-data format and the volumes."""

    AL2023 = "AL2023"
    """Amazon Linux 2023: nodeadm reads a ``NodeConfig`` (YAML) or a MIME multi-part document; one root volume,
    ``/dev/xvda``."""
    BOTTLEROCKET = "Bottlerocket"
    """Bottlerocket: TOML settings; a small OS volume ``/dev/xvda`` and a data volume ``/dev/xvdb`` for images and
    containers."""


#: The alias family of each family, as Karpenter's aliases spell it. AL2 (no AMI for Kubernetes 1.33 and later)
#: and the Windows families (no accelerated AMI) are not offered.
ALIAS_FAMILIES: dict[str, AmiFamily] = {"al2023": AmiFamily.AL2023, "bottlerocket": AmiFamily.BOTTLEROCKET}
#: What a pinned release of each alias family looks like.
_RELEASE = {
    AmiFamily.AL2023: (_AL2023_RELEASE, "v20260714"),
    AmiFamily.BOTTLEROCKET: (_BOTTLEROCKET_RELEASE, "v1.51.0"),
}


def check_selector_tags(tags: dict[str, str], error: str = "tag") -> dict[str, str]:
    """``tags`` as a Karpenter selector takes them: AWS tag keys of 1-128 characters, values of 1-256 or ``*``
    (any); an empty value is refused (the CRD's CEL rule)."""
    for key, value in tags.items():
        check_plain(key, "a tag key", subject=f"tag key {key[:60]!r}: ")
        check_plain(value, "a tag value", subject=f"the value of tag {key[:60]!r}: ")
        if (
            not _TAG_KEY.fullmatch(key)
            or not 1 <= len(key) <= 128
            or len(value) > 256
            or not _TAG_VALUE.fullmatch(value)
        ):
            raise PydanticCustomError(
                error,
                "{key}: {value} is not an AWS tag to select by — a key of 1-128 and a value of 1-256 letters, "
                "digits, spaces and _ . : / = + - @ (or * for any value; Karpenter refuses an empty one)",
                {"key": repr(key)[:60], "value": repr(value)[:60]},
            )
    return tags


class AmiSelectorTerm(StrictModel):
    """One ``amiSelectorTerms`` entry: the AMIs matching all of its fields (terms are ORed). ``id`` alone,
    ``ssm_parameter`` alone, or ``name`` and/or ``tags`` (with ``owner`` narrowing them)."""

    id: str | None = None
    """An AMI id, e.g. ``ami-0123456789abcdef0``: exactly that image in the region. Default none."""
    name: str | None = Field(default=None, min_length=1, max_length=128)
    """The AMI's name (EC2's name field, not a Name tag); ``*`` wildcards allowed. Default none."""
    owner: str | None = Field(default=None, min_length=1, max_length=64)
    """Owner of the AMIs ``name`` or ``tags`` select: an account id, ``self``, ``amazon`` or ``aws-marketplace``.
    Default: with ``name``, Karpenter's ``self`` and ``amazon``; with ``tags`` alone, any owner (Karpenter v1.14.1
    ``pkg/providers/amifamily/ami.go``)."""
    tags: dict[str, str] = Field(default_factory=dict, max_length=20)
    """AMI tags, e.g. ``{team: ml-platform}``; ``*`` matches any value. Default none."""
    ssm_parameter: str | None = Field(default=None, min_length=1, max_length=2048)
    """An SSM parameter (name or ARN) that holds the AMI id. Default none."""

    @field_validator("id")
    @classmethod
    def _id(cls, value: str | None) -> str | None:
        if value is not None and not _AMI_ID.fullmatch(value):
            raise PydanticCustomError(
                "ami_id", "{value} is not an AMI id — e.g. ami-0123456789abcdef0", {"value": value[:60]}
            )
        return value

    @field_validator("name", "owner", "ssm_parameter")
    @classmethod
    def _plain(cls, value: str | None) -> str | None:
        if value is not None:
            check_plain(value, "an AMI selector")
        return value

    @field_validator("tags")
    @classmethod
    def _tags(cls, tags: dict[str, str]) -> dict[str, str]:
        return check_selector_tags(tags, "ami_tag")

    @model_validator(mode="after")
    def _shape(self) -> AmiSelectorTerm:
        selectors = [f for f in ("id", "name", "tags", "ssm_parameter") if getattr(self, f)]
        if not selectors:
            raise PydanticCustomError(
                "ami_term_empty",
                "selects nothing — give id, name, tags or ssm_parameter (owner only narrows name or tags)",
            )
        if self.id is not None and (len(selectors) > 1 or self.owner is not None):
            raise PydanticCustomError(
                "ami_term_id",
                "id selects one AMI and takes no other field (the EC2NodeClass CRD refuses id with name, tags or "
                "owner; with ssm_parameter Karpenter would read one and ignore the other) — put the other selectors "
                "in a term of their own",
            )
        if self.ssm_parameter is not None and (len(selectors) > 1 or self.owner is not None):
            raise PydanticCustomError(
                "ami_term_ssm",
                "ssm_parameter selects the one AMI its parameter holds: Karpenter v1.14.1 ignores name, tags and owner "
                "beside it (pkg/providers/amifamily/ami.go) — put them in a term of their own",
            )
        return self

    def to_manifest(self) -> dict[str, object]:
        """The term as the EC2NodeClass spells it."""
        term: dict[str, object] = {}
        for field, key in (("id", "id"), ("name", "name"), ("owner", "owner"), ("ssm_parameter", "ssmParameter")):
            if getattr(self, field) is not None:
                term[key] = getattr(self, field)
        if self.tags:
            term["tags"] = dict(self.tags)
        return term


class KarpenterAmiConfig(StrictModel):
    """The AMI of a Karpenter pool: ``alias`` (an EKS-optimized release) or ``terms`` (your own AMIs) with their
    ``family``."""

    alias: str | None = Field(default=None, max_length=30)
    """An EKS-optimized AMI release, ``family@version``: ``al2023@v20260714`` or ``bottlerocket@v1.51.0``. Pinned:
    ``latest`` drifts every node whenever AWS publishes an AMI, and is refused. Karpenter picks the NVIDIA, Neuron or
    standard variant per instance type. Default: the catalog's AL2023 release."""
    terms: tuple[AmiSelectorTerm, ...] = Field(default=(), max_length=30)
    """Your own AMIs: selector terms (ORed), e.g. ``[{tags: {team: ml-platform}, owner: self}]``. The AMIs must
    carry what the pool's accelerators need (inferstack installs no NVIDIA driver: rule KARPENTER-CUSTOM-AMI).
    Default none."""
    family: AmiFamily | None = None
    """How Karpenter bootstraps the nodes: ``AL2023`` or ``Bottlerocket``. Required with ``terms``; with ``alias``
    it follows the alias (and may only repeat it). Default: the alias's."""

    @field_validator("alias")
    @classmethod
    def _alias(cls, alias: str | None) -> str | None:
        if alias is None:
            return None
        check_plain(alias, "an AMI alias")
        family_name, _, version = alias.partition("@")
        if family_name not in ALIAS_FAMILIES or not version:
            raise PydanticCustomError(
                "ami_alias",
                "{alias} is not an AMI alias inferstack offers — family@version of {families}, e.g. "
                "al2023@v20260714 or bottlerocket@v1.51.0 (AL2 has no AMI for Kubernetes 1.33 and later; Windows "
                "no accelerated one)",
                {"alias": alias[:40], "families": ", ".join(ALIAS_FAMILIES)},
            )
        family = ALIAS_FAMILIES[family_name]
        pattern, example = _RELEASE[family]
        if version == "latest":
            raise PydanticCustomError(
                "ami_alias_latest",
                "{alias}: 'latest' moves every node to each new AMI as AWS publishes it (Karpenter drifts them) — "
                "pin a release, e.g. {family_name}@{example}",
                {"alias": alias, "family_name": family_name, "example": example},
            )
        if not pattern.fullmatch(version):
            raise PydanticCustomError(
                "ami_alias_version",
                "{alias}: {version} is not a release of {family} — e.g. {family_name}@{example} (releases are "
                "written with their leading v)",
                {
                    "alias": alias,
                    "version": version[:30],
                    "family": family.value,
                    "family_name": family_name,
                    "example": example,
                },
            )
        return alias

    @model_validator(mode="after")
    def _one_way(self) -> KarpenterAmiConfig:
        if (self.alias is None) == (not self.terms):
            raise PydanticCustomError(
                "ami_one_way",
                "set exactly one of alias (an EKS-optimized release, e.g. bottlerocket@v1.51.0) or terms (your own "
                "AMIs, with family)",
            )
        if self.terms and self.family is None:
            raise PydanticCustomError(
                "ami_family",
                "terms select your own AMIs: say how Karpenter bootstraps them — family: AL2023 or Bottlerocket",
            )
        if self.alias is not None and self.family is not None and self.family is not self.alias_family:
            raise PydanticCustomError(
                "ami_family_alias",
                "family {family} contradicts alias {alias} ({alias_family}) — leave family out",
                {"family": self.family.value, "alias": self.alias, "alias_family": self.alias_family.value},
            )
        return self

    @property
    def alias_family(self) -> AmiFamily:
        """The family of ``alias`` (AL2023 without one)."""
        return ALIAS_FAMILIES[self.alias.partition("@")[0]] if self.alias else AmiFamily.AL2023

    @property
    def effective_family(self) -> AmiFamily:
        """The family the nodes boot: ``family``, else the alias's."""
        return self.family or self.alias_family

    @property
    def custom(self) -> bool:
        """Your own AMIs (``terms``), not an EKS-optimized release."""
        return bool(self.terms)

    def selector_terms(self) -> list[dict[str, object]]:
        """``amiSelectorTerms`` of the EC2NodeClass."""
        return [{"alias": self.alias}] if self.alias else [t.to_manifest() for t in self.terms]


#: Types of the ``settings.kubernetes`` keys Karpenter v1.14.1 decodes (``bootstrap/bottlerocketsettings.go``
#: ``BottlerocketKubernetes``): a key of another type fails every launch of the pool. Tables of other shapes
#: (credential-providers, static-pods, topology-manager-policy-options) are only checked to be tables.
_STRING_KEYS = frozenset(
    {
        "api-server", "cloud-provider", "cluster-certificate", "cluster-name", "cluster-dns-ip",
        "container-log-max-size", "cpu-manager-policy", "cpu-manager-reconcile-period", "memory-manager-policy",
        "topology-manager-scope", "topology-manager-policy", "image-gc-high-threshold-percent",
        "image-gc-low-threshold-percent", "shutdown-grace-period", "shutdown-grace-period-for-critical-pods",
        "cluster-domain", "container-log-monitor-interval", "hostname-override-source",
    }
)  # fmt: skip
_INTEGER_KEYS = frozenset(
    {
        "max-pods", "eviction-max-pod-grace-period", "registry-qps", "registry-burst", "event-qps", "event-burst",
        "kube-api-qps", "kube-api-burst", "container-log-max-files", "ids-per-pod", "pod-pids-limit",
        "container-log-max-workers", "log-level",
    }
)  # fmt: skip
_BOOLEAN_KEYS = frozenset(
    {
        "server-tls-bootstrap", "cpu-cfs-quota-enforced", "seccomp-default",
        "device-ownership-from-security-context", "single-process-oom-kill",
    }
)  # fmt: skip
_STRING_MAP_KEYS = frozenset(
    {"node-labels", "eviction-hard", "eviction-soft", "eviction-soft-grace-period", "kube-reserved", "system-reserved"}
)
_STRING_LIST_KEYS = frozenset({"allowed-unsafe-sysctls", "cpu-manager-policy-options"})
_TABLE_KEYS = frozenset({"credential-providers", "static-pods", "topology-manager-policy-options", "node-taints"})


def _kubernetes_setting_type(key: str, value: object) -> str | None:
    """What ``settings.kubernetes.<key>`` must be when ``value`` is not that (None when it fits or is not decoded)."""
    if key in _STRING_KEYS and not isinstance(value, str):
        return "a string"
    if key in _INTEGER_KEYS and (isinstance(value, bool) or not isinstance(value, int)):
        return "an integer"
    if key in _BOOLEAN_KEYS and not isinstance(value, bool):
        return "true or false"
    if key in _STRING_MAP_KEYS and not (isinstance(value, dict) and all(isinstance(v, str) for v in value.values())):
        return "a table of strings"
    if key in _STRING_LIST_KEYS and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        return "a list of strings"
    if key in _TABLE_KEYS and not isinstance(value, dict):
        return "a table"
    if key == "node-taints" and not all(
        isinstance(v, list) and all(isinstance(t, str) for t in v)
        for v in value.values()  # type: ignore[union-attr]
    ):
        return "a table of lists of strings (value:Effect)"
    return None


def _check_bottlerocket_settings(settings: dict[str, object]) -> None:
    """The tables and types Karpenter decodes from Bottlerocket user data (``UnmarshalTOML``)."""
    root = settings.get("settings", {})
    if not isinstance(root, dict):
        raise PydanticCustomError(
            "user_data_toml", "user_data: Bottlerocket's settings must be a TOML table, [settings]"
        )
    for table in ("kubernetes", "bootstrap-commands"):
        if not isinstance(root.get(table, {}), dict):
            raise PydanticCustomError(
                "user_data_toml",
                "user_data: settings.{table} must be a TOML table ([settings.{table}]) — Karpenter would fail every "
                "launch of the pool",
                {"table": table},
            )
    kubernetes = root.get("kubernetes", {})
    assert isinstance(kubernetes, dict)
    for key, value in kubernetes.items():
        expected = _kubernetes_setting_type(key, value)
        if expected is not None:
            raise PydanticCustomError(
                "user_data_type",
                "user_data: settings.kubernetes.{key} must be {expected}, not {value} — Karpenter v1.14.1 decodes it "
                "and would fail every launch of the pool",
                {"key": key, "expected": expected, "value": repr(value)[:40]},
            )


def check_user_data(user_data: str, family: AmiFamily, custom: bool = False) -> None:
    """Refuse user data the family's bootstrap cannot read, as Karpenter v1.14.1 reads it: Bottlerocket parses it as
    TOML and decodes the settings it merges its own into, failing every launch when it cannot
    (``bootstrap/bottlerocket.go`` → ``NewBottlerocketConfig``, ``bottlerocketsettings.go``); nodeadm on AL2023 takes
    a MIME document, a YAML ``NodeConfig`` or a script (``bootstrap/nodeadm.go parseUserData``), so Bottlerocket's
    TOML settings there would run as a shell script. ``custom``: the pool boots its own AMIs (the fix then names
    ``ami.family``)."""
    if family is AmiFamily.BOTTLEROCKET:
        try:
            settings = tomllib.loads(user_data)
        except tomllib.TOMLDecodeError as exc:
            raise PydanticCustomError(
                "user_data_toml",
                "user_data: Bottlerocket reads it as TOML settings ([settings.kubernetes]…), and this is not TOML "
                "({reason}) — Karpenter would fail every launch of the pool",
                {"reason": str(exc)[:120]},
            ) from None
        _check_bottlerocket_settings(settings)
        return
    stripped = user_data.lstrip()
    if stripped.startswith(("MIME-Version:", "Content-Type:")):
        return
    try:
        bottlerocket = isinstance(tomllib.loads(user_data).get("settings"), dict)
    except tomllib.TOMLDecodeError:
        bottlerocket = False
    if bottlerocket:
        fix = "set ami.family: Bottlerocket" if custom else "set ami.alias to bottlerocket@<release>"
        raise PydanticCustomError(
            "user_data_family",
            "user_data: these are Bottlerocket settings ([settings…] in TOML), and the pool boots AL2023, whose "
            "nodeadm would run them as a shell script — {fix}, or give a nodeadm NodeConfig",
            {"fix": fix},
        )
