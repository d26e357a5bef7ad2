"""Issue 16's unsafe configs: each is refused with a named error, and what reaches IAM and the shell is safe by
construction (no wildcard from the config in a policy resource, no config value interpolated into ``sh -c``)."""

from __future__ import annotations

import cdk8s
import pytest

from inferstack.charts.workload import StorageRefs
from inferstack.config import ConfigError, parse_config
from inferstack.config.kinds import kind_of
from inferstack.plan import resolve
from inferstack.rules import evaluate
from tests.synth import SYNC_IMAGE

POOLS = {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]}
QWEN = {"id": "Qwen/Qwen3-8B"}


def problem(data: dict) -> str:
    with pytest.raises(ConfigError) as raised:
        parse_config(data)
    (first, *_) = raised.value.problems
    return str(first)


def workload(**fields: object) -> dict:
    return {"compute": POOLS, "workloads": [{"name": "a", "pool": "gpu", "model": QWEN, **fields}]}


def test_an_allow_list_whose_union_is_the_internet_is_open():
    config = parse_config(
        {"cluster": {"endpoint_access": "public_and_private", "public_access_cidrs": ["0.0.0.0/1", "128.0.0.0/1"]}}
    )
    (finding,) = [f for f in evaluate(config).errors if f.rule == "EKS-ENDPOINT"]
    assert "100.00% of the IPv4 internet" in finding.message
    office = parse_config(
        {"cluster": {"endpoint_access": "public_and_private", "public_access_cidrs": ["203.0.113.0/24"]}}
    )
    assert [f for f in evaluate(office).errors if f.rule == "EKS-ENDPOINT"] == []


@pytest.mark.parametrize("prefix", ["*/", "models/*/", "models/../", "models/?/"])
def test_no_iam_wildcard_or_dot_segment_comes_from_a_prefix(prefix):
    text = problem(workload(model={**QWEN, "source": {"prefix": prefix}}))
    assert text.startswith("workloads[0].model.source.prefix:")


@pytest.mark.parametrize("revision", ['main"; rm -rf / #', "$(id)", "main/../x", "*", "a b"])
def test_a_revision_is_a_revision(revision):
    assert problem(workload(model={**QWEN, "revision": revision})).startswith("workloads[0].model.revision:")


@pytest.mark.parametrize("path", ['/models"; reboot #', "models", "/models/../etc", "/a b"])
def test_an_fsx_path_is_a_path(path):
    text = problem({"storage": {"fsx": {"file_system_path": path}}})
    assert text.startswith("storage.fsx.file_system_path:")


@pytest.mark.parametrize(
    "namespace",
    [
        "kube-system",
        "kube-public",
        "kube-node-lease",
        "monitoring",
        # Fluent Bit's privileged namespace, Knative's, its gateways', AIBrix's and its Envoy Gateway's (issue 24 §2)
        "logging",
        "knative-serving",
        "kourier-system",
        "istio-system",
        "aibrix-system",
        "envoy-gateway-system",
    ],
)
def test_system_and_operator_namespaces_are_refused(namespace):
    assert problem(workload(namespace=namespace)).startswith("workloads[0].namespace:")


def test_a_namespace_registered_for_an_operator_is_refused_with_its_owner():
    """The reserved set is the registry's (catalog PLATFORM_NAMESPACES), so an operator a library user registers
    reserves its namespace too."""
    from inferstack.catalog.kubernetes import register_platform_namespace, unregister_platform_namespace

    parse_config(workload(namespace="acme-system"))
    register_platform_namespace("acme-system", "the Acme operator")
    try:
        text = problem(workload(namespace="acme-system"))
        assert text.startswith("workloads[0].namespace: 'acme-system' belongs to the Acme operator")
    finally:
        unregister_platform_namespace("acme-system")
    parse_config(workload(namespace="acme-system"))


