"""Per-workload ``overrides``: deep-merged into the named object, then validated against its schema (core kinds:
Kubernetes OpenAPI, strict; custom resources: the vendored CRD). Problems are config errors with the path."""

from __future__ import annotations

import copy
from typing import Any

import cdk8s
import pytest

from inferstack.charts.workload import StorageRefs
from inferstack.config import ConfigError, parse_config
from inferstack.config.kinds import KINDS, kind_of
from inferstack.plan import resolve
from tests.synth import EFS_ID, SYNC_IMAGE

REFS = StorageRefs(region="us-east-1", bucket="models-bucket", efs_id=EFS_ID, sync_image=SYNC_IMAGE)
POOLS = {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]}
P5 = {"node_groups": [{"name": "p5", "instance_type": "p5.48xlarge", "efa": True, "availability_zone": 0}]}


def render(overrides: dict[str, Any], **workload: Any) -> list[dict[str, Any]]:
    data = {"name": "w", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}, "overrides": overrides, **workload}
    config = parse_config({"compute": P5 if workload.get("pool") == "p5" else POOLS, "workloads": [data]})
    (resolved,) = resolve(config).workloads
    chart = kind_of(resolved.config).chart(cdk8s.App(), "w", resolved, REFS)
    return chart.to_json()


def of_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (obj,) = [o for o in objects if o["kind"] == kind]
    return obj


def problems(overrides: dict[str, Any], **workload: Any) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        render(overrides, **workload)
    return [str(p) for p in raised.value.problems]


def test_a_patch_merges_into_the_object_and_keeps_the_rest():
    patch = {"spec": {"revisionHistoryLimit": 3, "template": {"metadata": {"annotations": {"team": "ml"}}}}}
    deployment = of_kind(render({"Deployment": patch}), "Deployment")
    assert deployment["spec"]["revisionHistoryLimit"] == 3
    assert deployment["spec"]["template"]["metadata"]["annotations"] == {"team": "ml"}
    assert deployment["spec"]["template"]["spec"]["containers"][0]["name"] == "vllm", "the rest is untouched"


def test_an_unknown_field_of_a_core_object_is_an_error_naming_the_path():
    (problem,) = problems({"Deployment": {"spec": {"revisionHistoryLimt": 3}}})
    assert problem.startswith("workloads[0].overrides.Deployment:") and "revisionHistoryLimt" in problem


def test_a_wrong_type_is_an_error():
    (problem,) = problems({"Service": {"spec": {"ports": "8000"}}})
    assert problem.startswith("workloads[0].overrides.Service:")


def test_a_key_that_names_no_object_lists_the_valid_ones():
    (problem,) = problems({"StatefulSet": {"spec": {}}})
    assert "renders no such object" in problem and "Deployment" in problem and "Service" in problem


def test_an_ambiguous_kind_asks_for_the_name():
    (problem,) = problems({"ServiceAccount": {"metadata": {"annotations": {"a": "b"}}}})
    assert "name one" in problem and "ServiceAccount/w-model-sync" in problem
    sa = [
        o
        for o in render({"ServiceAccount/w-model-sync": {"metadata": {"annotations": {"a": "b"}}}})
        if o["kind"] == "ServiceAccount"
    ]
    assert {o["metadata"]["name"]: o["metadata"].get("annotations") for o in sa} == {
        "w": None,
        "w-model-sync": {"a": "b"},
    }


def test_kind_and_api_version_cannot_be_overridden():
    (problem,) = problems({"Deployment": {"kind": "StatefulSet"}})
    assert problem.startswith("workloads[0].overrides.Deployment.kind:")


def test_a_custom_resource_is_checked_against_its_crd():
    multinode = {
        "kind": "vllm_multinode",
        "pool": "p5",
        "model": {"id": "meta-llama/Llama-3.1-405B-Instruct", "hf_token_secret": {"name": "hf"}},
        "engine": {"tensor_parallel_size": 8, "pipeline_parallel_size": 2},
    }
    lws = of_kind(
        render({"LeaderWorkerSet": {"spec": {"startupPolicy": "LeaderCreated"}}}, **multinode), "LeaderWorkerSet"
    )
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    (problem,) = problems({"LeaderWorkerSet": {"spec": {"leaderWorkerTemplate": {"sise": 3}}}}, **multinode)
    assert problem.startswith("workloads[0].overrides.LeaderWorkerSet:") and "sise" in problem


def test_an_override_key_must_look_like_a_kind():
    with pytest.raises(ConfigError) as raised:
        parse_config(
            {
                "compute": POOLS,
                "workloads": [
                    {"name": "w", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}, "overrides": {"deployment": {}}}
                ],
            }
        )
    assert str(raised.value.problems[0]).startswith("workloads[0].overrides")


