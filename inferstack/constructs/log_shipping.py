"""LogShipping: Fluent Bit on every node, tailing every container's log and writing it to one CloudWatch Logs group.

* Image ``aws-for-fluent-bit`` (AWS's Fluent Bit build): its C ``cloudwatch_logs`` output reads EKS Pod Identity
  credentials (``AWS_CONTAINER_CREDENTIALS_FULL_URI`` + the token file) since 2.32.5 (aws/aws-for-fluent-bit
  PR 888, "Adds Pod Identity feature to Fluent Bit"; upstream fluent/fluent-bit PR 10114). The Go ``cloudwatch``
  plugin does not (aws-for-fluent-bit issue 784), so it is not used.
* Input ``tail`` of ``/var/log/containers/*.log`` with the built-in ``cri`` / ``docker`` multiline parsers; the
  ``kubernetes`` filter adds namespace, pod, container and labels (it lists pods and namespaces: a ClusterRole).
* Output: the log group the stack created (``auto_create_group Off``), one stream per node and container file.
* Runs as root with the node's ``/var/log`` read-only (kubelet's log files are root-only): its namespace enforces
  the ``privileged`` Pod Security level, the only one that admits hostPath volumes. It tolerates every taint, so
  GPU and Neuron nodes ship their logs too. Its position database sits in a hostPath under ``/var/fluent-bit`` so
  a restarted pod resumes where it stopped.
"""

from __future__ import annotations

from dataclasses import dataclass

from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.catalog.kubernetes import LOGGING_NAMESPACE
from inferstack.constructs import validation as check
from inferstack.constructs.pod.mounts import Mount, pod_volumes, volume_mounts

NAMESPACE = LOGGING_NAMESPACE
NAME = "fluent-bit"
CONFIG = """[SERVICE]
    Flush             5
    Log_Level         info
    HTTP_Server       On
    HTTP_Listen       0.0.0.0
    HTTP_Port         2020
    Health_Check      On
    storage.path      /var/fluent-bit/state/flb-storage/

[INPUT]
    Name              tail
    Tag               kube.*
    Path              /var/log/containers/*.log
    multiline.parser  cri, docker
    DB                /var/fluent-bit/state/flb_container.db
    Mem_Buf_Limit     50MB
    Skip_Long_Lines   On
    Refresh_Interval  10
    storage.type      filesystem

[FILTER]
    Name              kubernetes
    Match             kube.*
    Kube_URL          https://kubernetes.default.svc:443
    Kube_Tag_Prefix   kube.var.log.containers.
    Merge_Log         On
    Keep_Log          Off
    K8S-Logging.Parser  On
    K8S-Logging.Exclude {exclude}
    Annotations       Off

[OUTPUT]
    Name              cloudwatch_logs
    Match             kube.*
    region            ${AWS_REGION}
    log_group_name    ${LOG_GROUP}
    log_stream_prefix ${NODE_NAME}.
    auto_create_group Off
    retry_limit       5
"""


@dataclass(frozen=True, kw_only=True)
class LogShippingProps:
    log_group: str
    """The CloudWatch Logs group (created, encrypted and retained by the stack)."""
    region: str
    """Region of the log group (``AWS_REGION`` of Fluent Bit, its ``cloudwatch_logs`` output's ``region``)."""
    image: str
    """The ``aws-for-fluent-bit`` image (2.32.5 or later reads Pod Identity credentials), pinned by tag or digest."""
    service_account: str = NAME
    """ServiceAccount of the DaemonSet, created here and bound to the ClusterRole reading pods and namespaces; Pod
    Identity gives it the log-writing role. Default ``fluent-bit``."""
    namespace: str = NAMESPACE
    """Namespace created for Fluent Bit (Pod Security ``privileged``). An RFC 1123 label. Default ``logging``."""
    pod_exclusion: bool = False
    """Honour the pod annotation ``fluentbit.io/exclude: "true"`` (the ``kubernetes`` filter's
    ``K8S-Logging.Exclude``): a pod that sets it ships no logs. Default False — every container's log is shipped,
    so a pod cannot hide what it does from the log group."""


def fluent_bit_config(props: LogShippingProps) -> str:
    """The ``fluent-bit.conf`` of ``props`` (:data:`CONFIG` with the exclusion switch set)."""
    return CONFIG.replace("{exclude}", "On" if props.pod_exclusion else "Off")