def test_every_namespace_the_platform_installs_into_is_reserved(default_app, kserve_app, aibrix_app):
    """Independently of the registry: every namespace a synthesized app's Helm releases and manifests install into,
    other than the workloads', is reserved."""
    from inferstack.catalog.kubernetes import operator_namespaces
    from inferstack.cli import HELM_TYPE

    for app in (default_app, kserve_app, aibrix_app):
        workloads = {w.namespace for w in app.config.workloads}
        used = {o["metadata"].get("namespace") for o in app.kubernetes_objects() if o.get("metadata")}
        used |= {
            r["Properties"].get("Namespace")
            for t in app.templates.values()
            for r in t.get("Resources", {}).values()
            if r.get("Type") == HELM_TYPE
        }
        platform = {ns for ns in used if ns and ns not in workloads and ns not in ("default", "kube-system")}
        assert platform <= operator_namespaces(), sorted(platform - operator_namespaces())


def test_flags_a_typed_field_owns_are_refused():
    for args in (["--tensor_parallel_size", "2"], ["-tp", "2"]):
        assert problem(workload(engine={"extra_args": args})).startswith("workloads[0].engine.extra_args[0]:")


def _chart(data: dict) -> list[dict]:
    (resolved,) = resolve(parse_config(data)).workloads
    refs = StorageRefs(
        region="us-east-1", bucket="b", fsx_id="fs-1", fsx_dns_name="d", fsx_mount_name="m", sync_image=SYNC_IMAGE
    )
    return kind_of(resolved.config).chart(cdk8s.App(), "w", resolved, refs).to_json()


def test_init_containers_take_values_from_the_environment_not_the_shell():
    for source in ("s3", "s3_mount", "fsx"):
        data = workload(model={**QWEN, "revision": "v1.0", "source": {"type": source}})
        data["storage"] = {"fsx": {"availability_zone": 0}} if source == "fsx" else {}
        if source == "fsx":
            data["compute"] = {"karpenter_pools": [{**POOLS["karpenter_pools"][0], "availability_zone": 0}]}
        (deployment,) = [o for o in _chart(data) if o["kind"] == "Deployment"]
        (init,) = deployment["spec"]["template"]["spec"]["initContainers"]
        script = init["command"][2]
        assert "v1.0" not in script and "models/" not in script and '"$' in script, source
        env = {e["name"]: e.get("value") for e in init["env"]}
        if source == "s3":
            assert env["MARKER_KEY"].startswith("models/Qwen/Qwen3-8B/v1.0/")
        else:  # the prefix is mounted: the marker is a file of the volume
            assert env["MARKER_PATH"].endswith("/.inferstack-sync-complete")


@pytest.mark.parametrize(
    ("data", "path"),
    [
        (
            {"compute": {"node_groups": [{"name": "p5", "instance_type": "p5.48xlarge", "max_size": 10**18}]}},
            "compute.node_groups[0].max_size",
        ),
        (
            {
                "compute": {
                    "karpenter_pools": [{"name": "g", "instance_types": ["g6e.2xlarge"], "max_accelerators": 10**400}]
                }
            },
            "compute.karpenter_pools[0].max_accelerators",
        ),
        (workload(engine={"gpu_memory_utilization": float("inf")}), "workloads[0].engine.gpu_memory_utilization"),
        (workload(resources={"memory_gib": float("inf")}), "workloads[0].resources.memory_gib"),
        (workload(autoscaling={"max_replicas": 10**18}), "workloads[0].autoscaling.max_replicas"),
        ({"storage": {"fsx": {"storage_capacity_gib": float("nan")}}}, "storage.fsx.storage_capacity_gib"),
    ],
)
def test_huge_and_infinite_numbers_are_named_errors(data, path):
    assert problem(data).startswith(f"{path}:")


def test_a_digit_leading_workload_name_is_refused():
    text = problem(workload(name="70b"))
    assert text.startswith("workloads[0].name:") and "DNS-1035" in text


def test_names_that_join_to_the_same_object_name_are_refused():
    qwen = {"pool": "gpu", "model": QWEN}
    text = problem(
        {
            "compute": POOLS,
            "workloads": [{"name": "c", "namespace": "a-b", **qwen}, {"name": "b-c", "namespace": "a", **qwen}],
        }
    )
    assert text.startswith("workloads[1].name:") and "'a-b-c'" in text


