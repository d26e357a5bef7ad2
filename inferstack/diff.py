"""``inferstack diff OLD NEW``: every stateful resource a config change replaces, renames, orphans or deletes, and
the data each one holds (issue 24 §9, "changes that lose nothing").

Both configs are synthesized in-process (:func:`synthesize`: no AWS call, no credentials) and their templates
compared (:func:`compare`):

* **AWS** — buckets, FSx for Lustre, KMS keys, log groups and the EKS cluster, by stack and logical ID. A logical ID
  that disappears is removed: *orphaned* under ``DeletionPolicy: Retain`` (it stays, with its data, outside the
  stack), else *deleted*. A changed property CloudFormation documents as "Update requires: Replacement"
  (:data:`STATEFUL_TYPES`) *replaces* it: a new, empty one, the old one retained under ``UpdateReplacePolicy:
  Retain``. A removed and an added logical ID of one type in one stack is a *rename* — to CloudFormation, a new
  resource and the removal of the old one. A stack whose name changes (the platform's ``name``) is a new stack:
  everything stateful in it starts empty.
* **Kubernetes** — every PersistentVolumeClaim the stacks make: the ones applied, those of StatefulSets'
  ``volumeClaimTemplates`` (a LiteLLM gateway's Postgres), Prometheus' (kube-prometheus-stack's ``storageSpec``) and
  NIMCache's, by namespace and name. A claim that disappears leaves its volume *orphaned* (a StatefulSet's claims
  outlive it; a deleted claim's volume stays under a ``Retain`` StorageClass) or *deleted*; a claim that comes back
  under another name (a *rename*) starts on an empty volume.

Changes the API refuses — the update fails, nothing is lost — are listed as *refused* and do not count as a loss,
nor do the static PersistentVolumes that only show a bucket prefix or a file system (their data stays there).
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, TypeVar

from inferstack.assembly import DEPLOY_TIME_VALUE, HELM_TYPE, json_property, manifests
from inferstack.config import InferstackConfig


class Change(StrEnum):
    REPLACED = "replaced"
    """A new, empty resource takes the old one's place; the old one is retained (outside the stack) or deleted."""
    RENAMED = "renamed"
    """It comes back under another logical ID or name: a new, empty one; the old one is orphaned or deleted."""
    ORPHANED = "orphaned"
    """It stays, with its data, outside what the stacks manage (retained, or a volume no claim uses)."""
    DELETED = "deleted"
    """It and its data are deleted."""
    REFUSED = "refused"
    """CloudFormation or Kubernetes rejects the update: the deploy fails, nothing is lost."""


@dataclass(frozen=True, kw_only=True)
class StatefulChange:
    """One stateful resource a config change touches, and what becomes of its data."""

    resource: str
    """Logical ID (AWS) or claim name (Kubernetes)."""
    kind: str
    """``AWS::S3::Bucket``, ``PersistentVolumeClaim``…"""
    where: str
    """The stack (AWS) or the namespace (Kubernetes) of the old resource."""
    change: Change
    at_stake: str
    """The data it holds, then what happens to it."""
    lost: bool = True
    """Whether data is deleted or leaves the stacks' management. False for refused changes and for volumes that
    only show data kept elsewhere."""

    @property
    def key(self) -> str:
        """What ``--accept-loss`` takes: ``<where>/<resource>``."""
        return f"{self.where}/{self.resource}"


class Synthesized(Protocol):
    """One synthesized platform: its config and its templates by stack name (a :class:`Snapshot`, or the tests'
    ``Synthesized``)."""

    @property
    def config(self) -> InferstackConfig: ...

    @property
    def templates(self) -> Mapping[str, Mapping[str, Any]]: ...


@dataclass(frozen=True)
class Snapshot:
    """What :func:`synthesize` returns: the config and its templates by stack name."""

    config: InferstackConfig
    templates: Mapping[str, Mapping[str, Any]]