class LogShipping(Construct):
    """Namespace ``logging`` (Pod Security ``privileged``), the ServiceAccount Pod Identity binds, read access to pods
    and namespaces, the config and the DaemonSet."""

    def __init__(self, scope: Construct, construct_id: str, props: LogShippingProps) -> None:
        super().__init__(scope, construct_id)
        owner = "LogShipping"
        check.pinned_image(owner, "image", props.image)
        check.dns_label(owner, "namespace", props.namespace)
        labels = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/part-of": "inferstack"}
        k8s.KubeNamespace(
            self,
            "namespace",
            metadata=k8s.ObjectMeta(
                name=props.namespace,
                labels={**labels, "pod-security.kubernetes.io/enforce": "privileged"},
            ),
        )
        k8s.KubeServiceAccount(
            self,
            "service-account",
            metadata=k8s.ObjectMeta(name=props.service_account, namespace=props.namespace, labels=labels),
        )
        k8s.KubeClusterRole(
            self,
            "cluster-role",
            metadata=k8s.ObjectMeta(name=f"inferstack-{NAME}", labels=labels),
            rules=[k8s.PolicyRule(api_groups=[""], resources=["namespaces", "pods"], verbs=["get", "list", "watch"])],
        )
        k8s.KubeClusterRoleBinding(
            self,
            "cluster-role-binding",
            metadata=k8s.ObjectMeta(name=f"inferstack-{NAME}", labels=labels),
            role_ref=k8s.RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=f"inferstack-{NAME}"),
            subjects=[k8s.Subject(kind="ServiceAccount", name=props.service_account, namespace=props.namespace)],
        )
        k8s.KubeConfigMap(
            self,
            "config",
            metadata=k8s.ObjectMeta(name=NAME, namespace=props.namespace, labels=labels),
            data={"fluent-bit.conf": fluent_bit_config(props)},
        )
        env = [
            k8s.EnvVar(name="AWS_REGION", value=props.region),
            k8s.EnvVar(name="LOG_GROUP", value=props.log_group),
            k8s.EnvVar(
                name="NODE_NAME",
                value_from=k8s.EnvVarSource(field_ref=k8s.ObjectFieldSelector(field_path="spec.nodeName")),
            ),
        ]
        state = k8s.HostPathVolumeSource(path="/var/fluent-bit/state", type="DirectoryOrCreate")
        mounts = [
            Mount(
                path="/fluent-bit/etc/inferstack",
                volume=k8s.Volume(name="config", config_map=k8s.ConfigMapVolumeSource(name=NAME)),
                read_only=True,
            ),
            Mount(
                path="/var/log",
                volume=k8s.Volume(name="varlog", host_path=k8s.HostPathVolumeSource(path="/var/log")),
                read_only=True,
            ),
            Mount(path="/var/fluent-bit/state", volume=k8s.Volume(name="state", host_path=state)),
        ]
        container = k8s.Container(
            name=NAME,
            image=props.image,
            # the binary of the image's own CMD (fluent-bit images and aws-for-fluent-bit: /fluent-bit/bin/fluent-bit
            # ... -c /fluent-bit/etc/fluent-bit.conf); only the config path is ours. Not run here (?).
            command=["/fluent-bit/bin/fluent-bit", "-c", "/fluent-bit/etc/inferstack/fluent-bit.conf"],
            env=env,
            ports=[k8s.ContainerPort(name="http", container_port=2020)],
            readiness_probe=k8s.Probe(
                http_get=k8s.HttpGetAction(path="/api/v1/health", port=k8s.IntOrString.from_string("http")),
                period_seconds=10,
            ),
            liveness_probe=k8s.Probe(
                http_get=k8s.HttpGetAction(path="/api/v1/health", port=k8s.IntOrString.from_string("http")),
                initial_delay_seconds=30,
                period_seconds=30,
            ),
            resources=k8s.ResourceRequirements(
                requests={"cpu": k8s.Quantity.from_string("100m"), "memory": k8s.Quantity.from_string("128Mi")},
                limits={"memory": k8s.Quantity.from_string("512Mi")},
            ),
            security_context=k8s.SecurityContext(
                run_as_user=0,
                allow_privilege_escalation=False,
                capabilities=k8s.Capabilities(drop=["ALL"]),
                read_only_root_filesystem=True,
            ),
            volume_mounts=volume_mounts(mounts),
        )
        k8s.KubeDaemonSet(
            self,
            "daemon-set",
            metadata=k8s.ObjectMeta(name=NAME, namespace=props.namespace, labels=labels),
            spec=k8s.DaemonSetSpec(
                selector=k8s.LabelSelector(match_labels=labels),
                update_strategy=k8s.DaemonSetUpdateStrategy(type="RollingUpdate"),
                template=k8s.PodTemplateSpec(
                    metadata=k8s.ObjectMeta(labels=labels),
                    spec=k8s.PodSpec(
                        service_account_name=props.service_account,
                        priority_class_name="system-node-critical",
                        security_context=k8s.PodSecurityContext(
                            seccomp_profile=k8s.SeccompProfile(type="RuntimeDefault")
                        ),
                        tolerations=[k8s.Toleration(operator="Exists")],
                        termination_grace_period_seconds=10,
                        containers=[container],
                        volumes=pod_volumes(f"{NAME} DaemonSet", mounts),
                    ),
                ),
            ),
        )