def test_named_list_items_merge_by_name():
    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "vllm", "env": [{"name": "EXTRA", "value": "1"}]}]}}}
    }
    (container,) = of_kind(render({"Deployment": patch}), "Deployment")["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["EXTRA"] == "1" and env["HOME"] == "/home/vllm", "the rendered env stays"
    assert container["args"][0].startswith("s3://"), "the rest of the container stays"


@pytest.mark.parametrize(
    ("patch", "field", "owner"),
    [
        ({"metadata": {"name": "other"}}, "metadata.name", "name"),
        ({"metadata": {"namespace": "other"}}, "metadata.namespace", "namespace"),
        ({"spec": {"replicas": 3}}, "spec.replicas", "replicas"),
        ({"spec": {"selector": {"matchLabels": {"a": "b"}}}}, "spec.selector", "select"),
    ],
)
def test_fields_others_depend_on_cannot_be_overridden(patch, field, owner):
    (problem,) = problems({"Deployment": patch})
    assert problem.startswith(f"workloads[0].overrides.Deployment.{field}:") and owner in problem


def test_the_group_size_belongs_to_nodes():
    multinode = {
        "kind": "vllm_multinode",
        "pool": "p5",
        "model": {"id": "meta-llama/Llama-3.1-405B-Instruct", "hf_token_secret": {"name": "hf"}},
        "engine": {"tensor_parallel_size": 8, "pipeline_parallel_size": 2},
    }
    (problem,) = problems({"LeaderWorkerSet": {"spec": {"leaderWorkerTemplate": {"size": 3}}}}, **multinode)
    assert problem.startswith("workloads[0].overrides.LeaderWorkerSet.spec.leaderWorkerTemplate.size:")
    assert "set nodes" in problem


def test_two_keys_for_one_object_are_refused():
    (problem,) = problems({"Service": {"metadata": {"annotations": {"a": "1"}}}, "Service/w": {"spec": {}}})
    assert problem.startswith("workloads[0].overrides.Service/w:") and "patch it once" in problem


def _overridden_everywhere(example: str) -> tuple[list[list[dict[str, Any]]], list[list[dict[str, Any]]]]:
    """Every workload's objects of ``example``, rendered as they are and with an override of every object adding one
    annotation (issue 26 §1)."""
    import yaml

    from inferstack.plan.workloads import workloads_plan
    from inferstack.stacks.workloads import render_workloads
    from tests.synth import ROOT

    data = yaml.safe_load((ROOT / "examples" / example).read_text())
    rendered = render_workloads(workloads_plan(parse_config(data)), None, REFS)
    for workload, item in zip(data["workloads"], rendered, strict=True):
        keys = {f"{o.kind}/{o.name}" for o in item.chart.node.find_all() if isinstance(o, cdk8s.ApiObject)}
        workload["overrides"] = dict.fromkeys(sorted(keys), ANNOTATED)  # names as overrides know them
    after = [item.manifest for item in render_workloads(workloads_plan(parse_config(data)), None, REFS)]
    return [item.manifest for item in rendered], after


ANNOTATED = {"metadata": {"annotations": {"example.com/overridden": "yes"}}}
OVERRIDE_EXAMPLES = sorted({example for kind in KINDS.values() for example in kind.examples})


@pytest.mark.parametrize("example", OVERRIDE_EXAMPLES)
def test_an_override_changes_its_field_and_nothing_else(example):
    """Defect (issue 26 §1): an override of a Deployment, Service, Job or StatefulSet went back through the typed
    object's converter, which dropped every IntOrString and Quantity (ports, requests, limits, probe ports). Every
    object of every kind, overridden: only the annotation is new, every other field is as rendered."""
    before, after = _overridden_everywhere(example)
    for objects, overridden in zip(before, after, strict=True):
        by_name = {(o["kind"], o["metadata"]["name"]): o for o in overridden}
        assert len(by_name) == len(objects)
        for obj in objects:
            expected = copy.deepcopy(obj)
            expected["metadata"].setdefault("annotations", {})["example.com/overridden"] = "yes"
            assert by_name[(obj["kind"], obj["metadata"]["name"])] == expected, (obj["kind"], obj["metadata"]["name"])


def test_an_override_of_a_jobs_template_makes_a_new_job():
    """A Job's pod template is immutable, so the model-sync Job is content-named (constructs.batch.content_name); an
    override that changes its spec must rename it too, or the next deploy's apply fails on the existing Job."""

    def sync_job(overrides: dict[str, Any]) -> str:
        (job,) = [o for o in render(overrides) if o["kind"] == "Job"]
        return str(job["metadata"]["name"])

    plain = sync_job({})
    one = sync_job({"Job": {"spec": {"template": {"metadata": {"annotations": {"example.com/rev": "1"}}}}}})
    two = sync_job({"Job": {"spec": {"template": {"metadata": {"annotations": {"example.com/rev": "2"}}}}}})
    assert len({plain, one, two}) == 3
    assert one == sync_job({"Job": {"spec": {"template": {"metadata": {"annotations": {"example.com/rev": "1"}}}}}})
    labelled = sync_job({"Job": {"metadata": {"labels": {"example.com/team": "ml"}}}})
    assert labelled == plain  # the spec as rendered: the same Job


def test_an_override_that_gives_a_probe_a_second_handler_is_named():
    """The API server takes one handler per probe ("may not specify more than 1 handler type"); the schema check
    cannot see it: merging httpGet into the tcp probe probes.handler rendered is refused at synth."""
    patch = {
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "vllm", "readinessProbe": {"httpGet": {"path": "/h", "port": 8000}}}]}
            }
        }
    }
    (problem,) = problems({"Deployment": patch}, probes={"handler": "tcp"})
    assert problem.startswith("workloads[0].overrides.Deployment") and "httpGet and tcpSocket" in problem
    assert "probes" in problem
    tuned = {
        "spec": {
            "template": {"spec": {"containers": [{"name": "vllm", "readinessProbe": {"httpGet": {"path": "/h"}}}]}}
        }
    }
    deployment = of_kind(render({"Deployment": tuned}), "Deployment")  # the same handler: fine
    assert deployment["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["path"] == "/h"