def synthesize(config: InferstackConfig, context: Mapping[str, Any] | None = None) -> Snapshot:
    """Synthesize ``config`` the way ``cdk synth`` does — with ``context``, by default the ``context`` of
    ``./cdk.json`` when there is one (feature flags change templates) — without staging assets or cdk-nag, into a
    temporary directory. No AWS call is made. Raises what :func:`~inferstack.app.build_app` raises."""
    import aws_cdk as cdk

    from inferstack.app import build_app

    if context is None:
        cdk_json = Path("cdk.json")
        context = json.loads(cdk_json.read_text()).get("context", {}) if cdk_json.is_file() else {}
    with tempfile.TemporaryDirectory(prefix="inferstack-diff-") as out:
        app = cdk.App(context={**context, "aws:cdk:disable-asset-staging": True}, outdir=out)
        _, platform = build_app(config, app, nag=False)
        assembly = app.synth()
        templates = {s.stack_name: assembly.get_stack_by_name(s.stack_name).template for s in platform.stacks}
    return Snapshot(config, templates)


def compare(old: Synthesized, new: Synthesized) -> list[StatefulChange]:
    """Every stateful resource going from ``old`` to ``new`` replaces, renames, orphans, deletes or cannot update."""
    return aws_changes(old, new) + kubernetes_changes(old, new)


# -- AWS ------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class StatefulType:
    """What a CloudFormation resource type holds and which property changes replace it."""

    new: str
    """What replaces it: ``a new, empty bucket``."""
    holds: str
    """The data, when the logical ID is not one of :data:`HOLDS`."""
    replacement: tuple[str, ...]
    """Property paths (``A/B`` for nested ones) whose change CloudFormation documents as "Update requires:
    Replacement"."""
    refused: tuple[str, ...] = ()
    """Properties whose change makes the update fail (documented so, whatever ``UpdateReplacePolicy`` says)."""
    grows_only: tuple[str, ...] = ()
    """Numbers the service can only increase: a decrease makes the update fail."""


#: The facts, from the CloudFormation resource reference ("Update requires: …" of each property), read in the
#: awsdocs/aws-cloudformation-user-guide sources (doc_source/aws-resource-*.md, aws-properties-*.md, last revised
#: 2023-05…09, before that repository was retired) and checked against the CloudFormation resource schemas'
#: ``createOnlyProperties`` where cfn-lint vendors them (S3 Bucket, Logs LogGroup, FSx FileSystem of 2024-06):
#:
#: * S3 Bucket: BucketName, ObjectLockEnabled → Replacement.
#: * FSx FileSystem: BackupId, FileSystemType, FileSystemTypeVersion, KmsKeyId, SecurityGroupIds, SubnetIds →
#:   Replacement; LustreConfiguration's CopyTagsToBackups, DeploymentType, DriveCacheType, ExportPath,
#:   ImportedFileChunkSize, ImportPath, PerUnitStorageThroughput → Replacement. StorageCapacity is "No
#:   interruption", and FSx's UpdateFileSystem (API reference) only *increases* it: a decrease fails. Not confirmed
#:   offline: that a decrease fails rather than replaces, and whether newer revisions made PerUnitStorageThroughput
#:   updatable in place (listed as Replacement: the safe side).
#: * KMS Key: the property table says KeySpec, KeyUsage, MultiRegion "Replacement", but the same page says a change
#:   of KeySpec, KeyUsage, Origin or MultiRegion makes the update request *fail*, whatever UpdateReplacePolicy says
#:   — so they are refused, never replaced.
#: * EFS FileSystem: AvailabilityZoneName, Encrypted, KmsKeyId, PerformanceMode → Replacement (the reference's
#:   "Update requires: Replacement"; read from its pages in the search corpus, not every one confirmed (?)).
#: * Logs LogGroup: LogGroupName → Replacement.
#: * EKS Cluster: Name, RoleArn, EncryptionConfig, KubernetesNetworkConfig, OutpostConfig and ResourcesVpcConfig's
#:   SubnetIds and SecurityGroupIds → Replacement. Not confirmed offline: the KubernetesNetworkConfig fields added
#:   since (Auto Mode's ElasticLoadBalancing) — only ServiceIpv4Cidr and IpFamily, the 2023 fields, are compared —
#:   and whether later in-place subnet updates made SubnetIds "No interruption" (kept as Replacement).
STATEFUL_TYPES: dict[str, StatefulType] = {
    "AWS::S3::Bucket": StatefulType(
        new="a new, empty bucket", holds="its objects", replacement=("BucketName", "ObjectLockEnabled")
    ),
    "AWS::FSx::FileSystem": StatefulType(
        new="a new, empty file system",
        holds="its files",
        replacement=(
            "BackupId",
            "FileSystemType",
            "FileSystemTypeVersion",
            "KmsKeyId",
            "SecurityGroupIds",
            "SubnetIds",
            "LustreConfiguration/CopyTagsToBackups",
            "LustreConfiguration/DeploymentType",
            "LustreConfiguration/DriveCacheType",
            "LustreConfiguration/ExportPath",
            "LustreConfiguration/ImportedFileChunkSize",
            "LustreConfiguration/ImportPath",
            "LustreConfiguration/PerUnitStorageThroughput",
        ),
        grows_only=("StorageCapacity",),
    ),
    "AWS::EFS::FileSystem": StatefulType(
        new="a new, empty file system",
        holds="its files (the workloads' EFS caches)",
        replacement=("AvailabilityZoneName", "Encrypted", "KmsKeyId", "PerformanceMode"),
    ),
    "AWS::KMS::Key": StatefulType(
        new="a new key (new key material)",
        holds="its key material: what it encrypted cannot be read without it",
        replacement=(),
        refused=("KeySpec", "KeyUsage", "MultiRegion", "Origin"),
    ),
    "AWS::Logs::LogGroup": StatefulType(
        new="a new, empty log group", holds="its log events", replacement=("LogGroupName",)
    ),
    "AWS::EKS::Cluster": StatefulType(
        new="a new, empty cluster",
        holds="every Kubernetes object in it, Secrets created by hand (kubectl create secret) included",
        replacement=(
            "Name",
            "RoleArn",
            "EncryptionConfig",
            "OutpostConfig",
            "KubernetesNetworkConfig/ServiceIpv4Cidr",
            "KubernetesNetworkConfig/IpFamily",
            "ResourcesVpcConfig/SubnetIds",
            "ResourcesVpcConfig/SecurityGroupIds",
        ),
    ),
}

