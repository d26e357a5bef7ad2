"""``inferstack export``: GIVEN a config, WHEN exported, THEN the folder parses, holds every object and Helm release
its workloads stacks apply (objects byte for byte, releases as Argo CD Applications with their values), in sync
waves that keep every CDK dependency — and ``kubernetes_delivery: gitops`` leaves the workloads stacks only their
AWS resources, so Argo CD alone applies that side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from inferstack.assembly import HELM_TYPE, MANIFEST_TYPE, json_property
from inferstack.catalog.crds import is_custom_resource
from inferstack.cli import main, synthesize_for_export
from inferstack.config import load_config
from inferstack.config.edit import with_changes
from inferstack.export import (
    RETAINED_OPTIONS,
    SKIP_DRY_RUN,
    SYNC_OPTIONS,
    SYNC_WAVE,
    WAIT_TYPE,
    Assembly,
    DeployTimeValues,
    ExportError,
    chart_source,
    cluster_scoped,
    documents,
    export,
    outputs_from_cli,
    step_dependencies,
    steps,
    waves,
    write,
)
from inferstack.testing import synthesize
from tests.synth import ROOT

EXAMPLES = ["kserve-scale-to-zero", "litellm-gateway", "ray-pd-efa-p5"]
KUBERNETES_TYPES = (HELM_TYPE, MANIFEST_TYPE, WAIT_TYPE)


def _values(assembly: Assembly) -> DeployTimeValues:
    """Every stack output the workloads read, given as a deployed platform's would be."""
    outputs = {
        (stack, key): f"value-of-{key}"
        for stack, template in assembly.templates.items()
        for key in (template.get("Outputs") or {})
    }
    return DeployTimeValues(account="123456789012", region="us-west-2", outputs=outputs)


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory):
    """``name → (assembly, workloads stacks)`` of an example, synthesized once for the whole module."""
    cache: dict[str, tuple[Assembly, tuple[str, ...]]] = {}

    def get(name: str) -> tuple[Assembly, tuple[str, ...]]:
        if name not in cache:
            config = load_config(ROOT / "examples" / f"{name}.yaml")
            cache[name] = synthesize_for_export(config, tmp_path_factory.mktemp("cdk.out"))
        return cache[name]

    return get


@pytest.fixture(scope="module", params=EXAMPLES)
def exported(request, tmp_path_factory, synthesized):
    """(assembly, workloads stacks, export, folder) of one example."""
    assembly, stacks = synthesized(request.param)
    result = export(assembly, stacks, _values(assembly))
    folder = tmp_path_factory.mktemp("export") / "out"
    write(result, folder)
    return assembly, stacks, result, folder


def _deployed(part) -> str:
    """What CloudFormation would put in a joined part, given :func:`_values` (written apart from the export)."""
    pseudo = {"AWS::AccountId": "123456789012", "AWS::Region": "us-west-2", "AWS::URLSuffix": "amazonaws.com"}
    if isinstance(part, str):
        return part
    if "Ref" in part:
        return pseudo[part["Ref"]]
    if "Fn::Sub" in part:
        text = part["Fn::Sub"]
        for name, value in pseudo.items():
            text = text.replace("${" + name + "}", value)
        return text
    return f"value-of-{part['Fn::GetStackOutput']['OutputName']}"


def _applied_objects(assembly: Assembly, stacks) -> list[dict]:
    """Every object the stacks apply, with deploy-time values as a deployed platform's."""
    found = []
    for stack in stacks:
        for resource in assembly.templates[stack]["Resources"].values():
            if resource["Type"] == MANIFEST_TYPE:
                manifest = resource["Properties"]["Manifest"]
                if isinstance(manifest, str):
                    found += json.loads(manifest)
                else:
                    separator, parts = manifest["Fn::Join"]
                    found += json.loads(separator.join(_deployed(p) for p in parts))
    return found


