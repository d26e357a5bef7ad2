"""StorageStack: the model bucket (retained), optional FSx for Lustre in the GPU zone (retained), optional EFS for
shared caches (retained), and the Mountpoint for S3 / FSx / EFS CSI drivers as EKS add-ons with Pod Identity roles.

Data is never destroyed by inferstack: bucket, log bucket, key and file systems carry ``DeletionPolicy: Retain``
and ``UpdateReplacePolicy: Retain``; removing them from the config orphans them with their data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_efs as efs
from aws_cdk import aws_eks_v2 as eks
from aws_cdk import aws_fsx as fsx
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from inferstack.catalog.models import TOKENIZER_FILES
from inferstack.catalog.versions import STORAGE_ADDON_SERVICE_ACCOUNTS, STORAGE_ADDONS
from inferstack.config.storage import (
    BucketEncryption,
    EfsConfig,
    EfsThroughputMode,
    ExistingEfsConfig,
    ExistingFsxConfig,
    FsxConfig,
    FsxDeploymentType,
    ModelBucketConfig,
    StorageConfig,
)
from inferstack.constructs.model_sync import MODEL_SYNC_IMAGE_DIR
from inferstack.plan import ResolvedWorkload
from inferstack.stacks.cluster_refs import cluster_security_group_id
from inferstack.stacks.nag import acknowledge, managed_policy, nag_render
from inferstack.stacks.pod_identity import pod_identity_role
from inferstack.stacks.zones import zone_subnet

LOG_BUCKET_NO_LOGS = "This bucket receives the model bucket's server access logs; logging it to itself would loop"
MOUNTPOINT_READS_BUCKET = (
    "The Mountpoint CSI driver mounts any model prefix of the model bucket for s3_mount workloads (driver-level "
    "credentials); it can only list and read (mounts are read-only), in this one bucket"
)
FSX_DESCRIBE = (
    "Volumes are statically provisioned (no create/delete rights): the FSx CSI controller only describes file "
    "systems, an action that supports no resource-level permissions"
)
PREFIX_WILDCARD = (
    "Object access is limited to this model's bucket prefix (<prefix>*): the objects under it are not known "
    "at synth time"
)
FSX_LINKED_ROLE = "aws-service-role/s3.data-source.lustre.fsx.amazonaws.com/*"
#: The EFS CSI controller's policy: AWS's own (v1, 2023-07-25), which lets it create access points only with its
#: ``efs.csi.aws.com/cluster`` tag and delete only access points carrying it (AWS managed policy reference,
#: AmazonEFSCSIDriverPolicy; kubernetes-sigs/aws-efs-csi-driver v3.4.1 docs/iam-policy-example.json).
EFS_CSI_POLICY = "service-role/AmazonEFSCSIDriverPolicy"
EFS_CSI_MANAGED = (
    "AWS's policy for the EFS CSI driver (AmazonEFSCSIDriverPolicy): access points are created and deleted only with "
    "the driver's cluster tag; describes support no resource-level permissions"
)


#: What a model reader may do with objects under its prefix.
READ_OBJECT = ["s3:GetObject"]
#: What the model-sync / compile Jobs may do under their prefix. Delete: the sync removes files a new file set
#: leaves out (the bucket is versioned: they stay recoverable).
WRITE_OBJECT = ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload", "s3:DeleteObject"]
#: What the benchmark may do with its results prefix: add objects (``aws s3 cp`` uploads, multipart included), never
#: read, list or delete what earlier runs wrote.
UPLOAD_OBJECT = ["s3:PutObject", "s3:AbortMultipartUpload"]


@dataclass
class WorkloadRoles:
    """Pod Identity roles of one workload (None where its source needs none)."""

    reader: iam.Role | None = None
    sync: iam.Role | None = None
    bench: iam.Role | None = None
    """The benchmark Job: writes its results prefix, reads the model prefix's tokenizer."""


