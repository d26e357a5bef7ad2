"""check_references: a compliant manifest set passes; each single break yields exactly the expected finding."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from typing import Any

import pytest

from inferstack.gates.references import (
    External,
    ReferenceFinding,
    check_references,
    parse_quantity,
    selector_matches,
)

NS = "serving"
TOKEN = "${Token[deploy-time]}"
LABELS = {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": "llama"}
EXTERNAL = External(secrets=frozenset({(NS, "hf-token"), (NS, "tls")}))
POD = "spec.template.spec"


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "llama", "namespace": NS, "labels": LABELS},
        "spec": {
            "selector": {"matchLabels": LABELS},
            "template": {
                "metadata": {"labels": {**LABELS, "tier": "serving"}},
                "spec": {
                    "serviceAccountName": "vllm",
                    "priorityClassName": "serving",
                    "initContainers": [
                        {"name": "fetch", "image": "busybox", "volumeMounts": [{"name": "models", "mountPath": "/m"}]}
                    ],
                    "containers": [
                        {
                            "name": "vllm",
                            "image": "vllm/vllm-openai",
                            "ports": [
                                {"name": "http", "containerPort": 8000},
                                {"name": "metrics", "containerPort": 9090},
                            ],
                            "env": [
                                {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "t"}}},
                                {
                                    "name": "MODEL",
                                    "valueFrom": {"configMapKeyRef": {"name": "vllm-config", "key": "model"}},
                                },
                                {
                                    "name": "OPTIONAL",
                                    "valueFrom": {"secretKeyRef": {"name": "nope", "key": "k", "optional": True}},
                                },
                                {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                            ],
                            "envFrom": [{"configMapRef": {"name": "vllm-config"}}],
                            "volumeMounts": [
                                {"name": "models", "mountPath": "/models"},
                                {"name": "config", "mountPath": "/etc/vllm"},
                                {"name": "tls", "mountPath": "/tls"},
                                {"name": "shm", "mountPath": "/dev/shm"},
                                {"name": "ca", "mountPath": "/ca"},
                            ],
                        }
                    ],
                    "volumes": [
                        {"name": "models", "persistentVolumeClaim": {"claimName": "models"}},
                        {
                            "name": "config",
                            "configMap": {"name": "vllm-config", "items": [{"key": "model", "path": "m"}]},
                        },
                        {"name": "tls", "secret": {"secretName": "tls"}},
                        {"name": "shm", "emptyDir": {"medium": "Memory"}},
                        {
                            "name": "ca",
                            "projected": {
                                "sources": [
                                    {
                                        "configMap": {
                                            "name": "kube-root-ca.crt",
                                            "items": [{"key": "ca.crt", "path": "a"}],
                                        }
                                    },
                                    {"secret": {"name": "tls"}},
                                    {"serviceAccountToken": {"path": "token"}},
                                ]
                            },
                        },
                    ],
                },
            },
        },
    }


def manifests() -> list[dict[str, Any]]:
    """A compliant set: every reference resolves."""
    meta = {"namespace": NS, "labels": LABELS}
    objects = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "vllm", "namespace": NS}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "serving"}, "value": 1},
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "vllm-config", "namespace": NS},
            "data": {"model": "llama"},
        },
        deployment(),
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "llama", **meta},
            "spec": {
                "selector": LABELS,
                "ports": [
                    {"name": "http", "port": 80, "targetPort": "http"},
                    {"name": "metrics", "port": 9090, "targetPort": 9090},
                ],
            },
        },
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "llama", **meta},
            "spec": {
                "maxUnavailable": 1,
                "selector": {
                    "matchLabels": LABELS,
                    "matchExpressions": [
                        {"key": "tier", "operator": "In", "values": ["serving", "batch"]},
                        {"key": "tier", "operator": "NotIn", "values": ["canary"]},
                        {"key": "app.kubernetes.io/name", "operator": "Exists"},
                        {"key": "legacy", "operator": "DoesNotExist"},
                    ],
                },
            },
        },
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PodMonitor",
            "metadata": {"name": "llama", "namespace": "monitoring"},
            "spec": {
                "namespaceSelector": {"matchNames": [NS]},
                "selector": {"matchLabels": LABELS},
                "podMetricsEndpoints": [{"port": "http", "path": "/metrics"}],
            },
        },
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "monitoring"}},
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "ServiceMonitor",
            "metadata": {"name": "llama", **meta},
            "spec": {"selector": {"matchLabels": LABELS}, "endpoints": [{"port": "metrics"}]},
        },
        {
            "apiVersion": "keda.sh/v1alpha1",
            "kind": "ScaledObject",
            "metadata": {"name": "llama", **meta},
            "spec": {"scaleTargetRef": {"name": "llama"}, "triggers": []},
        },
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "llama", **meta},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "llama"}},
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "models-pv"},
            "spec": {
                "capacity": {"storage": "1Ti"},
                "accessModes": ["ReadWriteMany", "ReadOnlyMany"],
                "storageClassName": "",
                "claimRef": {"namespace": NS, "name": "models"},
                "csi": {"driver": "fsx.csi.aws.com", "volumeHandle": TOKEN},
            },
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "models", "namespace": NS},
            "spec": {
                "volumeName": "models-pv",
                "storageClassName": "",
                "accessModes": ["ReadWriteMany"],
                "resources": {"requests": {"storage": "1000Gi"}},
            },
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "gp3"},
            "provisioner": "ebs.csi.aws.com",
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "scratch", "namespace": NS},
            "spec": {
                "storageClassName": "gp3",
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "10Gi"}},
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "cache", "namespace": NS},
            "spec": {
                "selector": {"matchLabels": {"app": "cache"}},
                "template": {
                    "metadata": {"labels": {"app": "cache"}},
                    "spec": {
                        "containers": [
                            {"name": "cache", "image": "redis", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}
                        ]
                    },
                },
                "volumeClaimTemplates": [
                    {
                        "metadata": {"name": "data"},
                        "spec": {"storageClassName": "gp3", "accessModes": ["ReadWriteOnce"]},
                    }
                ],
            },
        },
    ]
    return json.loads(json.dumps(objects))  # no shared dicts (deepcopy keeps aliases): tests mutate one object


def find(objects: list[dict[str, Any]], kind: str, name: str = "llama") -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def pod_spec(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return find(objects, "Deployment")["spec"]["template"]["spec"]


def only(objects: list[dict[str, Any]], external: External = EXTERNAL) -> ReferenceFinding:
    findings = check_references(objects, external)
    assert len(findings) == 1, "\n".join(map(str, findings))
    return findings[0]


def test_compliant_set_has_no_findings() -> None:
    assert check_references(manifests(), EXTERNAL) == []


def test_input_is_not_modified() -> None:
    objects = manifests()
    before = copy.deepcopy(objects)
    check_references(objects, EXTERNAL)
    assert objects == before


# --------------------------------------------------------------------------------------------------- pods


def test_mount_without_volume() -> None:
    objects = manifests()
    pod_spec(objects)["containers"][0]["volumeMounts"].append({"name": "cache", "mountPath": "/c"})
    finding = only(objects)
    assert finding.ref == f"Deployment/{NS}/llama"
    assert finding.path == f"{POD}.containers[0].volumeMounts[5].name"
    assert "'cache'" in finding.message


def test_init_container_mount_without_volume() -> None:
    objects = manifests()
    pod_spec(objects)["initContainers"][0]["volumeMounts"][0]["name"] = "model"
    assert only(objects).path == f"{POD}.initContainers[0].volumeMounts[0].name"


def test_volume_device_without_volume() -> None:
    objects = manifests()
    pod_spec(objects)["containers"][0]["volumeDevices"] = [{"name": "raw", "devicePath": "/dev/xvdb"}]
    assert only(objects).path == f"{POD}.containers[0].volumeDevices[0].name"


def test_statefulset_mount_of_claim_template_passes_and_missing_one_fails() -> None:
    objects = manifests()
    find(objects, "StatefulSet", "cache")["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] = "other"
    finding = only(objects)
    assert finding.ref == f"StatefulSet/{NS}/cache"
    assert finding.path == f"{POD}.containers[0].volumeMounts[0].name"


def test_duplicate_volume_name() -> None:
    objects = manifests()
    pod_spec(objects)["volumes"].append({"name": "shm", "emptyDir": {}})
    finding = only(objects)
    assert finding.path == f"{POD}.volumes[5].name"
    assert "more than one" in finding.message


def test_duplicate_container_name_across_init_and_regular() -> None:
    objects = manifests()
    pod_spec(objects)["initContainers"][0]["name"] = "vllm"
    finding = only(objects)
    assert finding.path == f"{POD}.containers[0].name"
    assert f"{POD}.initContainers[0]" in finding.message


def test_duplicate_container_name_with_ephemeral() -> None:
    objects = manifests()
    pod_spec(objects)["ephemeralContainers"] = [{"name": "fetch", "image": "busybox"}]
    assert only(objects).path == f"{POD}.ephemeralContainers[0].name"


def test_invalid_container_name() -> None:
    objects = manifests()
    pod_spec(objects)["containers"][0]["name"] = "vLLM_server"
    finding = only(objects)
    assert finding.path == f"{POD}.containers[0].name"
    assert "DNS-1123" in finding.fix


def test_port_name_too_long() -> None:
    objects = manifests()
    ports = pod_spec(objects)["containers"][0]["ports"]
    ports.append({"name": "http-metrics-port-long", "containerPort": 9100})
    finding = only(objects)
    assert finding.path == f"{POD}.containers[0].ports[2].name"
    assert "22 characters" in finding.message


@pytest.mark.parametrize("name", ["-http", "http-", "h--p", "8080", "HTTP", "http_x"])
def test_invalid_port_names(name: str) -> None:
    objects = manifests()
    pod_spec(objects)["containers"][0]["ports"].append({"name": name, "containerPort": 9100})
    assert only(objects).path == f"{POD}.containers[0].ports[2].name"


@pytest.mark.parametrize("name", ["http", "a", "grpc-web", "h2c", "p8080", "abcdefghijklmno"])
def test_valid_port_names(name: str) -> None:
    objects = manifests()
    pod_spec(objects)["containers"][0]["ports"].append({"name": name, "containerPort": 9100})
    findings = check_references(objects, EXTERNAL)
    assert [f for f in findings if "IANA" in f.message] == []


def test_duplicate_port_name_in_pod() -> None:
    objects = manifests()
    pod_spec(objects)["initContainers"][0]["ports"] = [{"name": "metrics", "containerPort": 9091}]
    finding = only(objects)
    assert finding.path == f"{POD}.containers[0].ports[1].name"
    assert "initContainers[0].ports[0]" in finding.message


def test_missing_service_account() -> None:
    objects = [o for o in manifests() if o["kind"] != "ServiceAccount"]
    finding = only(objects)
    assert (finding.ref, finding.path) == (f"Deployment/{NS}/llama", f"{POD}.serviceAccountName")
    assert f"{NS}/vllm" in finding.message


def test_external_service_account_passes() -> None:
    objects = [o for o in manifests() if o["kind"] != "ServiceAccount"]
    external = External(secrets=EXTERNAL.secrets, service_accounts=frozenset({(NS, "vllm")}))
    assert check_references(objects, external) == []


def test_default_service_account_always_exists() -> None:
    objects = manifests()
    del pod_spec(objects)["serviceAccountName"]
    assert check_references(objects, EXTERNAL) == []
    pod_spec(objects)["serviceAccountName"] = "default"
    assert check_references(objects, EXTERNAL) == []


def test_missing_priority_class_and_external_one() -> None:
    objects = [o for o in manifests() if o["kind"] != "PriorityClass"]
    assert only(objects).path == f"{POD}.priorityClassName"
    external = External(secrets=EXTERNAL.secrets, priority_classes=frozenset({"serving"}))
    assert check_references(objects, external) == []
    pod_spec(objects)["priorityClassName"] = "system-node-critical"
    assert check_references(objects, EXTERNAL) == []


def test_missing_config_map() -> None:
    objects = manifests()
    pod_spec(objects)["containers"][0]["env"][1]["valueFrom"]["configMapKeyRef"]["name"] = "other"
    finding = only(objects)
    assert finding.path == f"{POD}.containers[0].env[1].valueFrom.configMapKeyRef.name"
    assert f"{NS}/other" in finding.message
    external = External(secrets=EXTERNAL.secrets, config_maps=frozenset({(NS, "other")}))
    assert check_references(objects, external) == []


def test_config_map_in_other_namespace_does_not_resolve() -> None:
    objects = manifests()
    find(objects, "ConfigMap", "vllm-config")["metadata"]["namespace"] = "monitoring"
    paths = [f.path for f in check_references(objects, EXTERNAL)]
    assert paths == [
        f"{POD}.containers[0].env[1].valueFrom.configMapKeyRef.name",
        f"{POD}.containers[0].envFrom[0].configMapRef.name",
        f"{POD}.volumes[1].configMap.name",
    ]


def test_missing_config_map_key() -> None:
    objects = manifests()
    pod_spec(objects)["containers"][0]["env"][1]["valueFrom"]["configMapKeyRef"]["key"] = "tokenizer"
    finding = only(objects)
    assert finding.path == f"{POD}.containers[0].env[1].valueFrom.configMapKeyRef.key"
    assert "keys: model" in finding.message


def test_missing_config_map_volume_item_key() -> None:
    objects = manifests()
    pod_spec(objects)["volumes"][1]["configMap"]["items"][0]["key"] = "nope"
    assert only(objects).path == f"{POD}.volumes[1].configMap.items[0].key"


def test_kube_root_ca_exists_everywhere() -> None:
    objects = manifests()
    pod_spec(objects)["volumes"][4]["projected"]["sources"][0]["configMap"]["items"][0]["key"] = "ca.pem"
    assert only(objects).path == f"{POD}.volumes[4].projected.sources[0].configMap.items[0].key"


def test_missing_envfrom_config_map() -> None:
    objects = manifests()
    pod_spec(objects)["containers"][0]["envFrom"].append({"configMapRef": {"name": "extra"}})
    assert only(objects).path == f"{POD}.containers[0].envFrom[1].configMapRef.name"
    pod_spec(objects)["containers"][0]["envFrom"][1]["configMapRef"]["optional"] = True
    assert check_references(objects, EXTERNAL) == []


def test_undeclared_secret_in_secret_key_ref() -> None:
    objects = manifests()
    external = External(secrets=frozenset({(NS, "tls")}))
    finding = only(objects, external)
    assert finding.path == f"{POD}.containers[0].env[0].valueFrom.secretKeyRef.name"
    assert f"{NS}/hf-token" in finding.message
    assert "External.secrets" in finding.fix


def test_secret_declared_in_other_namespace_does_not_count() -> None:
    external = External(secrets=frozenset({("default", "hf-token"), (NS, "tls")}))
    assert only(manifests(), external).path == f"{POD}.containers[0].env[0].valueFrom.secretKeyRef.name"


def test_undeclared_secrets_in_volumes_envfrom_and_pull_secrets() -> None:
    objects = manifests()
    pod_spec(objects)["containers"][0]["envFrom"].append({"secretRef": {"name": "extra"}})
    pod_spec(objects)["imagePullSecrets"] = [{"name": "ecr"}]
    external = External(secrets=frozenset({(NS, "hf-token")}))
    paths = [f.path for f in check_references(objects, external)]
    assert paths == [
        f"{POD}.containers[0].envFrom[1].secretRef.name",
        f"{POD}.volumes[2].secret.secretName",
        f"{POD}.volumes[4].projected.sources[1].secret.name",
        f"{POD}.imagePullSecrets[0].name",
    ]


def test_missing_pvc_volume_and_external_pvc() -> None:
    objects = manifests()
    pod_spec(objects)["volumes"][0]["persistentVolumeClaim"]["claimName"] = "weights"
    assert only(objects).path == f"{POD}.volumes[0].persistentVolumeClaim.claimName"
    external = External(secrets=EXTERNAL.secrets, pvcs=frozenset({(NS, "weights")}))
    assert check_references(objects, external) == []


# --------------------------------------------------------------------------------------------------- namespaces


def test_missing_namespace() -> None:
    objects = [o for o in manifests() if not (o["kind"] == "Namespace" and o["metadata"]["name"] == "monitoring")]
    finding = only(objects)
    assert (finding.ref, finding.path) == ("PodMonitor/monitoring/llama", "metadata.namespace")


def test_missing_namespace_reports_every_namespaced_object_once() -> None:
    objects = [o for o in manifests() if not (o["kind"] == "Namespace" and o["metadata"]["name"] == NS)]
    findings = check_references(objects, EXTERNAL)
    assert {f.path for f in findings} == {"metadata.namespace"}
    refs = [f.ref for f in findings]
    assert len(refs) == len(set(refs))
    assert f"Deployment/{NS}/llama" in refs
    assert not any(r.startswith(("PersistentVolume/", "StorageClass/", "PriorityClass/")) for r in refs)


def test_external_namespace_passes() -> None:
    objects = [o for o in manifests() if o["kind"] != "Namespace"]
    external = External(secrets=EXTERNAL.secrets, namespaces=frozenset({NS, "monitoring"}))
    assert check_references(objects, external) == []


def test_unset_namespace_is_default() -> None:
    objects = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}]
    assert check_references(objects) == []
    finding = only(objects, External(namespaces=frozenset()))
    assert (finding.ref, finding.path) == ("ConfigMap/default/x", "metadata.namespace")


def test_cluster_scoped_custom_resource_needs_no_namespace() -> None:
    objects = [
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"scope": "Cluster", "names": {"kind": "Widget"}},
        },
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}},
        {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"}},
    ]
    assert check_references(objects, External(namespaces=frozenset())) == []


# --------------------------------------------------------------------------------------------------- Services


def test_service_target_port_name_missing() -> None:
    objects = manifests()
    find(objects, "Service")["spec"]["ports"][0]["targetPort"] = "web"
    finding = only(objects)
    assert (finding.ref, finding.path) == (f"Service/{NS}/llama", "spec.ports[0].targetPort")
    assert "'web'" in finding.message


def test_service_target_port_protocol_mismatch() -> None:
    objects = manifests()
    find(objects, "Service")["spec"]["ports"][0]["protocol"] = "UDP"
    finding = only(objects)
    assert finding.path == "spec.ports[0].targetPort"
    assert "protocol TCP" in finding.message


def test_service_numeric_target_port_not_declared() -> None:
    objects = manifests()
    find(objects, "Service")["spec"]["ports"][1]["targetPort"] = 9091
    finding = only(objects)
    assert finding.path == "spec.ports[1].targetPort"
    assert finding.message.startswith("warning:")


def test_service_target_port_defaults_to_port() -> None:
    objects = manifests()
    service_port = find(objects, "Service")["spec"]["ports"][1]
    del service_port["targetPort"]
    assert check_references(objects, EXTERNAL) == []
    service_port["port"] = 9443
    assert only(objects).path == "spec.ports[1].port"


def test_service_named_port_on_sidecar_counts_but_plain_init_container_does_not() -> None:
    objects = manifests()
    find(objects, "Service")["spec"]["ports"][0]["targetPort"] = "proxy"
    init = pod_spec(objects)["initContainers"][0]
    init["ports"] = [{"name": "proxy", "containerPort": 8080}]
    assert only(objects).path == "spec.ports[0].targetPort"
    init["restartPolicy"] = "Always"
    assert check_references(objects, EXTERNAL) == []


def test_service_selector_matching_nothing() -> None:
    objects = manifests()
    find(objects, "Service")["spec"]["selector"] = {"app.kubernetes.io/name": "sglang"}
    finding = only(objects)
    assert finding.path == "spec.selector"


def test_service_selector_in_other_namespace_matches_nothing() -> None:
    objects = manifests()
    find(objects, "Service")["metadata"]["namespace"] = "monitoring"
    findings = check_references(objects, EXTERNAL)
    assert [(f.ref, f.path) for f in findings] == [
        ("Service/monitoring/llama", "spec.selector"),
        (f"ServiceMonitor/{NS}/llama", "spec.selector"),
    ]


def test_service_without_selector_is_skipped() -> None:
    objects = manifests()
    service = find(objects, "Service")
    del service["spec"]["selector"]
    service["spec"]["ports"][0]["targetPort"] = "nowhere"
    assert check_references(objects, EXTERNAL) == []
    service["spec"]["selector"] = {}
    assert check_references(objects, EXTERNAL) == []


# --------------------------------------------------------------------------------------------------- PDBs


def test_pdb_selector_matching_nothing() -> None:
    objects = manifests()
    find(objects, "PodDisruptionBudget")["spec"]["selector"]["matchExpressions"][0]["values"] = ["batch"]
    finding = only(objects)
    assert (finding.ref, finding.path) == (f"PodDisruptionBudget/{NS}/llama", "spec.selector")


@pytest.mark.parametrize(
    "expression",
    [
        {"key": "tier", "operator": "NotIn", "values": ["serving"]},
        {"key": "tier", "operator": "DoesNotExist"},
        {"key": "gpu", "operator": "Exists"},
        {"key": "tier", "operator": "Like", "values": ["serving"]},
    ],
)
def test_pdb_expressions_that_exclude_the_pods(expression: dict[str, Any]) -> None:
    objects = manifests()
    find(objects, "PodDisruptionBudget")["spec"]["selector"]["matchExpressions"].append(expression)
    assert only(objects).path == "spec.selector"


def test_pdb_empty_selector_matches_all_and_null_selector_none() -> None:
    objects = manifests()
    pdb = find(objects, "PodDisruptionBudget")
    pdb["spec"]["selector"] = {}
    assert check_references(objects, EXTERNAL) == []
    del pdb["spec"]["selector"]
    finding = only(objects)
    assert finding.path == "spec.selector"
    assert "no selector" in finding.message


def test_pdb_empty_selector_in_namespace_without_pods() -> None:
    objects = manifests()
    pdb = find(objects, "PodDisruptionBudget")
    pdb["metadata"]["namespace"] = "monitoring"
    pdb["spec"]["selector"] = {}
    assert only(objects).ref == "PodDisruptionBudget/monitoring/llama"


# --------------------------------------------------------------------------------------------------- monitors


def test_pod_monitor_selector_label_no_pod_has() -> None:
    objects = manifests()
    find(objects, "PodMonitor")["spec"]["selector"]["matchLabels"]["team"] = "ml"
    finding = only(objects)
    assert (finding.ref, finding.path) == ("PodMonitor/monitoring/llama", "spec.selector")


def test_pod_monitor_port_name_not_on_pod() -> None:
    objects = manifests()
    find(objects, "PodMonitor")["spec"]["podMetricsEndpoints"].append({"port": "prom"})
    finding = only(objects)
    assert finding.path == "spec.podMetricsEndpoints[1].port"
    assert "http, metrics" in finding.message


def test_pod_monitor_namespace_selector() -> None:
    objects = manifests()
    monitor = find(objects, "PodMonitor")
    del monitor["spec"]["namespaceSelector"]
    assert only(objects).path == "spec.selector"  # own namespace (monitoring) has no pods
    monitor["spec"]["namespaceSelector"] = {"any": True}
    assert check_references(objects, EXTERNAL) == []
    monitor["spec"]["namespaceSelector"] = {"matchNames": ["default", "monitoring"]}
    assert only(objects).path == "spec.selector"


def test_service_monitor_selector_and_port() -> None:
    objects = manifests()
    monitor = find(objects, "ServiceMonitor")
    monitor["spec"]["endpoints"][0]["port"] = "http-metrics"
    finding = only(objects)
    assert (finding.ref, finding.path) == (f"ServiceMonitor/{NS}/llama", "spec.endpoints[0].port")
    monitor["spec"]["endpoints"][0]["port"] = "metrics"
    monitor["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    assert only(objects).path == "spec.selector"


# --------------------------------------------------------------------------------------------------- scaling


def test_scaled_object_targeting_missing_deployment() -> None:
    objects = manifests()
    find(objects, "ScaledObject")["spec"]["scaleTargetRef"]["name"] = "llama-70b"
    finding = only(objects)
    assert (finding.ref, finding.path) == (f"ScaledObject/{NS}/llama", "spec.scaleTargetRef.name")
    assert "apps/v1 Deployment serving/llama-70b" in finding.message


def test_scaled_object_kind_matters() -> None:
    objects = manifests()
    find(objects, "ScaledObject")["spec"]["scaleTargetRef"]["kind"] = "StatefulSet"
    assert only(objects).path == "spec.scaleTargetRef.name"
    find(objects, "ScaledObject")["spec"]["scaleTargetRef"]["name"] = "cache"
    assert check_references(objects, EXTERNAL) == []


def test_hpa_targeting_missing_deployment() -> None:
    objects = manifests()
    find(objects, "HorizontalPodAutoscaler")["metadata"]["namespace"] = "monitoring"
    finding = only(objects)
    assert (finding.ref, finding.path) == ("HorizontalPodAutoscaler/monitoring/llama", "spec.scaleTargetRef.name")


# --------------------------------------------------------------------------------------------------- storage


def pvc(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return find(objects, "PersistentVolumeClaim", "models")


def pv(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return find(objects, "PersistentVolume", "models-pv")


def test_pvc_bound_to_missing_pv() -> None:
    objects = manifests()
    pvc(objects)["spec"]["volumeName"] = "other-pv"
    finding = only(objects)
    assert (finding.ref, finding.path) == (f"PersistentVolumeClaim/{NS}/models", "spec.volumeName")


def test_pv_claim_ref_mismatch() -> None:
    objects = manifests()
    pv(objects)["spec"]["claimRef"]["namespace"] = "default"
    finding = only(objects)
    assert finding.path == "spec.volumeName"
    assert "default/models" in finding.message
    del pv(objects)["spec"]["claimRef"]
    assert check_references(objects, EXTERNAL) == []


def test_pv_capacity_too_small() -> None:
    objects = manifests()
    pv(objects)["spec"]["capacity"]["storage"] = "999Gi"
    finding = only(objects)
    assert finding.path == "spec.resources.requests.storage"
    assert "999Gi" in finding.message
    pv(objects)["spec"]["capacity"]["storage"] = "1000Gi"
    assert check_references(objects, EXTERNAL) == []
    pv(objects)["spec"]["capacity"]["storage"] = "1074G"  # 1074e9 bytes > 1000Gi = 1073.74e9 bytes
    assert check_references(objects, EXTERNAL) == []


def test_pv_storage_class_mismatch() -> None:
    objects = manifests()
    pv(objects)["spec"]["storageClassName"] = "fsx"
    finding = only(objects)
    assert finding.path == "spec.storageClassName"
    assert "'fsx'" in finding.message


def test_absent_and_empty_storage_class_are_equal() -> None:
    objects = manifests()
    del pv(objects)["spec"]["storageClassName"]
    assert check_references(objects, EXTERNAL) == []
    del pvc(objects)["spec"]["storageClassName"]
    assert check_references(objects, EXTERNAL) == []


def test_pv_access_mode_missing() -> None:
    objects = manifests()
    pvc(objects)["spec"]["accessModes"] = ["ReadWriteOnce", "ReadWriteMany"]
    finding = only(objects)
    assert finding.path == "spec.accessModes"
    assert "ReadWriteOnce" in finding.message


def test_pv_volume_mode_mismatch() -> None:
    objects = manifests()
    pvc(objects)["spec"]["volumeMode"] = "Block"
    assert only(objects).path == "spec.volumeMode"


def test_pvc_invalid_quantity() -> None:
    objects = manifests()
    pvc(objects)["spec"]["resources"]["requests"]["storage"] = "1 TB"
    assert "not a Kubernetes quantity" in only(objects).message


def test_dynamic_pvc_storage_class_missing_and_external() -> None:
    objects = manifests()
    find(objects, "PersistentVolumeClaim", "scratch")["spec"]["storageClassName"] = "io2"
    finding = only(objects)
    assert (finding.ref, finding.path) == (f"PersistentVolumeClaim/{NS}/scratch", "spec.storageClassName")
    external = External(secrets=EXTERNAL.secrets, storage_classes=frozenset({"io2"}))
    assert check_references(objects, external) == []


def test_claim_template_storage_class_missing() -> None:
    objects = [o for o in manifests() if o["kind"] != "StorageClass"]
    findings = check_references(objects, EXTERNAL)
    assert [(f.ref, f.path) for f in findings] == [
        (f"PersistentVolumeClaim/{NS}/scratch", "spec.storageClassName"),
        (f"StatefulSet/{NS}/cache", "spec.volumeClaimTemplates[0].spec.storageClassName"),
    ]


# --------------------------------------------------------------------------------------------------- tokens


def test_tokens_are_opaque_not_errors() -> None:
    objects = manifests()
    spec = pod_spec(objects)
    spec["serviceAccountName"] = TOKEN
    spec["priorityClassName"] = TOKEN
    spec["containers"][0]["env"][0]["valueFrom"]["secretKeyRef"]["name"] = TOKEN
    spec["containers"][0]["env"][1]["valueFrom"]["configMapKeyRef"]["key"] = TOKEN
    spec["volumes"][0]["persistentVolumeClaim"]["claimName"] = TOKEN
    spec["containers"][0]["ports"].append({"name": TOKEN, "containerPort": 1234})
    find(objects, "Deployment")["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/instance"] = TOKEN
    find(objects, "ScaledObject")["spec"]["scaleTargetRef"]["name"] = TOKEN
    find(objects, "Service")["spec"]["ports"][0]["targetPort"] = TOKEN
    pv(objects)["spec"]["capacity"]["storage"] = TOKEN
    pv(objects)["spec"]["storageClassName"] = TOKEN
    find(objects, "PersistentVolumeClaim", "scratch")["spec"]["storageClassName"] = TOKEN
    find(objects, "ConfigMap", "vllm-config")["metadata"]["namespace"] = NS
    find(objects, "PodDisruptionBudget")["metadata"]["namespace"] = TOKEN
    assert check_references(objects, External(secrets=frozenset({(NS, "tls")}))) == []


def test_token_equal_strings_are_not_duplicates() -> None:
    objects = manifests()
    containers = pod_spec(objects)["containers"]
    containers.append({**containers[0], "name": TOKEN, "ports": [{"name": TOKEN, "containerPort": 1}]})
    containers.append({**containers[0], "name": TOKEN, "ports": [{"name": TOKEN, "containerPort": 2}]})
    assert check_references(objects, EXTERNAL) == []


def test_token_in_selector_may_match() -> None:
    assert selector_matches({"matchLabels": {"app": TOKEN}}, {"app": "vllm"})
    assert selector_matches({"matchLabels": {"app": "vllm"}}, {"app": TOKEN})
    assert selector_matches({"matchExpressions": [{"key": "a", "operator": "In", "values": [TOKEN]}]}, {"a": "x"})


# --------------------------------------------------------------------------------------------------- helpers


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1Gi", 1024**3),
        ("1.5Gi", 3 * 1024**3 // 2),
        ("500M", 500 * 10**6),
        ("2k", 2000),
        ("1Ti", 1024**4),
        ("1Pi", 1024**5),
        ("1Ei", 1024**6),
        ("3E", 3 * 10**18),
        ("100m", Fraction(1, 10)),
        ("1e3", 1000),
        ("12", 12),
        (".5", Fraction(1, 2)),
        (42, 42),
    ],
)
def test_parse_quantity(text: object, value: Fraction | int) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "Gi", "1 Gi", "1gi", "1KB", TOKEN, None, True])
def test_parse_quantity_rejects(text: object) -> None:
    assert parse_quantity(text) is None


@pytest.mark.parametrize("text", ["1K", "NaN", "Infinity", "1_000", "1.5e3Gi"])
def test_parse_quantity_follows_the_api_server_not_the_python_client(text: str) -> None:
    """The API server's grammar (apimachinery ``pkg/api/resource/quantity.go``: decimal ``k`` only, digits only, no
    suffix after an exponent) refuses these. ``kubernetes.utils.parse_quantity`` (kubernetes 37.0.2,
    ``kubernetes/utils/quantity.py``) accepts all of them — ``K`` as 1000 and whatever ``Decimal()`` parses — so
    it cannot be the gate's parser: a manifest it passes would be refused at apply."""
    assert parse_quantity(text) is None