def test_workloads_do_not_share_a_service_account():
    qwen = {"pool": "gpu", "model": QWEN}
    text = problem(
        {"compute": POOLS, "workloads": [{"name": "a", **qwen}, {"name": "b", "service_account": "a", **qwen}]}
    )
    assert text.startswith("workloads[1].service_account:") and "inference/a" in text


@pytest.mark.parametrize("derived", ["a-bench", "a-model-sync"])
def test_a_workload_may_not_run_as_another_workloads_derived_account(derived):
    """Issue 24 §3: a's benchmark and model sync run as a-bench / a-model-sync, bound to their own roles (write to
    its bench prefix, write to its model prefix); a workload choosing that name would get the role."""
    qwen = {"pool": "gpu", "model": QWEN}
    a = {"name": "a", **qwen, "bench": {}}
    text = problem({"compute": POOLS, "workloads": [a, {"name": "b", "service_account": derived, **qwen}]})
    assert text.startswith("workloads[1].service_account:") and f"inference/{derived} is also a (" in text
    # the other order: the derived account clashes with the explicit one, and the rename is the fix
    text = problem({"compute": POOLS, "workloads": [{"name": "b", "service_account": derived, **qwen}, a]})
    assert text.startswith("workloads[1].name:") and "rename one of the workloads" in text


def test_a_workloads_bench_account_needs_a_bench():
    qwen = {"pool": "gpu", "model": QWEN}
    parse_config(
        {"compute": POOLS, "workloads": [{"name": "a", **qwen}, {"name": "b", "service_account": "a-bench", **qwen}]}
    )


def test_the_namespaces_default_account_is_refused():
    text = problem(workload(service_account="default"))
    assert text.startswith("workloads[0].service_account:") and "every pod in the namespace" in text


def test_a_public_only_endpoint_with_an_allow_list_is_refused_before_synth():
    """aws_eks_v2 raises CannotRestricPublicAccessEndpoint at synth for it: check says so first."""
    text = problem({"cluster": {"endpoint_access": "public", "public_access_cidrs": ["203.0.113.0/24"]}})
    assert text.startswith("cluster.endpoint_access:") and "public_and_private" in text


@pytest.mark.parametrize(
    ("network", "fits"),
    [("10.0.0.0/16", True), ("10.0.0.0/22", True), ("10.0.0.0/24", False), ("10.0.0.0/23", False)],
)
def test_the_vpc_holds_its_subnets(network, fits):
    """aws-cdk-lib's Vpc raised at synth for a /24 (two /24 public subnets do not fit): check says so first."""
    data = {"network": {"vpc_cidr": network}}
    if fits:
        parse_config(data)
    else:
        assert problem(data).startswith("network.vpc_cidr:")


def test_more_zones_than_an_environment_agnostic_stack_gets_is_refused():
    assert problem({"network": {"max_azs": 3}}).startswith("network.max_azs:")
    parse_config({"network": {"max_azs": 3, "availability_zones": ["us-west-2a", "us-west-2b", "us-west-2c"]}})


def test_a_taint_value_follows_kubernetes_rules():
    group = {"name": "g", "instance_type": "g6e.2xlarge", "taints": [{"key": "team", "value": "x" * 64}]}
    assert problem({"compute": {"node_groups": [group]}}).startswith("compute.node_groups[0].taints[0].value:")


def test_an_admin_principal_is_listed_once():
    arn = "arn:aws:iam::111122223333:role/admin"
    assert problem({"cluster": {"admin_principal_arns": [arn, arn]}}).startswith("cluster.admin_principal_arns:")


@pytest.mark.parametrize("tags", [{"aws:team": "a"}, {"": "a"}, {"k" * 129: "a"}, {"team": "a\nb"}, {"te;am": "a"}])
def test_tags_follow_the_aws_rules(tags):
    text = problem({"tags": tags})
    assert text.startswith("tags") and not text.startswith("tags.tags")