class StorageStack(cdk.Stack):
    """Model storage from the ``storage`` section of the config (bucket, FSx, CSI drivers). See the module docstring.

    :param cluster_name: the cluster's EKS name (named in the CSI roles' descriptions). Default: the cluster's
        ``cluster_name`` attribute (a token for a cluster created in another stack).
    :param zones: the VPC's zones in order, for a file system pinned by zone name. Default: ``vpc.availability_zones``.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StorageConfig,
        vpc: ec2.IVpc,
        cluster: eks.ICluster,
        cluster_name: str | None = None,
        zones: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.config = config
        self.cluster = cluster
        self.cluster_name = cluster_name or cluster.cluster_name
        self.zones = zones
        storage = config
        self.bucket_key: kms.IKey | None = None
        self.bucket: s3.IBucket | None = None
        if storage.model_bucket is not None:
            self.bucket = self._model_bucket(storage.model_bucket)
        self._exports: dict[str, str] = {}
        self._sync_image: ecr_assets.DockerImageAsset | None = None
        self.file_system: fsx.IFileSystem | None = None
        self.fsx_mount_name: str | None = None
        """The Lustre mount name of :attr:`file_system` (an imported file system has no attribute for it)."""
        if storage.fsx is not None and storage.fsx.existing is not None:
            self.file_system = self._existing_file_system(storage.fsx.existing)
            self.fsx_mount_name = storage.fsx.existing.mount_name
        elif storage.fsx is not None:
            created = self._file_system(storage.fsx, vpc)
            self.file_system, self.fsx_mount_name = created, created.mount_name
        self.efs_file_system: efs.IFileSystem | None = None
        if storage.efs is not None and storage.efs.existing is not None:
            self.efs_file_system = self._existing_efs(storage.efs.existing)
        elif storage.efs is not None:
            self.efs_file_system = self._efs(storage.efs, vpc)
        self._outputs()
        self.addons: dict[str, eks.Addon] = {}
        self.install_csi_drivers = storage.install_csi_drivers
        if self.bucket is not None:
            role = self._csi_addon("aws-mountpoint-s3-csi-driver", self._mountpoint_statements())
            objects = nag_render(self.resolve(self.bucket.bucket_arn))
            acknowledge(role, "IAM5", MOUNTPOINT_READS_BUCKET, (f"Resource::{objects}/*",))
        if self.file_system is not None:
            role = self._csi_addon(
                "aws-fsx-csi-driver", [iam.PolicyStatement(actions=["fsx:DescribeFileSystems"], resources=["*"])]
            )
            acknowledge(role, "IAM5", FSX_DESCRIBE, ("Resource::*",))
        if self.efs_file_system is not None:
            role = self._csi_addon("aws-efs-csi-driver", [])
            role.add_managed_policy(iam.ManagedPolicy.from_aws_managed_policy_name(EFS_CSI_POLICY))
            acknowledge(role, "IAM4", EFS_CSI_MANAGED, (managed_policy(EFS_CSI_POLICY),))

    @property
    def model_sync_image(self) -> str:
        """The image of the model-sync Jobs: ``storage.model_sync_image``, else inferstack's own built from
        ``inferstack/images/model-sync`` as a container asset of this stack (created on first use; ``cdk deploy``
        builds it with Docker and pushes it to the bootstrap repository, which the nodes' ECR policies may pull
        from). Its tag is the build context's content hash."""
        if self.config.model_sync_image is not None:
            return self.config.model_sync_image
        if self._sync_image is None:
            self._sync_image = ecr_assets.DockerImageAsset(
                self, "ModelSyncImage", directory=str(MODEL_SYNC_IMAGE_DIR), platform=ecr_assets.Platform.LINUX_AMD64
            )
        return self._sync_image.image_uri

    @property
    def model_sync_image_identity(self) -> str | None:
        """What changes with :attr:`model_sync_image`: the built asset's content hash (its URI is a token), or None
        for a configured image (its text is the identity)."""
        self.model_sync_image  # noqa: B018 - creates the asset when it is inferstack's own
        return self._sync_image.asset_hash if self._sync_image is not None else None

    # -- bucket --------------------------------------------------------------------------------------------------
    def _model_bucket(self, config: ModelBucketConfig) -> s3.IBucket:
        if config.existing_bucket_name:
            return s3.Bucket.from_bucket_name(self, "ModelBucket", config.existing_bucket_name)
        logs = None
        if config.access_logs:
            logs = s3.Bucket(
                self,
                "AccessLogs",
                encryption=s3.BucketEncryption.S3_MANAGED,  # server access log delivery supports SSE-S3 only
                enforce_ssl=True,
                block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
                # Object ownership left to CDK: log delivery by bucket policy (feature flag) or by ACL.
                removal_policy=cdk.RemovalPolicy.RETAIN,
                lifecycle_rules=[s3.LifecycleRule(expiration=cdk.Duration.days(365))],
            )
            acknowledge(logs, "S1", LOG_BUCKET_NO_LOGS)
        encryption: dict[str, Any] = {"encryption": s3.BucketEncryption.S3_MANAGED}
        if config.encryption is BucketEncryption.KMS:
            self.bucket_key = kms.Key(
                self,
                "ModelBucketKey",
                enable_key_rotation=True,
                description="Encrypts the inferstack model bucket",
                removal_policy=cdk.RemovalPolicy.RETAIN,
            )
            encryption = {
                "encryption": s3.BucketEncryption.KMS,
                "encryption_key": self.bucket_key,
                "bucket_key_enabled": True,
            }
        bucket = s3.Bucket(
            self,
            "ModelBucket",
            bucket_name=config.bucket_name,
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            versioned=True,
            server_access_logs_bucket=logs,
            server_access_logs_prefix="model-bucket/" if logs else None,
            removal_policy=cdk.RemovalPolicy.RETAIN,
            lifecycle_rules=[
                s3.LifecycleRule(
                    noncurrent_version_expiration=cdk.Duration.days(config.noncurrent_version_days),
                    abort_incomplete_multipart_upload_after=cdk.Duration.days(7),
                )
            ],
            **encryption,
        )
        if logs is None:  # storage.model_bucket.access_logs: false — built as configured, recorded for cdk-nag
            acknowledge(
                bucket, "S1", "storage.model_bucket.access_logs is false in the config: access logs off on purpose"
            )
        return bucket

    def _outputs(self) -> None:
        """What the workloads' objects read of this stack, as outputs of fixed names (``ModelBucketName``,
        ``FsxFileSystemId``, ``FsxMountName``): ``aws cloudformation describe-stacks`` gives them to ``inferstack
        export`` however the Kubernetes side is delivered — with ``kubernetes_delivery: gitops`` no workloads stack
        refers to them, so CDK publishes no cross-stack outputs of its own."""
        if self.bucket is not None:
            cdk.CfnOutput(self, "ModelBucketName", value=self.bucket.bucket_name, description="The model bucket")
        if self.file_system is not None:
            cdk.CfnOutput(self, "FsxFileSystemId", value=self.file_system.file_system_id, description="FSx for Lustre")
            cdk.CfnOutput(self, "FsxMountName", value=self.fsx_mount_name or "", description="Its Lustre mount name")
        if self.efs_file_system is not None:
            cdk.CfnOutput(
                self, "EfsFileSystemId", value=self.efs_file_system.file_system_id, description="EFS (shared caches)"
            )

    def _export(self, name: str, value: str) -> str:
        """Export ``value`` from this stack under ``<stack>-<name>`` (once) and return the export name."""
        if name not in self._exports:
            export = f"{self.stack_name}-{name}"
            cdk.CfnOutput(self, f"Export-{name}", value=value, export_name=export)
            self._exports[name] = export
        return self._exports[name]

    def _imported(self, scope: Construct) -> tuple[s3.IBucket, kms.IKey | None]:
        """The model bucket (and its key) as ``scope``'s stack sees them: through named exports, so grants and
        cdk-nag findings in that stack name a stable ``Fn::ImportValue`` (not a generated output name)."""
        assert self.bucket is not None
        if cdk.Stack.of(scope) is self:
            return self.bucket, self.bucket_key
        stack = cdk.Stack.of(scope)
        existing = stack.node.try_find_child("ImportedModelBucket")
        if existing is None:
            arn = cdk.Fn.import_value(self._export("model-bucket-arn", self.bucket.bucket_arn))
            s3.Bucket.from_bucket_arn(stack, "ImportedModelBucket", arn)
            if self.bucket_key is not None:
                key_arn = cdk.Fn.import_value(self._export("model-bucket-key-arn", self.bucket_key.key_arn))
                kms.Key.from_key_arn(stack, "ImportedModelBucketKey", key_arn)
        bucket = stack.node.find_child("ImportedModelBucket")
        key = stack.node.try_find_child("ImportedModelBucketKey")
        return bucket, key  # type: ignore[return-value]

    def add_workload_roles(self, scope: Construct, resolved: ResolvedWorkload, cluster_name: str) -> WorkloadRoles:
        """Reader role (server pods streaming from S3) and writer role (model-sync / compile Jobs), both limited to
        the workload's model prefix, created in ``scope`` (the workloads stack of that workload: the roles shard
        with their workloads, so no stack outgrows CloudFormation's 500 resources), each trusting only the service
        accounts it is associated with in ``cluster_name``. None without a bucket."""
        roles = WorkloadRoles()
        if self.bucket is None:
            return roles
        workload = resolved.config
        prefixes, key = resolved.prefixes, f"{workload.namespace}-{workload.name}"
        shown = ", ".join(prefixes)
        bucket, bucket_key = self._imported(scope)
        arn = nag_render(cdk.Stack.of(scope).resolve(bucket.bucket_arn))
        objects = tuple(f"Resource::{arn}/{prefix}*" for prefix in prefixes)
        if resolved.readers:
            roles.reader = pod_identity_role(
                scope,
                f"Reader-{key}",
                f"Reads s3 prefix {shown} for {key}",
                namespace=workload.namespace,
                service_accounts=resolved.readers,
                cluster_name=cluster_name,
            )
            for prefix in prefixes:
                self._grant(roles.reader, prefix, READ_OBJECT, ["kms:Decrypt"], bucket, bucket_key)
            acknowledge(roles.reader, "IAM5", PREFIX_WILDCARD, objects)
        if resolved.bench is not None:
            bench = resolved.bench
            roles.bench = pod_identity_role(
                scope,
                f"Bench-{key}",
                f"Benchmark of {key}: results to {bench.results_prefix}",
                namespace=workload.namespace,
                service_accounts=(bench.service_account,),
                cluster_name=cluster_name,
            )
            # write-only to its results; of the model, the tokenizer files alone (TOKENIZER_FILES), not the weights
            roles.bench.add_to_principal_policy(
                iam.PolicyStatement(
                    actions=UPLOAD_OBJECT, resources=[bucket.arn_for_objects(f"{bench.results_prefix}*")]
                )
            )
            patterns = [f"{bench.results_prefix}*"]
            if bench.model_prefix is not None:
                tokenizer = [f"{bench.model_prefix}{pattern}" for pattern in TOKENIZER_FILES]
                roles.bench.add_to_principal_policy(
                    iam.PolicyStatement(actions=READ_OBJECT, resources=[bucket.arn_for_objects(p) for p in tokenizer])
                )
                roles.bench.add_to_principal_policy(self._list_statement(bucket, bench.model_prefix))
                patterns += tokenizer
            if bucket_key is not None:
                roles.bench.add_to_principal_policy(
                    self._key_statement(bucket_key, ["kms:Decrypt", "kms:GenerateDataKey"])
                )
            acknowledge(roles.bench, "IAM5", PREFIX_WILDCARD, tuple(f"Resource::{arn}/{p}" for p in patterns))
        if resolved.writes_bucket:
            roles.sync = pod_identity_role(
                scope,
                f"Sync-{key}",
                f"Writes s3 prefix {shown} for the sync of {key}",
                namespace=workload.namespace,
                service_accounts=(resolved.writer_service_account,),
                cluster_name=cluster_name,
            )
            for prefix in prefixes:
                write = ["kms:Decrypt", "kms:GenerateDataKey"]
                self._grant(roles.sync, prefix, WRITE_OBJECT, write, bucket, bucket_key)
            acknowledge(roles.sync, "IAM5", PREFIX_WILDCARD, objects)
        return roles

    def grant_read(self, role: iam.IRole, prefix: str) -> None:
        """Let ``role`` (in this stack) list and read objects under ``prefix`` only (and decrypt them)."""
        assert self.bucket is not None
        self._grant(role, prefix, READ_OBJECT, ["kms:Decrypt"], self.bucket, self.bucket_key)

    def grant_read_write(self, role: iam.IRole, prefix: str) -> None:
        """Let ``role`` (in this stack) list, read, write and delete objects under ``prefix`` only (and
        encrypt/decrypt them)."""
        assert self.bucket is not None
        self._grant(role, prefix, WRITE_OBJECT, ["kms:Decrypt", "kms:GenerateDataKey"], self.bucket, self.bucket_key)

    @staticmethod
    def _grant(
        role: iam.IRole,
        prefix: str,
        object_actions: list[str],
        key_actions: list[str],
        bucket: s3.IBucket,
        key: kms.IKey | None,
    ) -> None:
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=object_actions, resources=[bucket.arn_for_objects(f"{prefix}*")])
        )
        role.add_to_principal_policy(StorageStack._list_statement(bucket, prefix))
        if key is not None:
            role.add_to_principal_policy(StorageStack._key_statement(key, key_actions))

    @staticmethod
    def _list_statement(bucket: s3.IBucket, prefix: str) -> iam.PolicyStatement:
        """Listing of ``prefix`` only (``s3:prefix`` condition)."""
        return iam.PolicyStatement(
            actions=["s3:ListBucket"],
            resources=[bucket.bucket_arn],
            conditions={"StringLike": {"s3:prefix": [f"{prefix}*"]}},
        )

    @staticmethod
    def _key_statement(key: kms.IKey, actions: list[str]) -> iam.PolicyStatement:
        """``actions`` on the bucket's key, through S3 only."""
        return iam.PolicyStatement(
            actions=actions,
            resources=[key.key_arn],
            conditions={"StringEquals": {"kms:ViaService": f"s3.{cdk.Aws.REGION}.amazonaws.com"}},
        )

    def _mountpoint_statements(self) -> list[iam.PolicyStatement]:
        assert self.bucket is not None
        statements = [
            iam.PolicyStatement(actions=["s3:ListBucket"], resources=[self.bucket.bucket_arn]),
            iam.PolicyStatement(actions=["s3:GetObject"], resources=[self.bucket.arn_for_objects("*")]),
        ]
        if self.bucket_key is not None:
            statements.append(iam.PolicyStatement(actions=["kms:Decrypt"], resources=[self.bucket_key.key_arn]))
        return statements

    # -- FSx for Lustre ------------------------------------------------------------------------------------------
    def _existing_file_system(self, existing: ExistingFsxConfig) -> fsx.IFileSystem:
        """The file system you run (``storage.fsx.existing``), imported; its security group admits Lustre from the
        cluster's nodes (ingress rules of this stack on your group: removed with the stack, nothing else of the
        file system is touched)."""
        group = ec2.SecurityGroup.from_security_group_id(
            self, "FsxSecurityGroup", existing.security_group_id, mutable=True, allow_all_outbound=False
        )
        nodes = ec2.Peer.security_group_id(cluster_security_group_id(self.cluster))
        group.add_ingress_rule(nodes, ec2.Port.tcp(988), "Lustre from cluster nodes")
        group.add_ingress_rule(nodes, ec2.Port.tcp_range(1018, 1023), "Lustre from cluster nodes")
        return fsx.LustreFileSystem.from_lustre_file_system_attributes(
            self,
            "FileSystem",
            dns_name=existing.dns_name,
            file_system_id=existing.file_system_id,
            security_group=group,
        )

    def _file_system(self, config: FsxConfig, vpc: ec2.IVpc) -> fsx.LustreFileSystem:
        subnet = zone_subnet(vpc, config.availability_zone, self.zones, "StorageStack: fsx.availability_zone")
        group = ec2.SecurityGroup(
            self,
            "FsxSecurityGroup",
            vpc=vpc,
            allow_all_outbound=True,
            description="FSx for Lustre: Lustre traffic from cluster nodes and itself",
        )
        nodes = ec2.Peer.security_group_id(cluster_security_group_id(self.cluster))
        for peer, who in ((nodes, "cluster nodes"), (group, "itself")):
            group.add_ingress_rule(peer, ec2.Port.tcp(988), f"Lustre from {who}")
            group.add_ingress_rule(peer, ec2.Port.tcp_range(1018, 1023), f"Lustre from {who}")
        persistent = config.deployment_type is FsxDeploymentType.PERSISTENT_2
        lustre: dict[str, Any] = {
            "deployment_type": fsx.LustreDeploymentType[config.deployment_type.value],
            "data_compression_type": fsx.LustreDataCompressionType.LZ4,
        }
        if persistent:
            lustre["per_unit_storage_throughput"] = config.throughput_per_unit_mib
        elif self.bucket is not None:
            lustre["import_path"] = f"s3://{self.bucket.bucket_name}/{config.import_prefix}"
        file_system = fsx.LustreFileSystem(
            self,
            "FileSystem",
            vpc=vpc,
            vpc_subnet=subnet,
            storage_capacity_gib=config.storage_capacity_gib,
            lustre_configuration=fsx.LustreConfiguration(**lustre),
            file_system_type_version=fsx.FileSystemTypeVersion.V_2_15,
            security_group=group,
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
        if persistent and self.bucket is not None:
            fsx.CfnDataRepositoryAssociation(
                self,
                "ModelRepository",
                file_system_id=file_system.file_system_id,
                data_repository_path=f"s3://{self.bucket.bucket_name}/{config.import_prefix}",
                file_system_path=config.file_system_path,
                batch_import_meta_data_on_create=True,
                s3=fsx.CfnDataRepositoryAssociation.S3Property(
                    auto_import_policy=fsx.CfnDataRepositoryAssociation.AutoImportPolicyProperty(
                        events=["NEW", "CHANGED", "DELETED"]
                    )
                ),
            )
        if self.bucket_key is not None:
            # FSx reads the bucket through its S3 service-linked role, which must be able to decrypt.
            self.bucket_key.add_to_resource_policy(
                iam.PolicyStatement(
                    sid="AllowFsxDataRepositoryAccess",
                    principals=[iam.AnyPrincipal()],
                    actions=["kms:Decrypt", "kms:GenerateDataKey"],
                    resources=["*"],
                    conditions={
                        "StringEquals": {
                            "aws:PrincipalAccount": cdk.Aws.ACCOUNT_ID,
                            "kms:ViaService": f"s3.{cdk.Aws.REGION}.amazonaws.com",
                        },
                        "ArnLike": {
                            "aws:PrincipalArn": f"arn:{cdk.Aws.PARTITION}:iam::{cdk.Aws.ACCOUNT_ID}:role/"
                            f"{FSX_LINKED_ROLE}"
                        },
                    },
                )
            )
        return file_system

    # -- EFS -----------------------------------------------------------------------------------------------------
    def _existing_efs(self, existing: ExistingEfsConfig) -> efs.IFileSystem:
        """The EFS file system you run (``storage.efs.existing``), imported; its mount targets' security group
        admits NFS from the cluster's nodes (an ingress rule of this stack on your group: removed with the stack,
        nothing else of the file system is touched)."""
        group = ec2.SecurityGroup.from_security_group_id(
            self, "EfsSecurityGroup", existing.security_group_id, mutable=True, allow_all_outbound=False
        )
        nodes = ec2.Peer.security_group_id(cluster_security_group_id(self.cluster))
        group.add_ingress_rule(nodes, ec2.Port.tcp(2049), "NFS from cluster nodes")
        return efs.FileSystem.from_file_system_attributes(
            self, "EfsFileSystem", file_system_id=existing.file_system_id, security_group=group
        )

    def _efs(self, config: EfsConfig, vpc: ec2.IVpc) -> efs.FileSystem:
        """The EFS file system of shared caches: encrypted, a mount target in each private subnet (one per zone),
        NFS from the cluster's nodes only (the EFS CSI node plugin mounts on the host network, TLS through
        efs-proxy: TCP 2049 is the only port; aws-efs-csi-driver v3.4.1 node-daemonset.yaml, node.go), retained.

        Mounts are anonymous NFS clients (the driver adds the ``iam`` mount option only when a volume asks for
        it), so the file system has no policy: with the ``@aws-cdk/aws-efs:denyAnonymousAccess`` flag on (our
        cdk.json) CDK would add one denying every anonymous mount. Access is the security group's (nodes only)
        and each claim's access point (its own directory, as uid/gid 1000)."""
        group = ec2.SecurityGroup(
            self,
            "EfsSecurityGroup",
            vpc=vpc,
            allow_all_outbound=False,
            description="EFS: NFS from cluster nodes",
        )
        nodes = ec2.Peer.security_group_id(cluster_security_group_id(self.cluster))
        group.add_ingress_rule(nodes, ec2.Port.tcp(2049), "NFS from cluster nodes")
        throughput = {
            EfsThroughputMode.ELASTIC: efs.ThroughputMode.ELASTIC,
            EfsThroughputMode.BURSTING: efs.ThroughputMode.BURSTING,
        }[config.throughput_mode]
        return efs.FileSystem(
            self,
            "EfsFileSystem",
            vpc=vpc,
            vpc_subnets=ec2.SubnetSelection(subnets=vpc.private_subnets, one_per_az=True),
            security_group=group,
            encrypted=True,
            performance_mode=efs.PerformanceMode.GENERAL_PURPOSE,
            throughput_mode=throughput,
            allow_anonymous_access=True,
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )

    # -- CSI add-ons ---------------------------------------------------------------------------------------------
    def _csi_addon(self, name: str, statements: list[iam.PolicyStatement]) -> iam.Role:
        """The CSI driver's role and, unless ``storage.install_csi_drivers`` is off, its add-on bound to it."""
        role = pod_identity_role(
            self,
            f"Role-{name}",
            f"{name} add-on of EKS cluster {self.cluster_name}",
            namespace="kube-system",
            service_accounts=(STORAGE_ADDON_SERVICE_ACCOUNTS[name],),
            cluster_name=self.cluster.cluster_name,  # the value the add-on's association carries
        )
        for statement in statements:
            role.add_to_principal_policy(statement)
        if not self.install_csi_drivers:
            account = STORAGE_ADDON_SERVICE_ACCOUNTS[name]
            cdk.CfnOutput(
                self,
                f"{''.join(part.title() for part in name.split('-'))}RoleArn",
                value=role.role_arn,
                description=f"Associate with kube-system/{account} of the cluster's own {name} (Pod Identity): "
                "the role trusts only that service account of this cluster",
            )
            return role
        addon = eks.Addon(
            self,
            f"Addon-{name}",
            cluster=self.cluster,
            addon_name=name,
            addon_version=STORAGE_ADDONS[name],
            preserve_on_delete=False,
        )
        addon.node.default_child.add_property_override(  # type: ignore[union-attr]
            "PodIdentityAssociations",
            [{"ServiceAccount": STORAGE_ADDON_SERVICE_ACCOUNTS[name], "RoleArn": role.role_arn}],
        )
        self.addons[name] = addon
        return role