def _identity(obj: dict) -> tuple[str, str, str, str]:
    meta = obj["metadata"]
    return obj["apiVersion"], obj["kind"], meta.get("namespace", ""), meta["name"]


def _without_export_annotations(obj: dict) -> dict:
    copy = json.loads(json.dumps(obj))
    annotations = copy["metadata"].get("annotations", {})
    for key in (SYNC_WAVE, SYNC_OPTIONS):
        annotations.pop(key, None)
    if not annotations:
        copy["metadata"].pop("annotations", None)
    return copy


def _without_cdk_prune_label(obj: dict) -> dict:
    """``obj`` without aws-eks-v2's pruning label (the kubectl provider's, not Argo CD's)."""
    copy = json.loads(json.dumps(obj))
    labels = {k: v for k, v in copy["metadata"].get("labels", {}).items() if not k.startswith("aws.cdk.eks/prune-")}
    copy["metadata"]["labels"] = labels
    if not labels:
        copy["metadata"].pop("labels")
    return copy


def test_every_file_parses_to_one_object_in_its_namespace_folder(exported):
    _, _, result, folder = exported
    parsed = list(documents(folder))
    assert len(parsed) == len(result.files) > 0
    for path, document in parsed:
        assert {"apiVersion", "kind", "metadata"} <= set(document), path
        relative = path.relative_to(folder)
        expected = "cluster" if cluster_scoped(document) else document["metadata"]["namespace"]
        assert relative.parts[0] == expected, relative
        assert relative.name == f"{document['kind'].lower()}-{document['metadata']['name']}.yaml"
        assert int(document["metadata"]["annotations"][SYNC_WAVE]) >= 0
    assert (folder / "README.md").read_text().startswith("# The workloads' Kubernetes side")


def test_every_object_the_workloads_stacks_apply_is_written_as_applied(exported):
    """Byte for byte but for the export's own annotations, deploy-time values given as a deployed platform's."""
    assembly, stacks, result, _ = exported
    written = {
        _identity(f.document): _without_export_annotations(dict(f.document))
        for f in result.files
        if f.document["kind"] != "Application"
    }
    applied = _applied_objects(assembly, stacks)
    assert len(written) == len(applied) == len({_identity(o) for o in applied})
    for obj in applied:
        assert written[_identity(obj)] == _without_cdk_prune_label(obj), _identity(obj)
    assert not [f for f in result.files if "aws.cdk.eks/prune-" in json.dumps(f.document.get("metadata", {}))]


def test_every_helm_release_is_an_application_with_its_chart_and_values(exported):
    assembly, stacks, result, _ = exported
    apps = {f.document["metadata"]["name"]: f.document for f in result.files if f.document["kind"] == "Application"}
    releases = [
        r["Properties"] for s in stacks for r in assembly.templates[s]["Resources"].values() if r["Type"] == HELM_TYPE
    ]
    assert len(apps) == len(releases) > 0
    for props in releases:
        app = apps[props.get("Release") or props["Chart"]]
        source = app["spec"]["source"]
        assert (source["repoURL"], source["chart"]) == chart_source(props["Repository"], props["Chart"])
        assert source["targetRevision"] == props["Version"]
        assert app["spec"]["destination"]["namespace"] == props["Namespace"]
        values = json_property(props["Values"]) if props.get("Values") else {}
        assert source["helm"].get("valuesObject", {}) == values
        creates = "CreateNamespace=true" in app["spec"]["syncPolicy"]["syncOptions"]
        assert creates == (str(props.get("CreateNamespace")).lower() == "true")