#: What inferstack's own resources hold, by construct ID (the logical ID without CDK's 8-character hash).
HOLDS: dict[str, str] = {
    "ModelBucket": "model weights, compiled Neuron artifacts and benchmark results",
    "AccessLogs": "the model bucket's server access logs",
    "ModelBucketKey": "the model bucket's key: its objects cannot be read without it",
    "SecretsKey": "the key of the cluster's Secrets (envelope encryption)",
    "ContainerLogsKey": "the container logs' key: they cannot be read without it",
    "FileSystem": "the model files on FSx for Lustre (imported from the bucket, and anything written there)",
    "ContainerLogs": "the pods' container logs",
    "FlowLogs": "the VPC's flow logs",
}
_HASH = re.compile(r"[0-9A-F]{8}$")
_RETAIN = ("Retain", "RetainExceptOnCreate")


def _holds(logical_id: str, cfn_type: str) -> str:
    return HOLDS.get(_HASH.sub("", logical_id), STATEFUL_TYPES[cfn_type].holds)


def _stacks_by_role(snapshot: Synthesized) -> dict[str, str]:
    """Stack name by its role (``storage``, ``workloads-2``): the name without the platform's ``<name>-``."""
    prefix = f"{snapshot.config.name}-"
    return {name.removeprefix(prefix): name for name in snapshot.templates}


