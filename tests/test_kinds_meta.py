"""Every registered kind has every part (issue 23 §1), and the parts agree with what its chart renders: the
endpoint a gateway routes to is a Service port the chart (or the operator) makes, the images it declares are the
ones its plan picks (each with image facts), its metrics decision matches its runtime paths, and its examples show
it. One module per kind under ``inferstack/kinds/``, each registered."""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path

import cdk8s
import pytest

from inferstack.catalog.images import IMAGE_FACTS, image_facts
from inferstack.catalog.versions import ENGINE_IMAGES, IMAGES
from inferstack.charts.observability import served_workload
from inferstack.charts.workload import StorageRefs
from inferstack.config import InferstackConfig, load_config
from inferstack.config.edit import with_changes
from inferstack.config.kinds import KINDS, WorkloadKind
from inferstack.gates.operator_services import operator_services
from inferstack.kinds import BUILT_IN_KINDS
from inferstack.plan import ResolvedWorkload, resolve
from inferstack.plan.network import runtime_paths
from inferstack.plan.served import engine_release, engines
from inferstack.rules.base import Rule
from tests.synth import EFS_ID, SYNC_IMAGE

ROOT = Path(__file__).resolve().parents[1]
KIND_MODULES = sorted(p.stem for p in (ROOT / "inferstack" / "kinds").glob("*.py") if p.stem != "__init__")
REFS = StorageRefs(
    region="us-east-1",
    bucket="b",
    fsx_id="fs-1",
    fsx_dns_name="d",
    fsx_mount_name="m",
    efs_id=EFS_ID,
    sync_image=SYNC_IMAGE,
)
#: Kinds whose pinned images have no image facts, and why: the LiteLLM proxy and Postgres run no engine (the facts
#: describe engines: accelerators, libfabric, flag lists).
WITHOUT_FACTS = {"litellm": {"litellm", "postgres"}}
#: Kinds whose image is the workload's own, chosen per model (a NIM image per model family).
OWN_IMAGE = {"nim"}
#: Kinds that export metrics whose series are not catalogued (inferstack.catalog.metrics): scraped, but no dashboard
#: row or alerts. KServe's Hugging Face server and Dynamo's workers run vLLM, but which names reach their scrape
#: endpoints is not confirmed; Triton, SGLang, TGI and LiteLLM have their own series, not read yet.
UNCATALOGUED_METRICS = {"triton", "sglang", "tgi", "litellm", "kserve", "dynamo"}
#: Kinds whose server container an operator takes from elsewhere: KServe merges its ServingRuntime's container (the
#: kserve-runtime-configs release, tests/gates/test_operator_projections.py) over the predictor's.
RUNTIME_IMAGE = {"kserve"}


def test_every_module_under_kinds_is_one_registered_built_in_kind():
    modules = {name: importlib.import_module(f"inferstack.kinds.{name}") for name in KIND_MODULES}
    assert {module.KIND.name for module in modules.values()} == set(KIND_MODULES)
    assert [kind.name for kind in BUILT_IN_KINDS] == [name for name in KINDS if name in KIND_MODULES]
    assert all(KINDS[kind.name] is kind for kind in BUILT_IN_KINDS)


KIND_IDS = [kind.name for kind in BUILT_IN_KINDS]


@cache
def example(name: str) -> InferstackConfig:
    return load_config(ROOT / "examples" / name)


@cache
def first_of_kind(kind: str) -> tuple[InferstackConfig, ResolvedWorkload]:
    """The first workload of ``kind`` in the kind's first example, planned."""
    config = example(KINDS[kind].examples[0])
    resolved = next(w for w in resolve(config).workloads if w.kind == kind)
    return config, resolved


@cache
def rendered(kind: str) -> tuple[dict, ...]:
    config, resolved = first_of_kind(kind)
    chart = KINDS[kind].chart(cdk8s.App(), "w", resolved, REFS, kubernetes_version=config.cluster.kubernetes_version)
    return tuple(chart.to_json())


@pytest.mark.parametrize("kind", BUILT_IN_KINDS, ids=KIND_IDS)
def test_each_kind_declares_every_part(kind: WorkloadKind):
    assert kind.summary and kind.config.model_fields["kind"].default == kind.name
    assert all(callable(part) for part in (kind.plan, kind.chart, kind.paths))
    assert kind.rules and all(isinstance(rule, Rule) for group in kind.rules for rule in group)
    assert (kind.endpoint is None) != (not kind.no_endpoint)
    assert kind.examples, "a kind shows itself in at least one example"
    assert kind.name in OWN_IMAGE or kind.images


@pytest.mark.parametrize("kind", BUILT_IN_KINDS, ids=KIND_IDS)
def test_each_example_it_names_holds_it(kind: WorkloadKind):
    for name in kind.examples:
        assert kind.name in {w.kind for w in example(name).workloads}, name


@pytest.mark.parametrize("kind", BUILT_IN_KINDS, ids=KIND_IDS)
def test_its_images_have_facts_and_are_the_ones_its_plan_runs(kind: WorkloadKind):
    assert {key for key in kind.images if key not in IMAGE_FACTS} == WITHOUT_FACTS.get(kind.name, set())
    uris = {ENGINE_IMAGES.get(key) or IMAGES[key] for key in kind.images}
    _, resolved = first_of_kind(kind.name)
    assert kind.engine_image is not None
    assert kind.engine_image(resolved.config, resolved.pool.accelerator) == resolved.image
    if kind.name not in OWN_IMAGE:
        assert resolved.image in uris
    images = {image for o in rendered(kind.name) for image in _images(o)} - TOOLS
    if kind.name in RUNTIME_IMAGE:
        assert images == set()
    else:
        assert resolved.image in images and (kind.name in OWN_IMAGE or images <= uris), sorted(images - uris)


