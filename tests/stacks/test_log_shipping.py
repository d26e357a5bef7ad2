"""Container logs shipped off the nodes: an encrypted, retained log group, a least-privilege Fluent Bit, every node."""

from __future__ import annotations

import json

import pytest

from inferstack.config import ConfigError, InferstackConfig
from inferstack.config.loader import load_config
from inferstack.config.model import LOG_RETENTION_DAYS

GROUP = "/aws/eks/inferstack/containers-"
#: The UUID of the stack's id: new for every creation of the stack.
STACK_UUID = {"Fn::Select": [2, {"Fn::Split": ["/", {"Ref": "AWS::StackId"}]}]}


def _group(app):
    groups = app.resources("cluster", "AWS::Logs::LogGroup").values()
    return [g for g in groups if GROUP in json.dumps(g["Properties"]["LogGroupName"])]


def test_the_log_group_is_encrypted_kept_and_retained(default_app):
    (group,) = _group(default_app)
    assert group["Properties"]["LogGroupName"] == {"Fn::Join": ["", [GROUP, STACK_UUID]]}
    assert group["Properties"]["RetentionInDays"] == 30
    assert "KmsKeyId" in group["Properties"]
    assert group["DeletionPolicy"] == "Retain" and group["UpdateReplacePolicy"] == "Retain"


def test_the_key_serves_cloudwatch_logs_for_that_group_only(default_app):
    keys = default_app.resources("cluster", "AWS::KMS::Key")
    (key,) = [k for k in keys.values() if "container logs" in k["Properties"]["Description"]]
    assert key["Properties"]["EnableKeyRotation"] is True
    statements = key["Properties"]["KeyPolicy"]["Statement"]
    (logs,) = [s for s in statements if "Service" in s.get("Principal", {})]
    assert "logs." in json.dumps(logs["Principal"])
    condition = json.dumps(logs["Condition"]["ArnLike"]["kms:EncryptionContext:aws:logs:arn"])
    assert f"log-group:{GROUP}" in condition


def test_fluent_bit_may_only_write_streams_of_that_group(default_app):
    policies = default_app.resources("cluster", "AWS::IAM::Policy")
    (policy,) = [p for k, p in policies.items() if k.startswith("Rolefluentbit")]
    (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
    assert sorted(statement["Action"]) == ["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"]
    streams = json.dumps(statement["Resource"][1])
    assert len(statement["Resource"]) == 2 and GROUP in streams and json.dumps(STACK_UUID) in streams
    assert streams.endswith(':log-stream:*"]]}')
    associations = default_app.resources("cluster", "AWS::EKS::PodIdentityAssociation").values()
    bound = {(a["Properties"]["Namespace"], a["Properties"]["ServiceAccount"]) for a in associations}
    assert ("logging", "fluent-bit") in bound


def test_fluent_bit_runs_on_every_node_and_reads_only_the_logs(default_app):
    objects = default_app.kubernetes_objects()
    (daemon,) = [o for o in objects if o["kind"] == "DaemonSet" and o["metadata"]["name"] == "fluent-bit"]
    pod = daemon["spec"]["template"]["spec"]
    assert pod["tolerations"] == [{"operator": "Exists"}]
    (container,) = pod["containers"]
    assert container["image"].startswith("public.ecr.aws/aws-observability/aws-for-fluent-bit:2.32.5")
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts["/var/log"]["readOnly"] is True
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["LOG_GROUP"] == f"{GROUP}${{Token[deploy-time]}}"  # the stack's id, known at deploy
    (namespace,) = [o for o in objects if o["kind"] == "Namespace" and o["metadata"]["name"] == "logging"]
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    (config,) = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "fluent-bit"]
    text = config["data"]["fluent-bit.conf"]
    assert "Name              cloudwatch_logs" in text  # the C plugin: Pod Identity since 2.32.5
    assert "auto_create_group Off" in text and "log_group_name    ${LOG_GROUP}" in text


def test_re_creating_the_stack_after_a_teardown_gets_a_new_group():
    """Defect: the group had a fixed name and is retained, so creating the cluster stack again after a teardown failed
    ("already exists"). The name carries the stack's id, which every creation changes; key policy, role and Fluent
    Bit read the same expression."""
    import aws_cdk as cdk

    from inferstack.stacks.log_shipping import container_log_group_name

    stack = cdk.Stack(cdk.App(), "s")
    assert stack.resolve(container_log_group_name("c")) == {"Fn::Join": ["", ["/aws/eks/c/containers-", STACK_UUID]]}


def test_log_shipping_off_creates_nothing():
    base = load_config("inferstack.yaml").model_dump(by_alias=True, exclude_unset=True)
    config = InferstackConfig.model_validate({**base, "observability": {"log_shipping": False}})
    from tests.synth import synthesize

    app = synthesize(config, nag=False)
    assert _group(app) == []
    assert not [
        o for o in app.kubernetes_objects() if o["kind"] == "DaemonSet" and o["metadata"]["name"] == "fluent-bit"
    ]


def test_a_retention_cloudwatch_does_not_offer_is_named():
    from inferstack.config.loader import parse_config

    expected = r"observability\.log_retention_days: 31 — not a CloudWatch Logs retention — one of 1, 3, 5"
    with pytest.raises(ConfigError, match=expected):
        parse_config({"observability": {"log_retention_days": 31}})


def test_the_retention_list_is_cloudwatch_s():
    from aws_cdk import aws_logs

    assert len(LOG_RETENTION_DAYS) == len(
        [d for d in aws_logs.RetentionDays if d is not aws_logs.RetentionDays.INFINITE]
    )


def _fluent_bit_conf(objects: list[dict]) -> str:
    (config_map,) = [o for o in objects if o["kind"] == "ConfigMap" and "fluent-bit.conf" in o.get("data", {})]
    return config_map["data"]["fluent-bit.conf"]


def test_a_pod_cannot_keep_its_logs_out_unless_the_config_allows_it(default_app):
    """Fluent Bit's ``K8S-Logging.Exclude`` honours ``fluentbit.io/exclude`` on any pod: off by default, so a tenant
    cannot hide its pods' logs; ``observability.log_pod_exclusion`` turns it on."""
    import cdk8s

    from inferstack.constructs.log_shipping import LogShipping, LogShippingProps

    assert "K8S-Logging.Exclude Off" in _fluent_bit_conf(default_app.kubernetes_objects())
    assert InferstackConfig().observability.log_pod_exclusion is False
    chart = cdk8s.Chart(cdk8s.App(), "c")
    LogShipping(
        chart, "l", LogShippingProps(log_group="g", region="r", image="example.com/fluent-bit:1.0", pod_exclusion=True)
    )
    assert "K8S-Logging.Exclude On" in _fluent_bit_conf(chart.to_json())
