"""GIVEN the default platform and the examples, WHEN synthesized, THEN what was schema-valid but would not run on a
real cluster now does: each class is named after the failure it prevents (issue 8, §1). Karpenter's IAM is in
tests/gates/test_conformance.py, Neuron serving in tests/stacks/test_workloads.py, the imported cluster in
tests/stacks/test_compute.py."""

from __future__ import annotations

import json
import shlex
from typing import ClassVar

import cdk8s
import pytest

from inferstack.cli import json_property
from inferstack.config import parse_config
from inferstack.constructs.model_sync import ModelSyncJob, ModelSyncJobProps
from inferstack.constructs.pod import PodPlacement
from inferstack.constructs.vllm import CACHE_ENV, EXIT_MARGIN_SECONDS, PRE_STOP_SECONDS
from inferstack.rules import evaluate
from tests.stacks.test_workloads import arg, container, objects, pod_spec

HELM = "Custom::AWSCDK-EKS-HelmChart"


def helm_values(app, chart: str) -> dict:
    for template in app.templates.values():
        for resource in template["Resources"].values():
            if resource["Type"] == HELM and resource["Properties"]["Chart"] == chart:
                return json_property(resource["Properties"]["Values"])
    raise AssertionError(f"no {chart} release")


def job(app, component: str) -> dict:
    return next(j for j in objects(app, "Job") if j["metadata"]["labels"]["app.kubernetes.io/component"] == component)