def _closure(assembly: Assembly, stacks) -> dict[str, set[str]]:
    """Independently of the export: each Kubernetes step → every Kubernetes step before it (DependsOn followed
    through every resource, and every step of a stack its stack depends on, transitively)."""
    kube = {
        f"{s}/{i}"
        for s in stacks
        for i, r in assembly.templates[s]["Resources"].items()
        if r["Type"] in KUBERNETES_TYPES
    }

    def before(stack: str, logical_id: str, seen: set[str]) -> set[str]:
        for name in assembly.templates[stack]["Resources"][logical_id].get("DependsOn", []):
            key = f"{stack}/{name}"
            if key not in seen:
                seen.add(key)
                before(stack, name, seen)
        return seen

    def stacks_before(stack: str) -> set[str]:
        direct = set(assembly.dependencies.get(stack, ()))
        return direct.union(*(stacks_before(s) for s in direct)) if direct else set()

    return {
        key: (before(*key.split("/", 1), set()) & kube)
        | {k for k in kube if k.split("/")[0] in stacks_before(key.split("/")[0])}
        for key in kube
    }


def test_waves_keep_every_cdk_dependency(exported):
    assembly, stacks, result, _ = exported
    closure = _closure(assembly, stacks)
    assert set(result.waves) == set(closure)
    for step, earlier in closure.items():
        for dependency in earlier:
            assert result.waves[dependency] < result.waves[step], (dependency, step)
    for item in result.files:
        assert int(item.document["metadata"]["annotations"][SYNC_WAVE]) == result.waves[item.step]


def test_kserve_keeps_crd_then_controller_then_webhook_then_custom_resources(synthesized):
    """Knative's operator → KnativeServing → its readiness wait → KServe's controller → its webhook's CA → the
    runtimes → the InferenceService: each a later wave."""
    assembly, stacks = synthesized("kserve-scale-to-zero")
    result = export(assembly, stacks, _values(assembly))
    wave = {}
    for item in result.files:
        wave[(item.document["kind"], item.document["metadata"]["name"])] = item.wave
    waits = {s.properties["ObjectType"]: result.waves[s.key] for s in steps(assembly, stacks) if s.type == WAIT_TYPE}
    order = [
        wave[("Application", "knative-operator")],
        wave[("KnativeServing", "knative-serving")],
        waits["knativeserving"],
        wave[("Application", "kserve-resources")],
        waits["mutatingwebhookconfiguration"],
        wave[("Application", "kserve-runtime-configs")],
        wave[("InferenceService", "qwen")],
    ]
    assert order == sorted(order) and len(set(order)) == len(order), order
    assert wave[("Application", "kserve-crd")] < wave[("Application", "kserve-resources")]


def test_sync_options_keep_namespaces_and_let_custom_resources_wait_for_their_crds(exported):
    """Namespaces (and the CRDs inferstack applies) are neither pruned nor deleted; a custom resource is not dry-run
    before the wave that installs its CRD (Argo CD dry-runs every wave first); built-in kinds get neither option."""
    _, _, result, _ = exported
    kinds = set()
    for item in result.files:
        document = item.document
        options = set((document["metadata"]["annotations"].get(SYNC_OPTIONS) or "").split(",")) - {""}
        custom = is_custom_resource(document["apiVersion"], document["kind"])
        if document["kind"] in ("Namespace", "CustomResourceDefinition"):
            # a CRD inferstack applies (the InferencePool's) is durable: deleting it deletes every pool
            assert options == set(RETAINED_OPTIONS.split(",")), item.path
        elif document["kind"] == "Application":
            assert not options  # its own syncOptions are in its spec
            policy = document["spec"]["syncPolicy"]
            assert policy["automated"] == {"prune": False, "selfHeal": True} and policy["retry"]["limit"] > 0
        elif custom:
            assert options == {SKIP_DRY_RUN}, item.path
            kinds.add(document["kind"])
        else:
            assert not options, item.path
    assert kinds  # every example renders a custom resource (a PodMonitor at least)


