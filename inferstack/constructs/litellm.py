"""LiteLLMGateway: the LiteLLM proxy — its ``config.yaml`` (a ConfigMap), the proxy Deployment on the shared serving
pod (port 4000, ``/health/readiness`` and ``/health/liveliness``, both unauthenticated; ``/health`` calls every model
and needs the key, so it is never probed), an HPA on CPU, and optionally its own Postgres (a StatefulSet with a
retained volume). Secrets — master key, salt key, provider keys, database password or URL — are referenced, never
written: the config names them ``os.environ/<VAR>`` and the pod reads each variable from its Secret."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from cdk8s_plus_36 import k8s
from constructs import Construct

from inferstack.constructs import validation as check
from inferstack.constructs.engine import EnginePlacement, EngineServer, EngineSpec
from inferstack.constructs.pod.mounts import Mount

PORT = 4000
CONFIG_DIR = "/etc/litellm"
HOME = "/home/litellm"
POSTGRES_PORT = 5432
POSTGRES_UID = 999
DATABASE = "litellm"


@dataclass(frozen=True, kw_only=True)
class SecretEnv:
    """An environment variable read from a Secret key."""

    name: str
    """The environment variable's name (e.g. ``LITELLM_MASTER_KEY``, or the ``<VAR>`` of an ``os.environ/<VAR>`` in
    the config)."""
    secret: str
    """Name of the Secret holding the value (in the gateway's namespace)."""
    key: str
    """Key of the value in ``secret``."""


@dataclass(frozen=True, kw_only=True)
class PostgresProps:
    """The gateway's own Postgres: image, the password Secret, the volume."""

    image: str
    """The Postgres image of the StatefulSet (run as uid 999), pinned by tag or digest."""
    password: SecretEnv
    """The database password's Secret key (only ``secret`` and ``key`` are used: the container reads it as
    ``POSTGRES_PASSWORD``)."""
    storage_gib: int
    """Size of the ReadWriteOnce data volume (the StatefulSet's ``data`` claim), GiB."""
    storage_class: str
    """StorageClass of the data volume."""


@dataclass(frozen=True, kw_only=True)
class LiteLLMGatewayProps:
    """The proxy: its rendered config, the Secret-backed variables, scaling and database.

    :param config: ``config.yaml`` (model_list, router_settings, litellm_settings, general_settings).
    :param secret_env: every variable the config names as ``os.environ/…`` (and the database's).
    :param hpa: ``(min, max, cpu %)`` for an HPA on CPU. Default none.
    """

    image: str
    """The LiteLLM proxy image (run as the image's own user), pinned by tag or digest."""
    config: Mapping[str, Any]
    """``config.yaml`` (``model_list``, ``router_settings``, ``litellm_settings``, ``general_settings``), in the
    ConfigMap ``<name>-config``; each ``os.environ/<VAR>`` it names must be in ``secret_env``."""
    secret_env: Sequence[SecretEnv]
    """Variables read from Secrets: every ``os.environ/…`` the config names (provider keys), the master and salt
    keys, the database's password or URL."""
    placement: EnginePlacement
    """The proxy pods' name, namespace, resources and placement (Postgres uses its ``placement.node_selector``
    too); with ``hpa`` the replicas are the HPA's."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Plain environment variables of the proxy (with ``postgres``, its ``DATABASE_HOST``/``_USERNAME``/``_NAME`` are
    added). Default none."""
    hpa: tuple[int, int, int] | None = None
    """``(min, max, cpu %)``: an HPA on CPU utilisation (percent of the CPU request) that owns the replicas. Default
    none."""
    postgres: PostgresProps | None = None
    """Deploy the gateway's own Postgres (StatefulSet and headless Service ``<name>-postgres``) and point the proxy
    at it. Default none."""


def _secret_env(item: SecretEnv) -> k8s.EnvVar:
    return k8s.EnvVar(
        name=item.name,
        value_from=k8s.EnvVarSource(secret_key_ref=k8s.SecretKeySelector(name=item.secret, key=item.key)),
    )


class LiteLLMGateway(Construct):
    """ConfigMap + proxy Deployment/Service/PDB/PodMonitor (+ HPA, + Postgres StatefulSet and Service)."""

    def __init__(self, scope: Construct, construct_id: str, props: LiteLLMGatewayProps) -> None:
        super().__init__(scope, construct_id)
        placement = props.placement
        owner = f"LiteLLMGateway {placement.name!r}"
        referenced = {v.name for v in props.secret_env}
        named = _environ_refs(props.config)
        if named - referenced:
            raise check.PropError(
                f"{owner}: config names os.environ/{sorted(named - referenced)} — no Secret backs them"
            )
        self.props = props
        labels = {"app.kubernetes.io/name": placement.name, "app.kubernetes.io/part-of": "inferstack"}
        self.config_map_name = f"{placement.name}-config"
        k8s.KubeConfigMap(
            self,
            "config",
            metadata=k8s.ObjectMeta(name=self.config_map_name, namespace=placement.namespace, labels=labels),
            data={"config.yaml": yaml.safe_dump(dict(props.config), sort_keys=False)},
        )
        env = dict(props.env)
        if props.postgres is not None:
            self.postgres_service = f"{placement.name}-postgres"
            env |= {
                "DATABASE_HOST": f"{self.postgres_service}.{placement.namespace}.svc.cluster.local:{POSTGRES_PORT}",
                "DATABASE_USERNAME": DATABASE,
                "DATABASE_NAME": DATABASE,
            }
            self._postgres(placement, props.postgres, labels)
        spec = EngineSpec(
            component="litellm",
            image=props.image,
            command=["litellm"],
            args=["--config", f"{CONFIG_DIR}/config.yaml", "--port", str(PORT)],
            container_name="litellm",
            port=PORT,
            health_path="/health/readiness",
            live_path="/health/liveliness",
            home=HOME,
            user="root",
            env=[
                *(k8s.EnvVar(name=k, value=v) for k, v in sorted(env.items())),
                *(_secret_env(item) for item in props.secret_env),
            ],
            run_as_image_user=True,
        )
        volume = k8s.Volume(name="config", config_map=k8s.ConfigMapVolumeSource(name=self.config_map_name))
        placement = dataclasses.replace(
            placement,
            mounts=[*placement.mounts, Mount(path=CONFIG_DIR, volume=volume, read_only=True)],
            replicas=None if props.hpa else placement.replicas,  # the HPA owns them
        )
        self.server = EngineServer(self, "proxy", spec, placement, owner=owner)
        self.service = self.server.service
        if props.hpa is not None:
            low, high, cpu = props.hpa
            k8s.KubeHorizontalPodAutoscalerV2(
                self,
                "hpa",
                metadata=k8s.ObjectMeta(name=placement.name, namespace=placement.namespace, labels=labels),
                spec=k8s.HorizontalPodAutoscalerSpecV2(
                    scale_target_ref=k8s.CrossVersionObjectReferenceV2(
                        api_version="apps/v1", kind="Deployment", name=placement.name
                    ),
                    min_replicas=low,
                    max_replicas=high,
                    metrics=[
                        k8s.MetricSpecV2(
                            type="Resource",
                            resource=k8s.ResourceMetricSourceV2(
                                name="cpu", target=k8s.MetricTargetV2(type="Utilization", average_utilization=cpu)
                            ),
                        )
                    ],
                ),
            )

    def _postgres(self, placement: EnginePlacement, postgres: PostgresProps, labels: Mapping[str, str]) -> None:
        name = f"{placement.name}-postgres"
        selector = {**labels, "app.kubernetes.io/component": "postgres"}
        k8s.KubeService(
            self,
            "postgres-service",
            metadata=k8s.ObjectMeta(name=name, namespace=placement.namespace, labels=selector),
            spec=k8s.ServiceSpec(
                cluster_ip="None",
                selector=selector,
                ports=[
                    k8s.ServicePort(
                        name="postgres", port=POSTGRES_PORT, target_port=k8s.IntOrString.from_string("postgres")
                    )
                ],
            ),
        )
        ready = k8s.Probe(
            exec=k8s.ExecAction(command=["pg_isready", "-U", DATABASE, "-d", DATABASE]),
            period_seconds=10,
            failure_threshold=6,
        )
        k8s.KubeStatefulSet(
            self,
            "postgres",
            metadata=k8s.ObjectMeta(name=name, namespace=placement.namespace, labels=selector),
            spec=k8s.StatefulSetSpec(
                service_name=name,
                replicas=1,
                selector=k8s.LabelSelector(match_labels=selector),
                template=k8s.PodTemplateSpec(
                    metadata=k8s.ObjectMeta(labels=selector),
                    spec=k8s.PodSpec(
                        automount_service_account_token=False,
                        node_selector=dict(placement.placement.node_selector),
                        security_context=k8s.PodSecurityContext(
                            fs_group=POSTGRES_UID, seccomp_profile=k8s.SeccompProfile(type="RuntimeDefault")
                        ),
                        containers=[
                            k8s.Container(
                                name="postgres",
                                image=postgres.image,
                                ports=[k8s.ContainerPort(name="postgres", container_port=POSTGRES_PORT)],
                                env=[
                                    k8s.EnvVar(name="POSTGRES_USER", value=DATABASE),
                                    k8s.EnvVar(name="POSTGRES_DB", value=DATABASE),
                                    k8s.EnvVar(name="PGDATA", value="/var/lib/postgresql/data/pgdata"),
                                    _secret_env(
                                        SecretEnv(
                                            name="POSTGRES_PASSWORD",
                                            secret=postgres.password.secret,
                                            key=postgres.password.key,
                                        )
                                    ),
                                ],
                                resources=k8s.ResourceRequirements(
                                    requests={
                                        "cpu": k8s.Quantity.from_string("500m"),
                                        "memory": k8s.Quantity.from_string("1Gi"),
                                    },
                                    limits={"memory": k8s.Quantity.from_string("1Gi")},
                                ),
                                readiness_probe=ready,
                                liveness_probe=ready,
                                security_context=k8s.SecurityContext(
                                    run_as_non_root=True,
                                    run_as_user=POSTGRES_UID,
                                    run_as_group=POSTGRES_UID,
                                    allow_privilege_escalation=False,
                                    capabilities=k8s.Capabilities(drop=["ALL"]),
                                ),
                                volume_mounts=[
                                    k8s.VolumeMount(name="data", mount_path="/var/lib/postgresql/data"),
                                    k8s.VolumeMount(name="run", mount_path="/var/run/postgresql"),
                                ],
                            )
                        ],
                        volumes=[k8s.Volume(name="run", empty_dir=k8s.EmptyDirVolumeSource())],
                    ),
                ),
                volume_claim_templates=[
                    k8s.KubePersistentVolumeClaimProps(
                        metadata=k8s.ObjectMeta(name="data"),
                        spec=k8s.PersistentVolumeClaimSpec(
                            access_modes=["ReadWriteOnce"],
                            storage_class_name=postgres.storage_class,
                            resources=k8s.VolumeResourceRequirements(
                                requests={"storage": k8s.Quantity.from_string(f"{postgres.storage_gib}Gi")}
                            ),
                        ),
                    )
                ],
            ),
        )


def _environ_refs(node: Any) -> set[str]:
    """Names of every ``os.environ/<NAME>`` value inside the config."""
    if isinstance(node, Mapping):
        return set().union(*(_environ_refs(v) for v in node.values())) if node else set()
    if isinstance(node, list | tuple):
        return set().union(*(_environ_refs(v) for v in node)) if node else set()
    if isinstance(node, str) and node.startswith("os.environ/"):
        return {node.removeprefix("os.environ/")}
    return set()