class TestJobsDeclareWhatTheyMount:
    """The model-sync and compile Jobs mounted a ``work`` volume nobody declared: the API server rejects them."""

    @pytest.mark.parametrize("component", ["model-sync", "neuron-compile"])
    def test_work_is_a_sized_empty_dir(self, neuron_vllm_app, component):
        spec = job(neuron_vllm_app, component)["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in spec["volumes"]}
        mounted = {m["name"] for c in spec["containers"] for m in c["volumeMounts"]}
        assert mounted <= set(volumes)
        assert volumes["work"]["emptyDir"]["sizeLimit"].endswith("Gi")


class TestNonRootVllm:
    """vLLM's image has no USER and no HOME; as UID 1000 without a passwd entry torch's getpass.getuser() raises."""

    def test_user_home_and_caches_are_set(self, default_app):
        env = {e["name"]: e.get("value") for e in container(default_app)["env"]}
        assert env["USER"] == env["LOGNAME"] == "vllm" and env["HOME"] == "/home/vllm"
        for name in CACHE_ENV:
            assert env[name].startswith("/home/vllm/"), name
        assert env["VLLM_CACHE_ROOT"] == "/home/vllm/.cache/vllm"

    def test_home_and_tmp_are_writable_volumes(self, default_app):
        mounts = {m["mountPath"]: m for m in container(default_app)["volumeMounts"]}
        assert not mounts["/home/vllm"].get("readOnly") and not mounts["/tmp"].get("readOnly")
        volumes = {v["name"]: v for v in pod_spec(default_app)["volumes"]}
        assert "emptyDir" in volumes[mounts["/home/vllm"]["name"]]
        security = container(default_app)["securityContext"]
        assert security["runAsNonRoot"] is True and security["runAsUser"] == 1000


class TestModelFileSet:
    """Mistral-format repos carry consolidated.safetensors and HF shards; the Run:ai streamer reads both."""

    def _exclude(self, app) -> list[str]:
        env = {
            e["name"]: e.get("value")
            for e in job(app, "model-sync")["spec"]["template"]["spec"]["containers"][0]["env"]
        }
        return env["EXCLUDE"].split(",")

    def test_mistral_format_syncs_no_hf_shards(self, default_app):
        assert "model*.safetensors" in self._exclude(default_app)
        assert "--config-format" in container(default_app)["args"]

    def test_hf_format_syncs_no_consolidated_copy(self, tp4_app):
        assert {"consolidated*.safetensors", "original/*"} <= set(self._exclude(tp4_app))


class TestRolloutsDrain:
    """vLLM's --shutdown-timeout defaults to 0: SIGTERM aborts in-flight requests."""

    def test_engine_drains_within_the_grace_period(self, default_app):
        spec = pod_spec(default_app)
        timeout = int(arg(container(default_app)["args"], "--shutdown-timeout"))
        pre_stop = container(default_app)["lifecycle"]["preStop"]["sleep"]["seconds"]
        assert timeout > 0 and pre_stop == PRE_STOP_SECONDS
        assert pre_stop + timeout + EXIT_MARGIN_SECONDS == spec["terminationGracePeriodSeconds"]


class TestEngineRelease:
    """The Neuron DLC's vLLM 0.16 has no --shutdown-timeout: read from the tag, whatever the registry or digest."""

    @pytest.mark.parametrize(
        ("image", "drains"),
        [
            ("vllm/vllm-openai:v0.19.0", True),
            ("public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.16.0-neuronx-py312-sdk2.31.1-ubuntu24.04", False),
            (
                "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.16.0-neuronx-py312-sdk2.31.1-ubuntu24.04"
                "@sha256:" + "0" * 64,
                False,
            ),
            (
                "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.24.0.1.1.0-neuronx-py313-sdk2.32.0-ubuntu24.04",
                True,
            ),
        ],
    )
    def test_drain_support_follows_the_image(self, image, drains):
        from inferstack.catalog.engine_flags import supports_shutdown_timeout

        assert supports_shutdown_timeout(image) is drains


class TestJobUpdates:
    """Job pod templates are immutable: a changed Job must get a new name."""

    @staticmethod
    def _name(**changes) -> tuple[str, str]:
        props = {
            "name": "m-model-sync",
            "namespace": "ns",
            "service_account": "sa",
            "bucket": "b",
            "prefix": "models/x/",
            "region": "us-west-2",
            "model_id": "org/x",
            "image": "registry.example.com/model-sync:1",
            **changes,
        }
        chart = cdk8s.Chart(cdk8s.App(), "c")
        sync = ModelSyncJob(chart, "sync", ModelSyncJobProps(**props))
        config_map = next(o for o in chart.to_json() if o["kind"] == "ConfigMap")["metadata"]["name"]
        return sync.job_name, config_map

    def test_same_job_same_name(self):
        assert self._name() == self._name()

    @pytest.mark.parametrize(
        "change",
        [
            {"revision": "v2"},
            {"exclude": ("*.bin",)},
            {"placement": PodPlacement(node_selector={"a": "b"})},
            {"scratch_gib": 100},
        ],
    )
    def test_any_template_change_is_a_new_job(self, change):
        name, config_map = self._name(**change)
        assert name != self._name()[0] and config_map == f"{name}-script"

    def test_deploy_time_tokens_do_not_rename_jobs(self):
        assert self._name(bucket="${Token[Bucket.Name.12]}") == self._name(bucket="${Token[Bucket.Name.99]}")


class TestNamespacesWeDoNotOwn:
    """A workload in ``default`` (or a declared existing namespace) must not relabel that namespace."""

    BASE: ClassVar[dict] = {
        "compute": {"karpenter_pools": [{"name": "gpu", "instance_families": ["g6e"]}]},
        "workloads": [
            {"name": "a", "namespace": "default", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}},
            {"name": "b", "namespace": "team-ml", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}},
            {"name": "c", "namespace": "inference", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}},
        ],
    }

    def test_only_created_namespaces_are_applied(self, synth_config):
        config = parse_config({**self.BASE, "cluster": {"existing_namespaces": ["team-ml"]}})
        app = synth_config(config, nag=False)
        assert {n["metadata"]["name"] for n in objects(app, "Namespace")} == {"inference", "logging"}

    def test_namespaces_are_never_pruned_or_deleted(self, default_app):
        """Pruning a Namespace deletes everything in it (the team's Secrets too)."""
        resources = default_app.template("workloads")["Resources"]
        (namespaces,) = [r for k, r in resources.items() if k.startswith("Namespaces")]
        assert "PruneLabel" not in namespaces["Properties"]
        assert namespaces["DeletionPolicy"] == namespaces["UpdateReplacePolicy"] == "Retain"