def test_a_deploy_time_value_not_given_is_named_with_the_way_to_give_it(synthesized):
    assembly, stacks = synthesized("kserve-scale-to-zero")
    with pytest.raises(ExportError) as raised:
        export(assembly, stacks, DeployTimeValues())
    message = str(raised.value)
    assert "AWS::Region (give --region" in message
    # named by the storage stack's fixed-name output, which a stack deployed for GitOps has too
    assert (
        "output ModelBucketName of stack kserve-storage (give --stack-outputs, or --output "
        "kserve-storage/ModelBucketName=VALUE)" in message
    )
    assert "kserve-workloads/Workload" in message  # where it is used
    key = "ModelBucketName"
    given = DeployTimeValues(region="eu-west-1", outputs={("kserve-storage", key): "team-models"})
    (volume,) = [f.document for f in export(assembly, stacks, given).files if f.document["kind"] == "PersistentVolume"]
    text = json.dumps(volume)
    assert "team-models" in text and "eu-west-1" in text and "unresolved" not in text


def test_a_bucket_the_config_names_needs_no_output(tmp_path):
    config = with_changes(
        load_config(ROOT / "examples" / "kserve-scale-to-zero.yaml"),
        {"storage.model_bucket.bucket_name": "team-models-bucket"},
    )
    assembly, stacks = synthesize_for_export(config, tmp_path)
    result = export(assembly, stacks, DeployTimeValues(region="us-west-2"))
    assert "team-models-bucket" in json.dumps([dict(f.document) for f in result.files])


def test_stack_outputs_are_read_from_describe_stacks():
    text = json.dumps(
        {
            "Stacks": [
                {
                    "StackName": "p-storage",
                    "Outputs": [
                        {"OutputKey": "Bucket", "OutputValue": "b", "ExportName": "p-storage:Bucket"},
                        {"OutputKey": "Other", "OutputValue": "o"},
                    ],
                }
            ]
        }
    )
    assert outputs_from_cli(text) == (
        {("p-storage", "Bucket"): "b", ("p-storage", "Other"): "o"},
        {"p-storage:Bucket": "b"},
    )
    with pytest.raises(ExportError, match="describe-stacks --output json"):
        outputs_from_cli('{"Exports": []}')


def test_waves_follow_stack_dependencies_and_pass_through_aws_resources():
    """A step waits for the steps of every stack its stack depends on, and for a step behind an AWS resource."""
    manifest = {"Type": MANIFEST_TYPE, "Properties": {"Manifest": "[]"}}
    assembly = Assembly(
        templates={
            "a": {"Resources": {"Ns": manifest}},
            "b": {
                "Resources": {
                    "Role": {"Type": "AWS::IAM::Role", "Properties": {}},
                    "Link": {"Type": "AWS::EKS::PodIdentityAssociation", "DependsOn": ["Role", "Policy"]},
                    "Policy": {"Type": "AWS::IAM::Policy", "DependsOn": ["Operator"]},
                    "Operator": manifest,
                    "Workload": {**manifest, "DependsOn": ["Link"]},
                }
            },
        },
        dependencies={"a": (), "b": ("a",)},
    )
    chosen = steps(assembly, ["a", "b"])
    dependencies = step_dependencies(assembly, chosen)
    assert dependencies["b/Workload"] == {"b/Operator", "a/Ns"}
    assert waves(dependencies) == {"a/Ns": 0, "b/Operator": 1, "b/Workload": 2}


def test_a_cycle_is_named():
    with pytest.raises(ExportError, match="cycle: a → b → a"):
        waves({"a": frozenset({"b"}), "b": frozenset({"a"})})


def test_charts_from_oci_registries_and_helm_repositories():
    assert chart_source("oci://ghcr.io/kserve/charts/kserve-crd", "kserve-crd") == (
        "ghcr.io/kserve/charts",
        "kserve-crd",
    )
    assert chart_source("https://kedacore.github.io/charts", "keda") == ("https://kedacore.github.io/charts", "keda")
    # aws-eks-v2 pulls an oci:// repository as the whole reference, whatever Chart says
    assert chart_source("oci://registry.k8s.io/lws/charts/lws", "other") == ("registry.k8s.io/lws/charts", "lws")