#: The batch Jobs' images (model sync, Neuron compile, benchmark upload), not the kind's.
TOOLS = {ENGINE_IMAGES["aws-cli"], SYNC_IMAGE}


def _images(obj: dict) -> set[str]:
    """Every image ``obj`` names: its containers' (Deployments, CRs' pod templates) and a NIMService's
    ``spec.image`` (repository and tag)."""
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("containers", "initContainers") and isinstance(value, list):
                    found.update(c["image"] for c in value if isinstance(c, dict) and "image" in c)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(obj)
    image = obj.get("spec", {}).get("image") if obj.get("kind") == "NIMService" else None
    if image:
        found.add(f"{image['repository']}:{image['tag']}")
    return found


#: Variants of a kind's first example whose Services the operator projection models (KServe's Knative mode is
#: Knative Serving's: the example scales to zero).
SERVICE_VARIANTS = {
    "kserve": {
        "workloads[0].deployment_mode": "Standard",
        "workloads[0].scaling": {"min_replicas": 1, "max_replicas": 2},
        "workloads[0].cold_start_tolerance_seconds": None,
    }
}


@pytest.mark.parametrize("kind", [k for k in BUILT_IN_KINDS if k.endpoint is not None], ids=lambda k: k.name)
def test_its_endpoint_is_a_service_port_that_exists(kind: WorkloadKind):
    """The endpoint names a Service the chart renders or the operator makes (:mod:`inferstack.gates.operator_services`,
    the operators' naming at their pinned versions), at one of its ports; where an operator makes it, the Service's
    port and the pods' port are the ones the kind declares (its clients' egress admits them)."""
    endpoint = kind.endpoint
    assert endpoint is not None
    config, resolved = first_of_kind(kind.name)
    if kind.name in SERVICE_VARIANTS:
        variant = with_changes(config, SERVICE_VARIANTS[kind.name])
        assert variant is not None
        config = variant
        resolved = next(w for w in resolve(config).workloads if w.kind == kind.name)
    objects = kind.chart(
        cdk8s.App(), "w", resolved, REFS, kubernetes_version=config.cluster.kubernetes_version
    ).to_json()
    ours = {
        o["metadata"]["name"]: {(p["port"], p.get("targetPort", p["port"])) for p in o["spec"]["ports"]}
        for o in objects
        if o["kind"] == "Service"
    }
    made = {s.name: set(s.ports) for s in operator_services(objects)}
    assert not set(ours) & set(made)
    name = f"{resolved.name}{endpoint.suffix}"
    ports = {**ours, **made}.get(name, set())
    assert (endpoint.port or 80) in {port for port, _ in ports}, (name, ours, made)
    if kind.operator_service_ports:
        assert name in made and {n for pair in ports for n in pair if isinstance(n, int)} <= set(
            kind.operator_service_ports
        )
    else:
        assert name in ours


@pytest.mark.parametrize("kind", BUILT_IN_KINDS, ids=KIND_IDS)
def test_its_metrics_decision_matches_its_paths_and_dashboards(kind: WorkloadKind):
    """A kind that exports no metrics declares no metrics port; one with catalogued series gets a dashboard row for
    a monitored workload, one without does not."""
    config, resolved = first_of_kind(kind.name)
    platform = resolve(config)
    assert bool(runtime_paths(platform, resolved).metrics) == kind.scrapeable
    assert kind.scrapeable or kind.metrics is None
    assert (kind.metrics is None) == (kind.name in UNCATALOGUED_METRICS or not kind.scrapeable)
    monitored = resolved.config.monitoring
    assert (served_workload(resolved) is not None) == (kind.metrics is not None and monitored)


@pytest.mark.parametrize("kind", [k for k in BUILT_IN_KINDS if k.unchecked_flags], ids=lambda k: k.name)
def test_a_kind_with_unchecked_flags_takes_extra_args_and_runs_no_vllm(kind: WorkloadKind):
    assert "extra_args" in kind.config.model_fields["engine"].annotation.model_fields
    assert all(IMAGE_FACTS[key].vllm_version is None for key in kind.images)


@pytest.mark.parametrize("kind", BUILT_IN_KINDS, ids=KIND_IDS)
def test_its_engines_are_sized_with_the_vllm_release_its_image_runs(kind: WorkloadKind):
    """MODEL-FIT and ``inferstack plan`` size each vLLM engine with the profile of the release inside the image that
    runs (its ``engine_image``: Ray's, Dynamo's, KServe's and Triton's run vLLM inside another server)."""
    config, resolved = first_of_kind(kind.name)
    sized = [engine for _, engine in engines(config) if engine.workload.name == resolved.name]
    facts = image_facts(resolved.image)
    if not sized:
        assert facts is None or facts.vllm_version is None or kind.name in RUNTIME_IMAGE
        return
    assert facts is not None and facts.vllm_version is not None
    assert {engine_release(engine) for engine in sized} == {facts.vllm_version}
