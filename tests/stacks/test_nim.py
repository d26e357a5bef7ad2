"""GIVEN a ``nim`` workload (examples/nim-llama-70b.yaml), WHEN synthesized, THEN the NIM operator is installed first,
the NIMCache downloads the profiles of the pod's tensor parallelism on the workload's pool into a retained, fast
volume, and the NIMService serves from it with the GPUs, placement, probes and Secrets the NIM operator expects."""

from __future__ import annotations

import pytest

from inferstack.catalog.kubernetes import MODEL_CACHE_STORAGE_CLASS, NIM_NAMESPACE
from inferstack.config import ConfigError, parse_config
from inferstack.config.nim import NimWorkloadConfig
from inferstack.plan import resolve
from inferstack.plan.nim import NIM_DEFAULT_STARTUP_SECONDS, nim_startup_seconds

HELM = "Custom::AWSCDK-EKS-HelmChart"
NIM = {
    "kind": "nim",
    "name": "qwen",
    "pool": "gpu",
    "model": {"id": "Qwen/Qwen3-8B"},
    "image": {"repository": "nvcr.io/nim/qwen/qwen3-8b", "tag": "1.0.0"},
    "ngc": {"api_key_secret": "ngc-api-secret", "pull_secret": "ngc-secret"},
}
POOLS = {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge", "g6e.12xlarge"]}]}


def config_with(**fields):
    return parse_config({"compute": POOLS, "workloads": [{**NIM, **fields}]})


def of_kind(app, kind: str) -> dict:
    (obj,) = [o for o in app.kubernetes_objects() if o["kind"] == kind]
    return obj


class TestNimService:
    def test_eight_gpus_placed_on_the_pool(self, nim_app):
        spec = of_kind(nim_app, "NIMService")["spec"]
        resources = spec["resources"]
        assert resources["requests"]["nvidia.com/gpu"] == resources["limits"]["nvidia.com/gpu"] == "8"
        assert spec["nodeSelector"] == {"inferstack.io/pool": "h100"}
        assert spec["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]

    def test_serves_from_its_cache_with_the_secrets_by_name(self, nim_app):
        spec = of_kind(nim_app, "NIMService")["spec"]
        assert spec["storage"]["nimCache"] == {"name": "llama-70b"}
        assert spec["authSecret"] == "ngc-api-secret"
        assert spec["image"] == {
            "repository": "nvcr.io/nim/meta/llama-3.1-70b-instruct",
            "tag": "1.8.4",
            "pullPolicy": "IfNotPresent",
            "pullSecrets": ["ngc-secret"],
        }

    def test_port_is_always_set_and_metrics_scraped(self, nim_app):
        spec = of_kind(nim_app, "NIMService")["spec"]
        # nimservice_types.go dereferences expose.service.port without a default (operator 3.0.0).
        assert spec["expose"]["service"]["port"] == 8000
        assert spec["metrics"] == {"enabled": True, "serviceMonitor": {"interval": "15s"}}

    def test_startup_probe_allows_the_profile_load(self, nim_app):
        probe = of_kind(nim_app, "NIMService")["spec"]["startupProbe"]
        assert probe["enabled"] is True
        p = probe["probe"]
        assert p["httpGet"] == {"path": "/v1/health/ready", "port": "api"}
        budget = p["initialDelaySeconds"] + p["periodSeconds"] * p["failureThreshold"]
        assert budget >= resolve(nim_app.config).workloads[0].server.pod.startup_seconds

    def test_inferstack_creates_no_service_account_the_operator_owns(self, nim_app):
        accounts = [o for o in nim_app.kubernetes_objects() if o["kind"] == "ServiceAccount"]
        assert all(a["metadata"]["name"] != "llama-70b" for a in accounts)

    def test_no_field_the_pinned_operator_lacks(self, nim_app):
        # operator 3.0.0's NIMService has no affinity / priorityClassName (added in 3.0.2 / 3.1.2).
        spec = of_kind(nim_app, "NIMService")["spec"]
        assert not {"affinity", "priorityClassName", "initContainers", "sidecarContainers"} & set(spec)


class TestNimCache:
    def test_profile_selection_from_the_config(self, nim_app):
        ngc = of_kind(nim_app, "NIMCache")["spec"]["source"]["ngc"]
        assert ngc["model"] == {
            "tensorParallelism": "8",  # a string in the CRD
            "engine": "tensorrt_llm",
            "precision": "bf16",
            "qosProfile": "latency",
            "gpus": [{"product": "h100", "ids": ["2330"]}],
            "lora": False,  # else the v2 manifest parser caches LoRA variants beside the base profile
        }
        assert ngc["modelPuller"] == "nvcr.io/nim/meta/llama-3.1-70b-instruct:1.8.4"
        assert ngc["authSecret"] == "ngc-api-secret" and ngc["pullSecret"] == "ngc-secret"

    def test_volume_is_created_retained_and_bound_near_the_gpus(self, nim_app):
        spec = of_kind(nim_app, "NIMCache")["spec"]
        assert spec["storage"]["pvc"] == {
            "create": True,
            "name": "llama-70b-model-cache",
            "size": "300Gi",
            "storageClass": MODEL_CACHE_STORAGE_CLASS,
            "volumeAccessMode": "ReadWriteOnce",  # no default in the operator
        }
        # The Job runs on the workload's pool: WaitForFirstConsumer binds the volume in a zone with its GPUs.
        assert spec["nodeSelector"] == {"inferstack.io/pool": "h100"}
        assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in spec["tolerations"]
        (storage_class,) = [
            o
            for o in nim_app.kubernetes_objects()
            if o["kind"] == "StorageClass" and o["metadata"]["name"] == MODEL_CACHE_STORAGE_CLASS
        ]
        assert storage_class["reclaimPolicy"] == "Retain"
        assert storage_class["volumeBindingMode"] == "WaitForFirstConsumer"
        assert storage_class["parameters"] == {
            "type": "gp3",
            "encrypted": "true",
            "iops": "16000",
            "throughput": "1000",
        }

    def test_hf_source_names_the_token_secret(self):
        config = config_with(
            model={"id": "Qwen/Qwen3-8B", "revision": "v1", "hf_token_secret": {"name": "hf", "key": "HF_TOKEN"}},
            cache={"source": "hf"},
        )
        from inferstack.charts.workload import StorageRefs
        from inferstack.plan.workloads import workloads_plan
        from inferstack.stacks.workloads import render_workloads

        (rendered,) = render_workloads(workloads_plan(config), None, StorageRefs(region="us-east-1"))
        (cache,) = [o for o in rendered.manifest if o["kind"] == "NIMCache"]
        assert cache["spec"]["source"] == {
            "hf": {
                "endpoint": "https://huggingface.co",
                "namespace": "Qwen",
                "modelName": "Qwen3-8B",
                "authSecret": "hf",
                "modelPuller": "nvcr.io/nim/qwen/qwen3-8b:1.0.0",
                "pullSecret": "ngc-secret",
                "revision": "v1",
            }
        }


def test_the_operator_is_installed_before_its_custom_resources(nim_app):
    template = nim_app.template("workloads")
    ((release_id, release),) = [
        (k, r)
        for k, r in template["Resources"].items()
        if r["Type"] == HELM and r["Properties"]["Chart"] == "k8s-nim-operator"
    ]
    props = release["Properties"]
    assert props["Namespace"] == NIM_NAMESPACE and props["Version"] == "3.0.0" and props["Wait"] is True
    manifests = [r for r in template["Resources"].values() if "NIMService" in str(r.get("Properties", {}))]
    assert manifests and all(release_id in r["DependsOn"] for r in manifests)
    # The StorageClass of the cache exists before the NIMCache (whose PVC names it).
    (storage,) = [k for k in template["Resources"] if k.startswith("ModelCacheStorageClass")]
    assert manifests and all(storage in r["DependsOn"] for r in manifests)


class TestConfig:
    @pytest.mark.parametrize(
        ("fields", "path", "words"),
        [
            ({"model": {"id": "Qwen/Qwen3-8B", "source": {"type": "fsx"}}}, "workloads[0].model.source", "NIMCache"),
            ({"service_account": "mine"}, "workloads[0].service_account", "operator creates"),
            ({"replicas": 0}, "workloads[0].replicas", "at least 1"),
            ({"autoscaling": {}}, "workloads[0].autoscaling", "replicas"),
            ({"image": {"repository": "nvcr.io/nim/x", "tag": "latest"}}, "workloads[0].image.tag", "pinned"),
            (
                {"model": {"id": "Qwen/Qwen3-8B", "hf_token_secret": {"name": "hf"}}},
                "workloads[0].model.hf_token_secret.key",
                "HF_TOKEN",
            ),
            ({"cache": {"profile": {"ids": ["x"]}}}, "workloads[0].cache.profile.ids", "64 hex"),
            (
                {"cache": {"profile": {"ids": ["a" * 64], "precision": "fp8"}}},
                "workloads[0].cache.profile.precision",
                "ignores",
            ),
            ({"cache": {"size_gib": 10}}, "workloads[0].cache.size_gib", "32"),
            ({"name": "n" * 48}, "workloads[0].name", "at most 47"),
            (
                {"cache": {"profile": {"gpu_device_ids": ["2330"]}}},
                "workloads[0].cache.profile.gpu_product",
                "gpu_product",
            ),
            (
                {"cache": {"profile": {"gpu_product": "h100", "gpu_device_ids": ["H100"]}}},
                "workloads[0].cache.profile.gpu_device_ids",
                "PCI",
            ),
        ],
    )
    def test_bad_fields_are_named(self, fields, path, words):
        with pytest.raises(ConfigError) as error:
            config_with(**fields)
        problems = {p.path: p.message for p in error.value.problems}
        assert path in problems, problems
        assert words in problems[path]

    def test_neuron_pools_are_refused(self):
        with pytest.raises(ConfigError) as error:
            parse_config(
                {
                    "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["inf2.24xlarge"]}]},
                    "workloads": [NIM],
                }
            )
        assert any(p.path == "workloads[0].pool" and "NVIDIA" in p.message for p in error.value.problems)

    def test_cache_size_defaults_from_the_weights(self):
        (workload,) = config_with().workloads
        assert isinstance(workload, NimWorkloadConfig)
        assert workload.cache_size_gib == max(32, int(workload.model.arch.params * 2 / 2**30 * 1.5) + 20)


def test_startup_budget_grows_with_the_profile_and_never_undercuts_nims_default():
    small = config_with().workloads[0]
    large = config_with(model={"id": "meta-llama/Llama-3.1-70B-Instruct"}, gpus=4).workloads[0]
    fp8 = config_with(
        model={"id": "meta-llama/Llama-3.1-70B-Instruct"}, gpus=4, cache={"profile": {"precision": "fp8"}}
    )
    assert nim_startup_seconds(small) == NIM_DEFAULT_STARTUP_SECONDS
    assert nim_startup_seconds(large) >= NIM_DEFAULT_STARTUP_SECONDS
    assert nim_startup_seconds(fp8.workloads[0]) <= nim_startup_seconds(large)
    huge = config_with(model={"id": "meta-llama/Llama-3.1-405B-Instruct"}, gpus=4).workloads[0]
    assert nim_startup_seconds(huge) > NIM_DEFAULT_STARTUP_SECONDS