def test_an_export_never_writes_into_a_folder_that_holds_files(tmp_path, exported):
    _, _, result, _ = exported
    (tmp_path / "keep.yaml").write_text("mine: true\n")
    with pytest.raises(ExportError, match="not empty"):
        write(result, tmp_path)
    assert (tmp_path / "keep.yaml").read_text() == "mine: true\n"


def test_gitops_delivery_leaves_the_workloads_stacks_only_their_aws_resources():
    config = load_config(ROOT / "examples" / "kserve-scale-to-zero.yaml")
    applied = synthesize(config)
    handed = synthesize(with_changes(config, {"kubernetes_delivery": "gitops"}))
    workloads = [name for name in applied if name.endswith("-workloads")]
    assert workloads
    for name in applied:
        ours, theirs = applied[name]["Resources"], handed[name]["Resources"]
        if name in workloads:
            assert not [r for r in theirs.values() if r["Type"] in KUBERNETES_TYPES]
            kept = {k: r for k, r in ours.items() if r["Type"] not in KUBERNETES_TYPES}
            for resource in kept.values():  # nothing AWS waits for a Kubernetes step that is gone
                resource.pop("DependsOn", None)
            for resource in theirs.values():
                resource.pop("DependsOn", None)
            assert theirs == kept
            assert any(r["Type"] == "AWS::EKS::Addon" for r in theirs.values())
        else:  # the cluster's own add-ons stay in CDK
            assert theirs == ours


def test_the_command_writes_the_folder_and_names_what_it_cannot(tmp_path, capsys, synthesized):
    config = ROOT / "examples" / "litellm-gateway.yaml"
    assert main(["export", str(config), str(tmp_path / "missing"), "--region", "us-west-2"]) == 1
    err = capsys.readouterr().err
    assert "--stack-outputs" in err and "Traceback" not in err
    assert not (tmp_path / "missing").exists()
    assert main(["export", str(config), str(tmp_path / "x"), "--output", "no-slash=1"]) == 1
    assert "STACK/OUTPUT_KEY=VALUE" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("workloads: [{name: x}]\n")
    assert main(["export", str(bad), str(tmp_path / "y")]) == 1
    assert "workloads[0]" in capsys.readouterr().err
    outputs = tmp_path / "outputs.json"
    assembly, _ = synthesized("litellm-gateway")
    described = [
        {"StackName": s, "Outputs": [{"OutputKey": k, "OutputValue": f"v-{k}"} for k in t.get("Outputs") or {}]}
        for s, t in assembly.templates.items()
    ]
    outputs.write_text(json.dumps({"Stacks": described}))
    out = tmp_path / "gitops"
    assert (
        main(
            [
                "export",
                str(config),
                str(out),
                "--region",
                "us-west-2",
                "--account",
                "1",
                "--stack-outputs",
                str(outputs),
            ]
        )
        == 0
    )
    printed = capsys.readouterr()
    assert "sync waves from gateway-workloads" in printed.out and "kubernetes_delivery: gitops" in printed.err
    app = yaml.safe_load((out / "argocd" / "application-gateway-kube-prometheus-stack.yaml").read_text())
    assert app["kind"] == "Application" and app["spec"]["source"]["helm"]["releaseName"] == "kube-prometheus-stack"
    assert Path(out / "README.md").is_file()