def test_selector_semantics() -> None:
    labels = {"app": "vllm", "tier": "serving"}
    assert selector_matches({}, labels)
    assert selector_matches({}, {})
    assert not selector_matches(None, labels)
    assert selector_matches({"matchLabels": {"app": "vllm"}}, labels)
    assert not selector_matches({"matchLabels": {"app": "vllm", "x": "y"}}, labels)
    assert selector_matches({"matchExpressions": [{"key": "x", "operator": "NotIn", "values": ["y"]}]}, labels)
    assert not selector_matches({"matchExpressions": [{"key": "x", "operator": "In", "values": ["y"]}]}, labels)


def test_finding_str() -> None:
    finding = ReferenceFinding(ref="Service/ns/x", path="spec.selector", message="matches nothing", fix="fix it")
    assert str(finding) == "Service/ns/x spec.selector: matches nothing — fix: fix it"


def test_token_config_map_values_still_have_known_keys() -> None:
    objects = manifests()
    find(objects, "ConfigMap", "vllm-config")["data"]["model"] = TOKEN
    assert check_references(objects, EXTERNAL) == []
    pod_spec(objects)["containers"][0]["env"][1]["valueFrom"]["configMapKeyRef"]["key"] = "other"
    assert only(objects).path == f"{POD}.containers[0].env[1].valueFrom.configMapKeyRef.key"