def _stateful(template: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {k: r for k, r in template.get("Resources", {}).items() if r.get("Type") in STATEFUL_TYPES}


def _at(properties: Mapping[str, Any], path: str) -> Any:
    value: Any = properties
    for part in path.split("/"):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


_Name = TypeVar("_Name", str, tuple[str, str])


def _pairs(
    removed: Sequence[_Name], added: Sequence[_Name], kind: Callable[[_Name], object]
) -> list[tuple[_Name, _Name]]:
    """Removed and added names of the same kind, one to one in sorted order: renames."""
    pairs: list[tuple[_Name, _Name]] = []
    free = list(added)
    for old in sorted(removed):
        match = next((new for new in sorted(free) if kind(new) == kind(old)), None)
        if match is not None:
            free.remove(match)
            pairs.append((old, match))
    return pairs


def aws_changes(old: Synthesized, new: Synthesized) -> list[StatefulChange]:
    """Stateful CloudFormation resources removed, renamed, replaced or refused an update, stack by stack."""
    changes: list[StatefulChange] = []
    new_stacks = _stacks_by_role(new)
    for role, old_stack in sorted(_stacks_by_role(old).items()):
        before = _stateful(old.templates[old_stack])
        new_stack = new_stacks.get(role)
        if new_stack is None or new_stack != old_stack:
            changes += [_stack_gone(lid, r, old_stack, new_stack) for lid, r in sorted(before.items())]
            continue
        after = _stateful(new.templates[new_stack])
        for lid in sorted(before.keys() & after.keys()):
            change = _updated(lid, before[lid], after[lid], old_stack)
            if change is not None:
                changes.append(change)
        removed, added = sorted(before.keys() - after.keys()), sorted(after.keys() - before.keys())
        types = {lid: r["Type"] for lid, r in {**after, **before}.items()}
        renames = _pairs(removed, added, types.__getitem__)
        for old_id, new_id in renames:
            changes.append(_renamed(old_id, new_id, before[old_id], old_stack))
        for lid in sorted(set(removed) - {old_id for old_id, _ in renames}):
            changes.append(_removed(lid, before[lid], old_stack))
    return changes


def _kept_or_deleted(resource: Mapping[str, Any], policy: str) -> str:
    if resource.get(policy) in _RETAIN:
        return f"the old one stays with the data, outside the stack ({policy}: {resource[policy]})"
    return "CloudFormation deletes the old one and its data"


def _stack_gone(lid: str, resource: Mapping[str, Any], old_stack: str, new_stack: str | None) -> StatefulChange:
    cfn_type = resource["Type"]
    holds, fresh = _holds(lid, cfn_type), STATEFUL_TYPES[cfn_type].new
    if new_stack is None:
        fate = "cdk destroy would keep it" if resource.get("DeletionPolicy") in _RETAIN else "cdk destroy deletes it"
        return StatefulChange(
            resource=lid,
            kind=cfn_type,
            where=old_stack,
            change=Change.ORPHANED,
            at_stake=f"{holds} — stack {old_stack} leaves the app: cdk deploy no longer manages it ({fate})",
        )
    return StatefulChange(
        resource=lid,
        kind=cfn_type,
        where=old_stack,
        change=Change.REPLACED,
        at_stake=f"{holds} — the stack is now {new_stack}, a new stack with {fresh}; the old one stays in "
        f"stack {old_stack} until that is destroyed",
    )


def _updated(lid: str, before: Mapping[str, Any], after: Mapping[str, Any], stack: str) -> StatefulChange | None:
    if before["Type"] != after["Type"]:
        return _renamed(lid, lid, before, stack)
    facts = STATEFUL_TYPES[before["Type"]]
    old_props, new_props = before.get("Properties", {}), after.get("Properties", {})
    changed = [p for p in facts.replacement if _at(old_props, p) != _at(new_props, p)]
    verb = "changes" if len(changed) == 1 else "change"
    if changed:
        return StatefulChange(
            resource=lid,
            kind=before["Type"],
            where=stack,
            change=Change.REPLACED,
            at_stake=f"{_holds(lid, before['Type'])} — {', '.join(changed)} {verb}: CloudFormation creates "
            f"{facts.new}; {_kept_or_deleted(before, 'UpdateReplacePolicy')}",
        )
    refused = [p for p in facts.refused if _at(old_props, p) != _at(new_props, p)]
    refused += [
        f"{p} {_at(old_props, p)} → {_at(new_props, p)}"
        for p in facts.grows_only
        if isinstance(_at(old_props, p), int) and isinstance(_at(new_props, p), int)
        if _at(new_props, p) < _at(old_props, p)
    ]
    if refused:
        return StatefulChange(
            resource=lid,
            kind=before["Type"],
            where=stack,
            change=Change.REFUSED,
            at_stake=f"{_holds(lid, before['Type'])} — {', '.join(refused)}: the update fails and the deploy rolls "
            "back (nothing is lost)",
            lost=False,
        )
    return None


def _renamed(old_id: str, new_id: str, before: Mapping[str, Any], stack: str) -> StatefulChange:
    fresh = STATEFUL_TYPES[before["Type"]].new
    return StatefulChange(
        resource=old_id,
        kind=before["Type"],
        where=stack,
        change=Change.RENAMED,
        at_stake=f"{_holds(old_id, before['Type'])} — {new_id} is {fresh}; "
        f"{_kept_or_deleted(before, 'DeletionPolicy')}",
    )


def _removed(lid: str, before: Mapping[str, Any], stack: str) -> StatefulChange:
    retained = before.get("DeletionPolicy") in _RETAIN
    fate = (
        f"it stays with the data, outside the stack (DeletionPolicy: {before['DeletionPolicy']})"
        if retained
        else "CloudFormation deletes it and its data"
    )
    return StatefulChange(
        resource=lid,
        kind=before["Type"],
        where=stack,
        change=Change.ORPHANED if retained else Change.DELETED,
        at_stake=f"{_holds(lid, before['Type'])} — removed from the template: {fate}",
    )


# -- Kubernetes -----------------------------------------------------------------------------------------------------

#: kube-prometheus-stack's chart name and its ``kube-prometheus-stack.fullname`` / ``.prometheus.crname`` helpers
#: (templates/_helpers.tpl of chart 88.5.3, prometheus-community/helm-charts at ea930bae): the release name when it
#: contains the chart name, else ``<release>-<chart>``, cut to 26 characters; ``<fullname>-prometheus`` unless
#: ``cleanPrometheusOperatorObjectNames``. The operator (v0.93, pkg/prometheus/common.go) names the StatefulSet
#: ``prometheus-<cr>`` and, without a ``volumeClaimTemplate.metadata.name``, the claim template
#: ``prometheus-<cr>-db``.
PROMETHEUS_CHART = "kube-prometheus-stack"


@dataclass(frozen=True, kw_only=True)
class Claim:
    """A PersistentVolumeClaim the stacks make, directly or through a controller."""

    namespace: str
    name: str
    role: str
    """What it is, to pair a removed claim with an added one (a rename): ``litellm-postgres``, ``prometheus``…"""
    holds: str
    looks_lost: str = ""
    """What users see when the claim comes back empty."""
    storage_class: str | None = None
    spec: Mapping[str, Any] = field(default_factory=dict)
    outlives_owner: bool = False
    """A StatefulSet's claim: deleting the StatefulSet leaves it (``persistentVolumeClaimRetentionPolicy``'s
    default ``Retain``). Otherwise the claim goes with what makes it (the manifest, the NIMCache)."""
    owner: tuple[str, str] = ("", "")
    """(stack role, logical ID) of the CloudFormation resource that applies it or its owner."""
    statefulset: tuple[str, str, str] | None = None
    """(namespace, StatefulSet, template) of a StatefulSet's claim."""
    template_locked: bool = False
    """The stacks apply the StatefulSet, whose ``volumeClaimTemplates`` Kubernetes never lets change (the
    Prometheus operator recreates its own StatefulSet instead)."""
    view: str | None = None
    """A static volume that only shows data kept elsewhere (a bucket prefix, a file system)."""


def claims(snapshot: Synthesized) -> dict[tuple[str, str], Claim]:
    """Every claim of the platform by (namespace, name)."""
    kinds = {(w.namespace, w.name): w.kind for w in snapshot.config.workloads}
    volumes = {
        obj["metadata"]["name"]: obj
        for template in snapshot.templates.values()
        for _, obj in manifests(template)
        if obj.get("kind") == "PersistentVolume"
    }
    found: dict[tuple[str, str], Claim] = {}
    for role, stack in _stacks_by_role(snapshot).items():
        template = snapshot.templates[stack]
        for lid, obj in manifests(template):
            for claim in _claims_of(obj, (role, lid), kinds, volumes):
                found[(claim.namespace, claim.name)] = claim
        for lid, resource in template.get("Resources", {}).items():
            if resource.get("Type") == HELM_TYPE and resource["Properties"].get("Chart") == PROMETHEUS_CHART:
                for claim in _prometheus_claims(resource["Properties"], (role, lid)):
                    found[(claim.namespace, claim.name)] = claim
    return found


#: The claims of a workload's ``caches`` (:mod:`inferstack.charts.caches` labels them with their component): what
#: each holds, and what happens when it comes back empty.
CACHE_CLAIMS = {
    "compile-cache": ("compile cache (kernels and graphs compiled at earlier starts)", "they are compiled again"),
    "hf-cache": ("Hugging Face cache (the model downloaded at an earlier start)", "the model is downloaded again"),
}


def _claims_of(
    obj: Mapping[str, Any],
    owner: tuple[str, str],
    kinds: Mapping[tuple[str, str], str],
    volumes: Mapping[str, Mapping[str, Any]],
) -> Iterable[Claim]:
    kind, meta, spec = obj.get("kind"), obj.get("metadata", {}), obj.get("spec", {})
    namespace, name = meta.get("namespace", "default"), meta.get("name", "")
    workload = meta.get("labels", {}).get("app.kubernetes.io/name", "")
    if kind == "PersistentVolumeClaim":
        volume = volumes.get(spec.get("volumeName", ""))
        if volume is not None:
            driver, shows = _view(volume)
            yield Claim(namespace=namespace, name=name, role=f"view:{driver}", holds="nothing", view=shows)
        elif meta.get("labels", {}).get("app.kubernetes.io/component") in CACHE_CLAIMS:
            component = meta["labels"]["app.kubernetes.io/component"]
            what, again = CACHE_CLAIMS[component]
            yield Claim(
                namespace=namespace,
                name=name,
                role=f"cache:{component}:{spec.get('storageClassName')}",
                holds=f"{workload}'s {what}",
                looks_lost=f"{again} at the next start (slower, nothing else is lost)",
                storage_class=spec.get("storageClassName"),
                spec=spec,
                owner=owner,
            )
        elif kinds.get((namespace, workload)) == "ollama":
            yield Claim(
                namespace=namespace,
                name=name,
                role="ollama-models",
                holds=f"the models Ollama pulled for {workload}",
                looks_lost="the models are pulled again",
                storage_class=spec.get("storageClassName"),
                spec=spec,
                owner=owner,
            )
        else:
            yield Claim(
                namespace=namespace,
                name=name,
                role=f"claim:{spec.get('storageClassName')}",
                holds=f"the data on claim {name}",
                storage_class=spec.get("storageClassName"),
                spec=spec,
                owner=owner,
            )
    elif kind == "StatefulSet":
        retention = spec.get("persistentVolumeClaimRetentionPolicy", {}).get("whenDeleted", "Retain")
        postgres = kinds.get((namespace, workload)) == "litellm" and name == f"{workload}-postgres"
        for template in spec.get("volumeClaimTemplates", []):
            template_name = template.get("metadata", {}).get("name", "")
            for ordinal in range(int(spec.get("replicas", 1))):
                yield Claim(
                    namespace=namespace,
                    name=f"{template_name}-{name}-{ordinal}",
                    role="litellm-postgres" if postgres else f"statefulset:{template_name}",
                    holds=f"LiteLLM gateway {workload}'s Postgres (virtual keys, teams, spend)"
                    if postgres
                    else f"the {template_name} volume of StatefulSet {name}",
                    looks_lost="virtual keys, teams and spend look lost" if postgres else "",
                    storage_class=template.get("spec", {}).get("storageClassName"),
                    spec=template.get("spec", {}),
                    outlives_owner=retention != "Delete",
                    owner=owner,
                    statefulset=(namespace, name, template_name),
                    template_locked=True,
                )
    elif kind == "NIMCache":
        pvc = spec.get("storage", {}).get("pvc", {})
        if pvc.get("create"):
            # NIM operator 3.0 (internal/shared/pvc.go, nimcache_controller.go): the claim is ``pvc.name`` (default
            # ``<nimcache>-pvc``), created with the NIMCache as its controller: it goes when the NIMCache goes.
            yield Claim(
                namespace=namespace,
                name=pvc.get("name") or f"{name}-pvc",
                role="nim-cache",
                holds=f"NIM cache {name}: the model downloaded from NGC",
                looks_lost="the model is downloaded again",
                storage_class=pvc.get("storageClass"),
                owner=owner,
            )


def _view(volume: Mapping[str, Any]) -> tuple[str, str]:
    """(CSI driver, what the static volume shows). A static PersistentVolume holds no data of its own: deleting it
    (whatever its reclaimPolicy: no provisioner made it) leaves the bucket or file system as it is."""
    csi = volume.get("spec", {}).get("csi", {})
    driver, attributes = csi.get("driver", "?"), csi.get("volumeAttributes", {})
    prefix = next(
        (o.removeprefix("prefix ") for o in volume["spec"].get("mountOptions", []) if o.startswith("prefix ")), ""
    )
    if driver == "s3.csi.aws.com":
        bucket = attributes.get("bucketName", "?")
        shows = f"s3://{'<model bucket>' if DEPLOY_TIME_VALUE in bucket else bucket}/{prefix}"
    elif driver == "fsx.csi.aws.com":
        shows = "the FSx for Lustre file system"
    elif driver == "efs.csi.aws.com":
        system, _, directory = str(csi.get("volumeHandle", "?")).partition(":")
        system = "<storage.efs>" if DEPLOY_TIME_VALUE in system else system
        shows = f"{directory or '/'} of the EFS file system {system}"
    else:
        shows = f"volume {csi.get('volumeHandle', '?')} ({driver})"
    return driver, f"PersistentVolume {volume['metadata']['name']}, a read-only view of {shows}"


def _prometheus_claims(properties: Mapping[str, Any], owner: tuple[str, str]) -> Iterable[Claim]:
    values = json_property(properties.get("Values") or "{}")
    spec = values.get("prometheus", {}).get("prometheusSpec", {})
    template = spec.get("storageSpec", {}).get("volumeClaimTemplate")
    if values.get("prometheus", {}).get("enabled") is False or not template:
        return
    release = properties.get("Release") or PROMETHEUS_CHART
    name = values.get("nameOverride") or PROMETHEUS_CHART
    fullname = values.get("fullnameOverride") or (release if name in release else f"{release}-{name}")
    fullname = fullname[:26].removesuffix("-")
    cr = fullname if values.get("cleanPrometheusOperatorObjectNames") else f"{fullname}-prometheus"
    template_name = template.get("metadata", {}).get("name") or f"prometheus-{cr}-db"
    retention = spec.get("persistentVolumeClaimRetentionPolicy", {}).get("whenDeleted", "Retain")
    namespace = properties.get("Namespace", "default")
    for ordinal in range(int(spec.get("replicas", 1))):
        yield Claim(
            namespace=namespace,
            name=f"{template_name}-prometheus-{cr}-{ordinal}",
            role="prometheus",
            holds=f"Prometheus' metrics history ({spec.get('retention', '10d')} retention)",
            looks_lost="dashboards and alerts start without history",
            storage_class=template.get("spec", {}).get("storageClassName"),
            outlives_owner=retention != "Delete",
            owner=owner,
            statefulset=(namespace, f"prometheus-{cr}", template_name),
        )


def _reclaim_policies(snapshot: Synthesized) -> dict[str, str]:
    """reclaimPolicy of every StorageClass the stacks apply (Kubernetes' default: Delete)."""
    return {
        obj["metadata"]["name"]: obj.get("reclaimPolicy", "Delete")
        for template in snapshot.templates.values()
        for _, obj in manifests(template)
        if obj.get("kind") == "StorageClass"
    }


def _volume_fate(claim: Claim, policies: Mapping[str, str]) -> tuple[Change, str]:
    """What deleting ``claim`` does to its volume."""
    if claim.outlives_owner:
        return Change.ORPHANED, "the old claim stays with the data, used by no pod"
    named = f"StorageClass {claim.storage_class}" if claim.storage_class else "the default StorageClass"
    policy = policies.get(claim.storage_class or "")
    if policy == "Retain":
        return Change.ORPHANED, f"the old claim is deleted and its volume stays Released ({named} reclaims Retain)"
    if policy == "Delete":
        return Change.DELETED, f"the old claim is deleted and so is its volume ({named} reclaims Delete)"
    return (
        Change.DELETED,
        f"the old claim is deleted and so is its volume unless {named} reclaims Retain (the default is Delete)",
    )


def kubernetes_changes(old: Synthesized, new: Synthesized) -> list[StatefulChange]:
    """Claims that disappear, come back under another name, move between manifests or cannot update."""
    before, after = claims(old), claims(new)
    policies = _reclaim_policies(old)
    templates_after = {c.statefulset for c in after.values() if c.statefulset}
    # a StatefulSet scaled down keeps the claims of its last ordinals for the next scale-up
    removed = sorted(k for k in before.keys() - after.keys() if before[k].statefulset not in templates_after)
    added = sorted(after.keys() - before.keys())
    changes: list[StatefulChange] = []
    renames = _pairs(removed, added, lambda k: (before.get(k) or after[k]).role)
    for old_key, new_key in renames:
        target = after[new_key]
        what = f"{target.namespace}/{target.name} starts on an empty volume"
        changes.append(_claim_change(before[old_key], Change.RENAMED, what, policies))
    for key in sorted(set(removed) - {old_key for old_key, _ in renames}):
        changes.append(_claim_change(before[key], None, None, policies))
    for key in sorted(before.keys() & after.keys()):
        change = _claim_updated(before[key], after[key], policies)
        if change is not None:
            changes.append(change)
    return changes


def _claim_change(claim: Claim, change: Change | None, what: str | None, policies: Mapping[str, str]) -> StatefulChange:
    """``claim`` goes (``change`` None: removed; the change follows from its volume's fate) after ``what``."""
    if claim.view is not None:
        return StatefulChange(
            resource=claim.name,
            kind="PersistentVolumeClaim",
            where=claim.namespace,
            change=change or Change.DELETED,
            at_stake=f"nothing — {claim.view}, whose data stays there",
            lost=False,
        )
    fate_change, fate = _volume_fate(claim, policies)
    looks_lost = f": {claim.looks_lost}" if claim.looks_lost else ""
    return StatefulChange(
        resource=claim.name,
        kind="PersistentVolumeClaim",
        where=claim.namespace,
        change=change or fate_change,
        at_stake=f"{claim.holds} — {f'{what}; ' if what else ''}{fate}{looks_lost}",
    )


def _claim_updated(before: Claim, after: Claim, policies: Mapping[str, str]) -> StatefulChange | None:
    """A claim both sides have: moved to another manifest, or changed in a way Kubernetes refuses."""
    if before.view is not None or (before.statefulset is not None and not before.template_locked):
        return None  # a view holds nothing; the Prometheus operator recreates its StatefulSet on a storage change
    if before.statefulset is not None and after.statefulset == before.statefulset and before.spec != after.spec:
        return StatefulChange(
            resource=before.name,
            kind="PersistentVolumeClaim",
            where=before.namespace,
            change=Change.REFUSED,
            at_stake=f"{before.holds} — StatefulSet {before.statefulset[1]}'s volumeClaimTemplates change, which "
            "Kubernetes rejects: the deploy fails (kubectl delete statefulset "
            f"{before.statefulset[1]} -n {before.namespace} --cascade=orphan first keeps the claim; resize it "
            "with kubectl patch)",
            lost=False,
        )
    if before.owner != after.owner and not before.outlives_owner:
        return _claim_change(
            before,
            Change.REPLACED,
            f"it moves from {before.owner[1]} ({before.owner[0]}) to {after.owner[1]} ({after.owner[0]}): deleting the "
            "old manifest deletes the claim, which comes back empty — unless creating it first fails (AlreadyExists)",
            policies,
        )
    refused = [
        f
        for f in ("storageClassName", "accessModes", "volumeMode", "volumeName", "selector")
        if before.spec.get(f) != after.spec.get(f)
    ]
    old_size, new_size = _request(before.spec), _request(after.spec)
    if old_size is not None and new_size is not None and new_size < old_size:
        refused.append("a smaller storage request")
    if refused and before.spec and after.spec:
        return StatefulChange(
            resource=before.name,
            kind="PersistentVolumeClaim",
            where=before.namespace,
            change=Change.REFUSED,
            at_stake=f"{before.holds} — {', '.join(refused)}: a claim's spec is immutable but for a larger request, "
            "so the deploy fails (nothing is lost)",
            lost=False,
        )
    return None


_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([KMGTPE]i?|[kmgtpe])?$")
_FACTORS = {"k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}


def _request(spec: Mapping[str, Any]) -> float | None:
    """The claim's storage request in bytes (None when absent or not a plain quantity)."""
    match = _QUANTITY.match(str(spec.get("resources", {}).get("requests", {}).get("storage", "")))
    if match is None:
        return None
    number, unit = float(match[1]), match[2] or ""
    if unit.endswith("i"):
        return number * 2 ** (10 * "KMGTPE".index(unit[0]) + 10)
    return number * _FACTORS.get(unit, 1)


# -- the table ------------------------------------------------------------------------------------------------------


def table(changes: Sequence[StatefulChange]) -> str:
    """resource · stack/namespace · change · data at stake, one line each."""
    rows = [("resource", "stack/namespace", "change", "data at stake")]
    rows += [(f"{c.kind} {c.resource}", c.where, c.change.value, c.at_stake) for c in changes]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}" for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * len("data at stake"))
    return "\n".join(lines)


def unaccepted(changes: Iterable[StatefulChange], accepted: Iterable[str]) -> list[StatefulChange]:
    """The losses ``accepted`` (``<where>/<resource>`` or ``<resource>``) does not name."""
    names = set(accepted)
    return [c for c in changes if c.lost and c.key not in names and c.resource not in names]