def test_a_platform_deployed_for_gitops_gives_export_every_value_it_needs(tmp_path):
    """Deployed with kubernetes_delivery: gitops, no workloads stack refers to the storage stack, so CDK publishes
    none of its cross-stack outputs; the storage stack's fixed-name outputs (ModelBucketName, FsxFileSystemId,
    FsxMountName) are what describe-stacks then gives, and they resolve the export's references."""
    config = load_config(ROOT / "examples" / "fsx-large-model.yaml")
    deployed = synthesize(with_changes(config, {"kubernetes_delivery": "gitops"}))
    storage = deployed["fsx-large-storage"]["Outputs"]
    assert {"ModelBucketName", "FsxFileSystemId", "FsxMountName"} <= set(storage)
    assert not [k for k in storage if k.startswith("PublishOutput")]
    outputs = {(s, k): f"deployed-{k}" for s, t in deployed.items() for k in t.get("Outputs") or {}}
    assembly, stacks = synthesize_for_export(config, tmp_path)
    result = export(assembly, stacks, DeployTimeValues(account="123456789012", region="us-west-2", outputs=outputs))
    text = json.dumps([dict(f.document) for f in result.files])
    assert "deployed-FsxFileSystemId" in text and "deployed-FsxMountName" in text and "deployed-ModelBucketName" in text
    with pytest.raises(ExportError, match=r"output FsxFileSystemId of stack fsx-large-storage"):
        export(assembly, stacks, DeployTimeValues(account="1", region="us-west-2"))


def test_a_sub_of_anything_but_a_known_pseudo_parameter_is_named():
    manifest = {
        "Fn::Join": [
            "",
            [
                '[{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "n"}, '
                '"data": {"a": "',
                {"Fn::Sub": "arn:${AWS::Partition}:s3:::${Bucket}/${!Literal}"},
                '"}}]',
            ],
        ]
    }
    assembly = Assembly(
        templates={"w": {"Resources": {"M": {"Type": MANIFEST_TYPE, "Properties": {"Manifest": manifest}}}}},
        dependencies={"w": ()},
    )
    with pytest.raises(ExportError, match=r"Bucket \(a value only CloudFormation knows\): used by w/M"):
        export(assembly, ["w"], DeployTimeValues(region="cn-north-1"))


def test_partition_and_url_suffix_follow_the_region():
    china, gov, commercial = (DeployTimeValues(region=r) for r in ("cn-north-1", "us-gov-west-1", "eu-west-1"))
    assert (china.pseudo("AWS::Partition"), china.pseudo("AWS::URLSuffix")) == ("aws-cn", "amazonaws.com.cn")
    assert (gov.pseudo("AWS::Partition"), gov.pseudo("AWS::URLSuffix")) == ("aws-us-gov", "amazonaws.com")
    assert (commercial.pseudo("AWS::Partition"), commercial.pseudo("AWS::URLSuffix")) == ("aws", "amazonaws.com")


def test_a_manifest_that_is_not_cdk_json_is_an_export_error_not_a_traceback():
    bad = {"Type": MANIFEST_TYPE, "Properties": {"Manifest": {"Fn::Base64": "x"}}}
    assembly = Assembly(templates={"w": {"Resources": {"M": bad}}}, dependencies={"w": ()})
    with pytest.raises(ExportError, match="w/M: its manifest or values are not JSON CDK writes"):
        export(assembly, ["w"], DeployTimeValues())


def test_every_config_of_the_repo_exports_whole_and_in_order(any_app):
    """Every example and the default, from the session's own synth: the export holds each object the workloads
    stacks apply, one Application per release, and every CDK dependency is an earlier wave."""
    assert any_app.directory is not None
    assembly = Assembly.read(any_app.directory)
    stacks = [name for name in any_app.templates if "-workloads" in name]
    if not stacks:
        pytest.skip("this config has no workloads stack")
    result = export(assembly, stacks, _values(assembly))
    written = {_identity(f.document) for f in result.files if f.document["kind"] != "Application"}
    assert written == {_identity(o) for o in _applied_objects(assembly, stacks)}
    releases = [r for s in stacks for r in assembly.templates[s]["Resources"].values() if r["Type"] == HELM_TYPE]
    assert len([f for f in result.files if f.document["kind"] == "Application"]) == len(releases)
    for step, earlier in _closure(assembly, stacks).items():
        assert all(result.waves[d] < result.waves[step] for d in earlier), step