@pytest.mark.parametrize(
    ("key", "owner"),
    [
        ("karpenter.sh/nodepool", "Karpenter"),
        ("Karpenter.sh/discovery", "Karpenter"),
        ("karpenter.k8s.aws/ec2nodeclass", "Karpenter"),
        ("kubernetes.io/cluster/inferstack", "Kubernetes"),
        ("eks:eks-cluster-name", "Amazon EKS"),
        ("aws:cloudformation:stack-name", "AWS"),
    ],
)
def test_tag_keys_that_claim_the_nodes_for_an_owner_are_refused(key, owner):
    text = problem({"tags": {key: "x"}})
    assert text.startswith(f"tags.{key}:") and f"a tag key {owner}" in text and "'team'" in text


def test_a_tag_key_of_ones_own_passes():
    assert parse_config({"tags": {"example.com/owner": "ml-platform", "team": "ml"}}).tags["team"] == "ml"


@pytest.mark.parametrize("name", ["my..bucket", "192.168.1.1", "my.-bucket", "My-Bucket", "ab"])
def test_an_existing_bucket_name_follows_the_s3_rules(name):
    text = problem({"storage": {"model_bucket": {"existing_bucket_name": name}}})
    assert text.startswith("storage.model_bucket.existing_bucket_name:")


def test_a_workload_named_like_a_neighbours_benchmark_is_a_named_error():
    """Defect: a workload x-bench beside x with a bench crashed synth (a duplicate construct id in the NetworkPolicy
    chart; the two would also share a ServiceAccount and a NetworkPolicy name)."""
    data = {
        "compute": POOLS,
        "workloads": [
            {"name": "x-bench", "pool": "gpu", "model": QWEN},
            {"name": "x", "pool": "gpu", "model": QWEN, "bench": {}},
        ],
    }
    message = problem(data)
    assert "workloads[1].bench" in message and "x-bench is a workload" in message
    data["workloads"][0]["name"] = "x-other"
    assert parse_config(data).workloads[1].bench is not None


def test_an_efa_pool_in_a_region_without_a_known_eks_registry_is_a_named_error():
    efa = {"karpenter_pools": [{"name": "p5", "instance_families": ["p5"], "efa": True, "availability_zone": 0}]}
    data = {"env": {"account": "123456789012", "region": "xx-nowhere-1"}, "compute": efa}
    data["network"] = {"availability_zones": ["xx-nowhere-1a", "xx-nowhere-1b"]}
    message = problem(data)
    assert message.startswith("env.region: xx-nowhere-1 has no Amazon EKS image registry") and "us-west-2" in message


def test_a_workload_named_default_does_not_take_the_default_account():
    """Review finding: the serving account defaults to the workload's name, so a workload named default ran as the
    namespace's default account (its role to every pod)."""
    text = problem({"compute": POOLS, "workloads": [{"name": "default", "pool": "gpu", "model": QWEN}]})
    assert text.startswith("workloads[0].name:") and "default account" in text
    parse_config(
        {"compute": POOLS, "workloads": [{"name": "default", "service_account": "d", "pool": "gpu", "model": QWEN}]}
    )


def test_an_explicit_account_named_like_a_bench_still_clashes():
    """Review finding: z runs as m-bench explicitly and a workload is named m-bench (no m): the two would share the
    account (and EKS refuses the second association) — the generic clash is named."""
    qwen = {"pool": "gpu", "model": QWEN}
    text = problem(
        {
            "compute": POOLS,
            "workloads": [{"name": "z", "service_account": "m-bench", **qwen}, {"name": "m-bench", **qwen}],
        }
    )
    assert text.startswith("workloads[1].name:") and "inference/m-bench is also z's" in text


def test_a_workload_may_not_take_a_dynamo_graphs_discovery_account():
    """Review finding: Dynamo's pods run as <name>-k8s-service-discovery (the operator's account), which the
    shared-account check did not know."""
    dynamo = {
        "kind": "dynamo",
        "name": "g",
        "pool": "gpu",
        "model": {**QWEN, "source": {"type": "hf"}},
    }
    other = {"name": "b", "service_account": "g-k8s-service-discovery", "pool": "gpu", "model": QWEN}
    text = problem({"compute": POOLS, "workloads": [dynamo, other]})
    assert text.startswith("workloads[1].service_account:") and "g-k8s-service-discovery is also g's" in text