class TestPersistentPrometheus:
    """Prometheus kept 15 days on an emptyDir: gone at every restart."""

    def test_prometheus_keeps_samples_on_a_gp3_volume(self, default_app):
        spec = helm_values(default_app, "kube-prometheus-stack")["prometheus"]["prometheusSpec"]
        claim = spec["storageSpec"]["volumeClaimTemplate"]["spec"]
        assert claim["storageClassName"] == "inferstack-gp3" and claim["resources"]["requests"]["storage"] == "50Gi"
        assert spec["retention"] == "15d"
        (storage_class,) = objects(default_app, "StorageClass")
        assert storage_class["provisioner"] == "ebs.csi.aws.com" and storage_class["reclaimPolicy"] == "Retain"
        assert storage_class["parameters"] == {"type": "gp3", "encrypted": "true"}
        addons = default_app.resources("workloads", "AWS::EKS::Addon").values()
        assert [a["Properties"]["AddonName"] for a in addons] == ["aws-ebs-csi-driver"]

    def test_prometheus_never_fills_its_volume(self, default_app):
        spec = helm_values(default_app, "kube-prometheus-stack")["prometheus"]["prometheusSpec"]
        assert spec["retentionSize"] == "42GB"  # 85 % of 50 GiB (Prometheus' GB are base 2)

    @pytest.mark.parametrize(
        ("observability", "addon", "storage_class"),
        [
            ({"install_ebs_csi_driver": False}, False, True),
            ({"prometheus_storage_class": "team-gp3"}, False, False),
        ],
    )
    def test_a_cluster_with_its_own_ebs_driver_or_class(self, synth_config, observability, addon, storage_class):
        config = parse_config(
            {
                "observability": observability,
                "compute": {"karpenter_pools": [{"name": "gpu", "instance_families": ["g6e"]}]},
                "workloads": [{"name": "q", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}}],
            }
        )
        app = synth_config(config, nag=False)
        assert bool(app.resources("workloads", "AWS::EKS::Addon")) is addon
        assert bool(objects(app, "StorageClass")) is storage_class
        claim = helm_values(app, "kube-prometheus-stack")["prometheus"]["prometheusSpec"]["storageSpec"]
        expected = observability.get("prometheus_storage_class", "inferstack-gp3")
        assert claim["volumeClaimTemplate"]["spec"]["storageClassName"] == expected

    def test_prometheus_crds_are_upgraded(self, default_app):
        crds = helm_values(default_app, "kube-prometheus-stack")["crds"]
        assert crds["upgradeJob"]["enabled"] is True
        assert crds["upgradeJob"]["image"]["busybox"]["tag"] != "latest"


class TestNeuronChart:
    """The Neuron chart's node-problem detector goes into a namespace nobody created."""

    def test_healthcheck_namespace_exists_before_the_chart(self, neuron_app):
        resources = neuron_app.template("compute")["Resources"]
        (chart_id,) = [
            k for k, r in resources.items() if r["Type"] == HELM and r["Properties"]["Chart"] == "neuron-helm-chart"
        ]
        namespaces = [
            k
            for k, r in resources.items()
            if "neuron-healthcheck-system" in json.dumps(r["Properties"].get("Manifest", ""))
        ]
        assert namespaces and set(namespaces) <= set(resources[chart_id]["DependsOn"])

    def test_scheduler_extension_runs_on_system_nodes(self, neuron_app):
        scheduler = helm_values(neuron_app, "neuron-helm-chart")["scheduler"]
        assert scheduler["enabled"] is True and scheduler["customScheduler"]["enabled"] is True
        assert scheduler["nodeSelector"] == {"inferstack.io/pool": "system"}

    def test_the_second_scheduler_matches_the_cluster_version(self, neuron_app):
        image = helm_values(neuron_app, "neuron-helm-chart")["scheduler"]["customScheduler"]["image"]
        assert image["tag"] == f"v{neuron_app.config.cluster.kubernetes_version}.0"

    def test_node_problem_detector_tolerates_the_neuron_pools(self, neuron_app):
        npd = helm_values(neuron_app, "neuron-helm-chart")["npd"]
        assert {t["key"] for t in npd["tolerations"]} == {"aws.amazon.com/neuron"}


