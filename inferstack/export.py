"""``inferstack export``: the workloads' Kubernetes side as plain YAML for Argo CD, in the order CDK applies it.

What the workloads stacks apply through the kubectl provider — each Helm release, each manifest's objects — is read
from the synthesized cloud assembly and written to a folder:

* ``<namespace>/<kind>-<name>.yaml``: one object per file, in a folder per namespace (``cluster/`` for
  cluster-scoped kinds), as the stacks apply it;
* ``argocd/<release>.yaml``: each Helm release as an Argo CD ``Application`` (chart, repository, version, release
  name, the values as ``valuesObject``, the namespace, ``CreateNamespace`` where the release creates it);
* ``README.md``: the waves, what stays in the CDK stacks, and how to apply the folder.

Every object and Application carries ``argocd.argoproj.io/sync-wave``. A step's wave is one more than the highest
wave of the steps it depends on in the templates (``DependsOn``, through any AWS resource between them, and the
stacks its stack depends on); the waits CDK makes on a Kubernetes object (a webhook's CA bundle, Knative Serving
installed) are steps of their own, so what follows them is a wave later. Objects a stack retains on delete, and
every Namespace (deleting one deletes all it holds), carry ``argocd.argoproj.io/sync-options:
Prune=false,Delete=false``.

Values CloudFormation resolves at deploy (the model bucket's name, a container asset's registry) are resolved from
the account, the region and the stacks' outputs (``aws cloudformation describe-stacks``), or refused by name with
the way to give them. Set ``kubernetes_delivery: gitops`` so that ``cdk deploy`` leaves this side to Argo CD.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from inferstack.assembly import HELM_TYPE, MANIFEST_TYPE
from inferstack.catalog.crds import crd_index, is_custom_resource

#: A wait CDK makes on a Kubernetes object (``KubernetesObjectValue``): a step without objects.
WAIT_TYPE = "Custom::AWSCDK-EKS-KubernetesObjectValue"
SYNC_WAVE = "argocd.argoproj.io/sync-wave"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
#: Objects a stack keeps when their resource is deleted: Argo CD neither prunes nor deletes them either.
RETAINED_OPTIONS = "Prune=false,Delete=false"
#: A custom resource whose CRD a release of an earlier wave installs: not dry-run before that wave.
SKIP_DRY_RUN = "SkipDryRunOnMissingResource=true"
#: The label prefix aws-eks-v2's KubernetesManifest adds for its own pruning.
CDK_PRUNE_LABEL = "aws.cdk.eks/prune-"
#: How a child Application retries a failed sync (a webhook not serving yet): 10 times, 10 s doubling to 5 min.
RETRY = {"limit": 10, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "5m"}}
IN_CLUSTER = "https://kubernetes.default.svc"
CLUSTER_FOLDER = "cluster"
#: A ``${Name}`` of an ``Fn::Sub`` (``${!Literal}`` is a literal ``${Literal}``).
_SUB = re.compile(r"\$\{(?!!)([^}]+)\}")


class ExportError(Exception):
    """The export cannot be written as asked: what is wrong, and the way to fix it."""


@dataclass(frozen=True)
class DeployTimeValues:
    """What CloudFormation would fill in at deploy, given for the export.

    :param account: the AWS account id (``${AWS::AccountId}``). Default: unknown (refused where needed).
    :param region: the region (``${AWS::Region}``). Default: unknown.
    :param outputs: ``(stack, output key)`` → value, as ``aws cloudformation describe-stacks`` prints them
        (``Fn::GetStackOutput``, CDK's cross-stack references). Default none.
    :param exports: export name → value (``Fn::ImportValue``). Default none.

    ``${AWS::Partition}`` and ``${AWS::URLSuffix}`` follow the region (``aws-cn`` and ``amazonaws.com.cn`` in
    ``cn-*``, ``aws-us-gov`` in ``us-gov-*``; ``aws`` and ``amazonaws.com`` elsewhere).
    """

    account: str | None = None
    region: str | None = None
    outputs: Mapping[tuple[str, str], str] = field(default_factory=dict)
    exports: Mapping[str, str] = field(default_factory=dict)

    def pseudo(self, name: str) -> str | None:
        """The value of pseudo parameter ``name`` (``AWS::Region``…), None when not given or not known."""
        region = self.region or ""
        china = region.startswith("cn-")
        partition = "aws-cn" if china else "aws-us-gov" if region.startswith("us-gov-") else "aws"
        return {
            "AWS::AccountId": self.account,
            "AWS::Region": self.region,
            "AWS::URLSuffix": "amazonaws.com.cn" if china else "amazonaws.com",
            "AWS::Partition": partition,
        }.get(name)


def outputs_from_cli(text: str) -> tuple[dict[tuple[str, str], str], dict[str, str]]:
    """``(stack, output key)`` → value and export name → value, from the JSON of ``aws cloudformation
    describe-stacks`` (``{"Stacks": [{"StackName", "Outputs": [{"OutputKey", "OutputValue", "ExportName"?}]}]}``).
    :raises ExportError: another shape."""
    outputs: dict[tuple[str, str], str] = {}
    exports: dict[str, str] = {}
    try:
        for stack in json.loads(text)["Stacks"]:
            for output in stack.get("Outputs") or ():
                value = str(output["OutputValue"])
                outputs[(str(stack["StackName"]), str(output["OutputKey"]))] = value
                if output.get("ExportName"):
                    exports[str(output["ExportName"])] = value
    except (ValueError, KeyError, TypeError) as exc:
        raise ExportError(
            f"--stack-outputs: not the JSON of 'aws cloudformation describe-stacks' ({exc!r}); write it with "
            "'aws cloudformation describe-stacks --output json > outputs.json'"
        ) from exc
    return outputs, exports


@dataclass(frozen=True)
class Step:
    """One thing a workloads stack applies: a Helm release, a manifest, or a wait on an object."""

    stack: str
    logical_id: str
    type: str
    properties: Mapping[str, Any]
    retained: bool
    depends_on: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.stack}/{self.logical_id}"


@dataclass(frozen=True)
class Assembly:
    """The parts of a cloud assembly the export reads: each stack's template and the stacks it depends on."""

    templates: Mapping[str, Mapping[str, Any]]
    dependencies: Mapping[str, tuple[str, ...]]

    @classmethod
    def read(cls, out_dir: Path) -> Assembly:
        """A ``cdk.out`` folder (``manifest.json`` and the templates)."""
        manifest = json.loads((out_dir / "manifest.json").read_text())
        stacks = {n: a for n, a in manifest["artifacts"].items() if a.get("type") == "aws:cloudformation:stack"}
        return cls(
            templates={
                name: json.loads((out_dir / a["properties"]["templateFile"]).read_text()) for name, a in stacks.items()
            },
            dependencies={
                name: tuple(d for d in a.get("dependencies", ()) if d in stacks) for name, a in stacks.items()
            },
        )


def steps(assembly: Assembly, stacks: Iterable[str]) -> list[Step]:
    """The Helm releases, manifests and waits of ``stacks``, in template order."""
    found = []
    for stack in stacks:
        for logical_id, resource in (assembly.templates[stack].get("Resources") or {}).items():
            if resource.get("Type") in (HELM_TYPE, MANIFEST_TYPE, WAIT_TYPE):
                found.append(
                    Step(
                        stack=stack,
                        logical_id=logical_id,
                        type=resource["Type"],
                        properties=resource["Properties"],
                        retained=resource.get("DeletionPolicy") == "Retain",
                        depends_on=tuple(resource.get("DependsOn") or ()),
                    )
                )
    return found


def step_dependencies(assembly: Assembly, chosen: Sequence[Step]) -> dict[str, frozenset[str]]:
    """Each step's key → the keys of the steps it waits for: through ``DependsOn`` (an AWS resource between two
    steps passes the wait on) within its stack, and every step of the stacks its stack depends on."""
    by_stack: dict[str, set[str]] = {}
    for step in chosen:
        by_stack.setdefault(step.stack, set()).add(step.logical_id)

    @cache
    def reached(stack: str, logical_id: str) -> frozenset[str]:
        resources = assembly.templates[stack].get("Resources") or {}
        found: set[str] = set()
        for name in resources.get(logical_id, {}).get("DependsOn") or ():
            if name in by_stack.get(stack, ()):
                found.add(f"{stack}/{name}")
            else:
                found |= reached(stack, name)
        return frozenset(found)

    @cache
    def stacks_before(stack: str) -> frozenset[str]:
        direct = set(assembly.dependencies.get(stack, ()))
        return frozenset(direct.union(*(stacks_before(s) for s in direct)))

    return {
        step.key: reached(step.stack, step.logical_id)
        | {f"{s}/{i}" for s in stacks_before(step.stack) for i in by_stack.get(s, ())}
        for step in chosen
    }


def waves(dependencies: Mapping[str, frozenset[str]]) -> dict[str, int]:
    """Each step's sync wave: 0 without dependencies, else one more than the highest of its dependencies."""
    result: dict[str, int] = {}

    def wave(key: str, path: tuple[str, ...] = ()) -> int:
        if key in path:
            raise ExportError(f"the stacks' dependencies form a cycle: {' → '.join((*path, key))}")
        if key not in result:
            result[key] = 1 + max((wave(d, (*path, key)) for d in dependencies[key]), default=-1)
        return result[key]

    for key in dependencies:
        wave(key)
    return result


# --- deploy-time values -------------------------------------------------------------------------------------------


@dataclass
class _Resolver:
    assembly: Assembly
    values: DeployTimeValues
    missing: dict[str, set[str]] = field(default_factory=dict)

    def text(self, part: Any, where: str) -> str:
        """A part of an ``Fn::Join`` as text: a literal, an ``Fn::Sub`` of pseudo parameters, an
        ``Fn::ImportValue``; anything else is recorded as missing."""
        if isinstance(part, str):
            return part
        if isinstance(part, dict) and isinstance(part.get("Fn::Sub"), str):
            return _SUB.sub(lambda m: self._pseudo(m[1], where), part["Fn::Sub"])
        if isinstance(part, dict) and isinstance(part.get("Ref"), str) and part["Ref"].startswith("AWS::"):
            return self._pseudo(part["Ref"], where)
        if isinstance(part, dict) and isinstance(part.get("Fn::ImportValue"), str):
            return self._import(part["Fn::ImportValue"], where)
        output = part.get("Fn::GetStackOutput") if isinstance(part, dict) else None
        if isinstance(output, dict) and isinstance(output.get("StackName"), str):
            return self._output(str(output["StackName"]), str(output["OutputName"]), where)
        self.missing.setdefault(json.dumps(part, sort_keys=True), set()).add(where)
        return "${unresolved}"

    def _pseudo(self, name: str, where: str) -> str:
        """A ``${name}`` of an ``Fn::Sub`` or a ``Ref``: a pseudo parameter the values give, else missing."""
        value = self.values.pseudo(name)
        if value is None:
            flag = {"AWS::AccountId": "--account", "AWS::Region": "--region"}.get(name)
            how = f"give {flag}, or set env.account/env.region" if flag else "a value only CloudFormation knows"
            self.missing.setdefault(f"{name} ({how})", set()).add(where)
            return "${unresolved}"
        return value

    def _import(self, name: str, where: str) -> str:
        if name in self.values.exports:
            return self.values.exports[name]
        for stack, template in self.assembly.templates.items():
            for key, output in (template.get("Outputs") or {}).items():
                if (output.get("Export") or {}).get("Name") == name:
                    return self._output(stack, key, where)
        self.missing.setdefault(f"export {name} (give --stack-outputs)", set()).add(where)
        return "${unresolved}"

    def _output(self, stack: str, key: str, where: str) -> str:
        """Output ``key`` of ``stack``: given, or fixed by the template (a ``Ref`` to a bucket whose
        ``BucketName`` the config sets), else recorded as missing."""
        if (stack, key) in self.values.outputs:
            return self.values.outputs[(stack, key)]
        template = self.assembly.templates.get(stack) or {}
        outputs = template.get("Outputs") or {}
        wanted = (outputs.get(key) or {}).get("Value")
        # the same value under another output of the stack: the storage stack's fixed-name ones (ModelBucketName…)
        # are all a stack deployed with kubernetes_delivery: gitops has, since no workloads stack refers to it
        same = sorted(k for k, o in outputs.items() if k != key and wanted is not None and o.get("Value") == wanted)
        for other in same:
            if (stack, other) in self.values.outputs:
                return self.values.outputs[(stack, other)]
        ref = (wanted or {}).get("Ref") if isinstance(wanted, dict) else None
        literal = (((template.get("Resources") or {}).get(ref) or {}).get("Properties") or {}).get("BucketName")
        if isinstance(literal, str):
            return literal
        named = same[0] if same else key
        self.missing.setdefault(
            f"output {named} of stack {stack} (give --stack-outputs, or --output {stack}/{named}=VALUE)", set()
        ).add(where)
        return "${unresolved}"

    def json_property(self, value: str | Mapping[str, Any], where: str) -> Any:
        """A template property holding JSON (a literal or an ``Fn::Join``) with its deploy-time parts resolved.
        :raises ExportError: another shape, or JSON that does not parse once resolved."""
        try:
            if isinstance(value, str):
                return json.loads(value)
            delimiter, parts = value["Fn::Join"]
            return json.loads(delimiter.join(self.text(p, where) for p in parts))
        except (KeyError, TypeError, ValueError) as exc:
            raise ExportError(f"{where}: its manifest or values are not JSON CDK writes ({exc!r})") from exc


# --- the folder -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportedFile:
    """One file of the export: its path in the folder and its one document."""

    path: str
    document: Mapping[str, Any]
    wave: int
    step: str
    """The template resource it comes from (``stack/logicalId``)."""


@dataclass(frozen=True)
class Export:
    """What :func:`export` writes."""

    files: tuple[ExportedFile, ...]
    waves: Mapping[str, int]
    """Each step (``stack/logicalId``) → its wave, waits included."""
    dependencies: Mapping[str, frozenset[str]]
    kept_in_cdk: tuple[str, ...]
    """The AWS resources of the exported stacks (``stack/logicalId (Type)``): ``cdk deploy`` makes them."""
    readme: str


@dataclass(frozen=True)
class ArgoCdTarget:
    """Where the Applications live and deploy.

    :param namespace: Argo CD's namespace (the Applications'). Default ``argocd``.
    :param project: the Argo CD project. Default ``default``.
    :param server: the destination cluster's API server as Argo CD knows it. Default the in-cluster one.
    :param prefix: put before each Application's name (``<prefix>-<release>``), so that two platforms, or a
        team's own ``keda`` Application, do not share one name in Argo CD's namespace. Default none.
    """

    namespace: str = "argocd"
    project: str = "default"
    server: str = IN_CLUSTER
    prefix: str = ""


#: Built-in kinds without a namespace (Kubernetes 1.36), by API group ("" = core).
CLUSTER_SCOPED_BUILT_INS = frozenset(
    {
        ("", "Namespace"),
        ("", "PersistentVolume"),
        ("", "Node"),
        ("storage.k8s.io", "StorageClass"),
        ("storage.k8s.io", "CSIDriver"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
        ("networking.k8s.io", "IngressClass"),
        ("node.k8s.io", "RuntimeClass"),
    }
)


def cluster_scoped(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj``'s kind has no namespace: a built-in of :data:`CLUSTER_SCOPED_BUILT_INS`, or a custom
    resource whose vendored CRD says ``Cluster`` (KServe's ClusterServingRuntime…)."""
    api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
    group = api_version.rpartition("/")[0]
    if (group, kind) in CLUSTER_SCOPED_BUILT_INS:
        return True
    entry = crd_index().get((api_version, kind))
    return entry is not None and entry.scope == "Cluster"


def _file_name(kind: str, name: str) -> str:
    return f"{kind.lower()}-{name}.yaml"


def _annotated(obj: Mapping[str, Any], wave: int, retained: bool) -> dict[str, Any]:
    """``obj`` as Argo CD applies it: its wave; ``Prune=false,Delete=false`` when retained;
    ``SkipDryRunOnMissingResource=true`` for a custom resource (Argo CD dry-runs every wave before the first, when
    the release that installs its CRD has not run yet); without CDK's ``aws.cdk.eks/prune-*`` label (the kubectl
    provider's pruning, meaningless to Argo CD)."""
    copy = json.loads(json.dumps(obj))
    metadata = copy.setdefault("metadata", {})
    labels = {k: v for k, v in (metadata.get("labels") or {}).items() if not k.startswith(CDK_PRUNE_LABEL)}
    if labels:
        metadata["labels"] = labels
    else:
        metadata.pop("labels", None)
    annotations = metadata.setdefault("annotations", {})
    annotations[SYNC_WAVE] = str(wave)
    options = [RETAINED_OPTIONS] if retained else []
    if is_custom_resource(str(obj.get("apiVersion", "")), str(obj.get("kind", ""))):
        options.append(SKIP_DRY_RUN)
    if options:
        annotations[SYNC_OPTIONS] = ",".join(options)
    return copy


def chart_source(repository: str, chart: str) -> tuple[str, str]:
    """Argo CD's ``repoURL`` and ``chart`` for a release: an OCI reference (``oci://host/path/<chart>``, as
    aws-eks-v2 takes it) is the registry path without the scheme and its last segment (Argo CD's OCI Helm
    sources take no ``oci://``); a Helm repository URL is as is, with ``chart``."""
    if repository.startswith("oci://"):
        # aws-eks-v2 pulls an oci:// repository as the whole chart reference (its Chart is not appended)
        base, _, last = repository.removeprefix("oci://").rstrip("/").rpartition("/")
        return base, last
    return repository, chart


def application(step: Step, values: Any, wave: int, target: ArgoCdTarget) -> dict[str, Any]:
    """The Argo CD ``Application`` of a Helm release step."""
    props = step.properties
    release = str(props.get("Release") or props["Chart"])
    repo, chart = chart_source(str(props["Repository"]), str(props["Chart"]))
    helm: dict[str, Any] = {"releaseName": release}
    if values:
        helm["valuesObject"] = values
    if str(props.get("SkipCrds", "")).lower() == "true":
        helm["skipCrds"] = True
    options = ["ServerSideApply=true"]  # CRDs over the 256 KiB client-side annotation limit (KServe's, Dynamo's)
    if str(props.get("CreateNamespace", "")).lower() == "true":
        options.insert(0, "CreateNamespace=true")
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {
            "name": f"{target.prefix}-{release}" if target.prefix else release,
            "namespace": target.namespace,
            "annotations": {SYNC_WAVE: str(wave)},
        },
        "spec": {
            "project": target.project,
            "source": {"repoURL": repo, "chart": chart, "targetRevision": str(props["Version"]), "helm": helm},
            "destination": {"server": target.server, "namespace": str(props.get("Namespace") or "default")},
            # automated: the parent creates it, and a wave waits for its health; no prune, no finalizer (removing it
            # from Git deletes nothing of the release)
            "syncPolicy": {"automated": {"prune": False, "selfHeal": True}, "syncOptions": options, "retry": RETRY},
        },
    }


def export(
    assembly: Assembly,
    stacks: Sequence[str],
    values: DeployTimeValues | None = None,
    target: ArgoCdTarget | None = None,
) -> Export:
    """The export of ``stacks`` (the workloads stacks) of ``assembly``.

    :raises ExportError: a deploy-time value not given (each named, with where it is used), two objects with one
        name, or a dependency cycle."""
    values = values or DeployTimeValues()
    target = target or ArgoCdTarget()
    chosen = steps(assembly, stacks)
    dependencies = step_dependencies(assembly, chosen)
    wave_of = waves(dependencies)
    resolver = _Resolver(assembly, values)
    files: list[ExportedFile] = []
    for step in chosen:
        wave = wave_of[step.key]
        if step.type == HELM_TYPE:
            raw = step.properties.get("Values")
            release_values = resolver.json_property(raw, step.key) if raw else {}
            app = application(step, release_values, wave, target)
            files.append(
                ExportedFile(
                    f"{target.namespace}/{_file_name('Application', app['metadata']['name'])}", app, wave, step.key
                )
            )
        elif step.type == MANIFEST_TYPE:
            for obj in resolver.json_property(step.properties["Manifest"], step.key):
                meta = obj.get("metadata") or {}
                folder = CLUSTER_FOLDER if cluster_scoped(obj) else str(meta.get("namespace") or "default")
                path = f"{folder}/{_file_name(str(obj['kind']), str(meta['name']))}"
                retained = step.retained or (obj.get("apiVersion"), obj.get("kind")) == ("v1", "Namespace")
                files.append(ExportedFile(path, _annotated(obj, wave, retained), wave, step.key))
    if resolver.missing:
        lines = [f"  - {what}: used by {', '.join(sorted(where))}" for what, where in sorted(resolver.missing.items())]
        raise ExportError(
            "values CloudFormation fills in at deploy are not given:\n"
            + "\n".join(lines)
            + "\ndeploy the platform's stacks first, then give them: --account and --region (or env in the config), "
            "and --stack-outputs outputs.json from 'aws cloudformation describe-stacks --output json'"
        )
    paths: dict[str, str] = {}
    for item in files:
        if item.path in paths:
            raise ExportError(f"{item.path}: written by both {paths[item.path]} and {item.step}")
        paths[item.path] = item.step
    kept = tuple(
        f"{stack}/{logical_id} ({resource['Type']})"
        for stack in stacks
        for logical_id, resource in (assembly.templates[stack].get("Resources") or {}).items()
        if resource.get("Type") not in (HELM_TYPE, MANIFEST_TYPE, WAIT_TYPE)
        and not str(resource.get("Type", "")).startswith("AWS::CDK::")
    )
    ordered = tuple(sorted(files, key=lambda f: (f.wave, f.path)))
    return Export(
        files=ordered,
        waves=wave_of,
        dependencies=dependencies,
        kept_in_cdk=kept,
        readme=readme(ordered, wave_of, kept, chosen, target),
    )


def readme(
    files: Sequence[ExportedFile],
    wave_of: Mapping[str, int],
    kept: Sequence[str],
    chosen: Sequence[Step],
    target: ArgoCdTarget,
) -> str:
    """The folder's README: the waves (each step and what it holds), what stays in CDK, how to apply it."""
    by_step: dict[str, list[ExportedFile]] = {}
    for item in files:
        by_step.setdefault(item.step, []).append(item)
    lines = [
        "# The workloads' Kubernetes side, for Argo CD (written by `inferstack export`)",
        "",
        "Apply it with one Argo CD Application over this folder (`directory.recurse: true`) after `cdk deploy` of",
        "the platform with `kubernetes_delivery: gitops` (its workloads stacks then hold only the AWS resources",
        "below). The release Applications sync automatically and retry. Waves follow the CDK dependencies; a wave",
        "starts once the one before is synced and healthy. Argo CD",
        "assesses an `Application`'s health only with the `resource.customizations.health.argoproj.io_Application`",
        "check in `argocd-cm` (removed from the defaults in Argo CD 1.8): add it, or the releases' waves do not wait",
        "for the releases. A `wait` row is a wave boundary where CDK polls an object; Argo CD waits there only as",
        "far as its health checks of the wave before go (a custom resource without one is healthy at once).",
        "Namespaces carry `Prune=false,Delete=false`: removing them from Git deletes nothing.",
        "",
        "| wave | step | what |",
        "|---|---|---|",
    ]
    for step in sorted(chosen, key=lambda s: (wave_of[s.key], s.key)):
        if step.type == WAIT_TYPE:
            props = step.properties
            what = f"wait: `{props.get('ObjectType')}/{props.get('ObjectName')}` `{props.get('JsonPath')}` set"
        else:
            what = ", ".join(f"`{f.path}`" for f in by_step.get(step.key, [])) or "nothing"
        lines.append(f"| {wave_of[step.key]} | `{step.key}` | {what} |")
    lines += ["", "## Kept in the CDK stacks (`cdk deploy` makes them before Argo CD syncs)", ""]
    lines += [f"- `{item}`" for item in kept] or ["- nothing"]
    lines += [
        "",
        f"Applications: namespace `{target.namespace}`, project `{target.project}`, cluster `{target.server}`.",
        "",
    ]
    return "\n".join(lines)


def write(result: Export, out_dir: Path) -> list[Path]:
    """Write ``result`` into ``out_dir`` (which must be empty or absent); return the files written.
    :raises ExportError: ``out_dir`` holds files (an export never mixes with or deletes what is there)."""
    if out_dir.exists() and any(out_dir.iterdir()):
        raise ExportError(f"{out_dir}: not empty — export into a new folder (an export never overwrites files)")
    written = []
    for item in result.files:
        path = out_dir / item.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(dict(item.document), sort_keys=False), encoding="utf-8")
        written.append(path)
    (out_dir / "README.md").write_text(result.readme, encoding="utf-8")
    return written


def documents(out_dir: Path) -> Iterator[tuple[Path, Any]]:
    """Every YAML document under ``out_dir`` with its file (what a reader or Argo CD parses)."""
    for path in sorted(out_dir.rglob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            yield path, document