class TestDaemonsTolerateTheirPools:
    def test_extra_tolerations_reach_every_daemon(self):
        from inferstack.config.compute import NodeDaemon
        from inferstack.stacks.operators import efa_plugin_values, neuron_values

        taint = [{"key": "dedicated", "value": "llm"}]
        config = parse_config(
            {
                "compute": {
                    "karpenter_pools": [
                        {
                            "name": "efa",
                            "instance_families": ["p5"],
                            "efa": True,
                            "availability_zone": 0,
                            "taints": taint,
                        },
                        {"name": "inf2", "instance_families": ["inf2"], "taints": taint},
                    ],
                    "gpu_operator": {"extra_tolerations": [{"key": "dedicated"}]},
                    "efa_plugin": {"extra_tolerations": [{"key": "dedicated"}]},
                    "neuron_plugin": {"extra_tolerations": [{"key": "dedicated"}]},
                }
            }
        )
        efa = efa_plugin_values(
            "602401143452.dkr.ecr.us-west-2.amazonaws.com", config.compute.daemon_tolerations(NodeDaemon.EFA_PLUGIN)
        )
        neuron = neuron_values(config.compute.daemon_tolerations(NodeDaemon.NEURON_PLUGIN))
        assert {t["key"] for t in efa["tolerations"]} == {"nvidia.com/gpu", "dedicated"}
        assert {t["key"] for t in neuron["devicePlugin"]["tolerations"]} == {"aws.amazon.com/neuron", "dedicated"}


class TestCheckAgreesWithSynth:
    """``storage.model_bucket: null`` with an hf source passed check and failed synth (an empty storage stack)."""

    CONFIG: ClassVar[dict] = {
        "storage": {"model_bucket": None},
        "compute": {"karpenter_pools": [{"name": "gpu", "instance_families": ["g6e"]}]},
        "workloads": [{"name": "q", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B", "source": {"type": "hf"}}}],
    }

    def test_hf_only_platform_synthesizes_without_a_storage_stack(self, synth_config):
        config = parse_config(self.CONFIG)
        assert evaluate(config).errors == []
        app = synth_config(config, nag=False)
        assert not any(name.endswith("-storage") for name in app.templates)
        args = container(app)["args"]
        assert args[0] == "Qwen/Qwen3-8B" and shlex.join(args).count("--revision main") == 1

    def test_a_checkpoint_larger_than_the_node_disk_is_a_finding(self):
        workload = {
            "name": "r1",
            "pool": "p5en",
            "model": {"id": "deepseek-ai/DeepSeek-R1", "source": {"type": "hf", "cache_size_gib": 700}},
            "engine": {"tensor_parallel_size": 8},
        }
        config = parse_config(
            {
                "storage": {"model_bucket": None},
                "compute": {"karpenter_pools": [{"name": "p5en", "instance_types": ["p5en.48xlarge"]}]},
                "workloads": [workload],
            }
        )
        findings = [f for f in evaluate(config).errors if f.rule == "MODEL-DISK"]
        assert findings and "node disk" in findings[0].message and "root_volume_gib" in findings[0].fix


class TestEksRegistryPerRegion:
    """Defect: the EFA device plugin image came from account 602401143452 in every region; opt-in, China and
    GovCloud regions host EKS's images in accounts of their own (add-ons-images.adoc)."""

    def _registry(self, region: str | None) -> str:
        import aws_cdk as cdk

        from inferstack.stacks.operators import eks_registry

        app = cdk.App()
        stack = cdk.Stack(app, "s", env=cdk.Environment(account="123456789012", region=region) if region else None)
        registry = eks_registry(stack)
        return json.dumps(stack.resolve(registry)), stack

    def test_a_pinned_region_gets_its_account(self):
        assert "877085696533.dkr.ecr.af-south-1" in self._registry("af-south-1")[0]
        assert self._registry("cn-north-1")[0] == '"918309763551.dkr.ecr.cn-north-1.amazonaws.com.cn"'
        assert "602401143452.dkr.ecr.us-west-2" in self._registry("us-west-2")[0]

    def test_an_env_agnostic_stack_reads_the_account_from_a_mapping(self):
        resolved, stack = self._registry(None)
        assert "Fn::FindInMap" in resolved and "AWS::URLSuffix" in resolved
        import aws_cdk as cdk

        template = cdk.assertions.Template.from_stack(stack).to_json()
        accounts = template["Mappings"]["EksImageRegistryAccounts"]
        assert accounts["us-gov-west-1"] == {"account": "013241004608"}
        assert accounts["me-south-1"] == {"account": "558608220178"}
