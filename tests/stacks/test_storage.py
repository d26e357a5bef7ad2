"""GIVEN storage configs, WHEN synthesized, THEN data is retained and encrypted, access is prefix-scoped, FSx sits
with its GPUs, and volumes bind to their claims."""

from __future__ import annotations

import json

import pytest

from inferstack.config import parse_config


def only(mapping: dict) -> dict:
    (value,) = mapping.values()
    return value


def buckets(app) -> dict[str, dict]:
    return app.resources("storage", "AWS::S3::Bucket")


def model_bucket(app) -> tuple[str, dict]:
    return next((k, v) for k, v in buckets(app).items() if k.startswith("ModelBucket"))


class TestModelBucket:
    def test_every_data_resource_is_retained_on_delete_and_replace(self, fsx_app):
        kinds = ("AWS::S3::Bucket", "AWS::KMS::Key", "AWS::FSx::FileSystem")
        resources = {k: r for k, r in fsx_app.template("storage")["Resources"].items() if r["Type"] in kinds}
        assert {r["Type"] for r in resources.values()} == set(kinds)
        for logical_id, resource in resources.items():
            assert resource["DeletionPolicy"] == "Retain", logical_id
            assert resource["UpdateReplacePolicy"] == "Retain", logical_id

    def test_bucket_is_private_versioned_and_kms_encrypted(self, default_app):
        _, bucket = model_bucket(default_app)
        props = bucket["Properties"]
        assert props["PublicAccessBlockConfiguration"] == {
            "BlockPublicAcls": True,
            "BlockPublicPolicy": True,
            "IgnorePublicAcls": True,
            "RestrictPublicBuckets": True,
        }
        assert props["VersioningConfiguration"] == {"Status": "Enabled"}
        (rule,) = props["BucketEncryption"]["ServerSideEncryptionConfiguration"]
        assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
        assert props["LoggingConfiguration"]["LogFilePrefix"] == "model-bucket/"

    def test_bucket_policy_denies_non_tls(self, default_app):
        bucket_id, _ = model_bucket(default_app)
        policies = default_app.resources("storage", "AWS::S3::BucketPolicy").values()
        policy = next(p for p in policies if p["Properties"]["Bucket"] == {"Ref": bucket_id})
        deny = [s for s in policy["Properties"]["PolicyDocument"]["Statement"] if s["Effect"] == "Deny"]
        assert any(s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}} and s["Action"] == "s3:*" for s in deny)

    def test_s3_managed_encryption(self, synth_config):
        app = synth_config(parse_config({"storage": {"model_bucket": {"encryption": "s3_managed"}}}), nag=False)
        _, bucket = model_bucket(app)
        (rule,) = bucket["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"]
        assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
        assert not app.resources("storage", "AWS::KMS::Key")

    def test_existing_bucket_is_imported_not_managed(self, synth_config):
        app = synth_config(
            parse_config({"storage": {"model_bucket": {"existing_bucket_name": "team-models"}}}), nag=False
        )
        assert not buckets(app)


class TestPrefixScopedAccess:
    """Workload roles live in the workloads stack of their workload (they shard with it)."""

    def statements(self, app, role_prefix: str) -> list[dict]:
        roles = [k for k in app.resources("workloads", "AWS::IAM::Role") if k.startswith(role_prefix)]
        (role,) = roles
        policies = [
            p["Properties"]
            for p in app.resources("workloads", "AWS::IAM::Policy").values()
            if {"Ref": role} in p["Properties"]["Roles"]
        ]
        return [s for p in policies for s in p["PolicyDocument"]["Statement"]]

    def test_sync_role_writes_only_the_model_prefix(self, s3_mount_app):
        statements = self.statements(s3_mount_app, "Syncllmqwen38b")
        objects = next(s for s in statements if "s3:PutObject" in s["Action"])
        assert json.dumps(objects["Resource"]).endswith('/models/Qwen/Qwen3-8B/main/*"]]}')
        assert "s3:DeleteObject" in objects["Action"], "the sync removes files a new file set leaves out"
        assert "Fn::ImportValue" in json.dumps(objects["Resource"]), "the bucket through its named export"
        listing = next(s for s in statements if s["Action"] == "s3:ListBucket")
        assert listing["Condition"] == {"StringLike": {"s3:prefix": ["models/Qwen/Qwen3-8B/main/*"]}}

    def test_reader_role_reads_only_the_model_prefix(self, synth_config):
        config = parse_config(
            {
                "compute": {"karpenter_pools": [{"name": "gpu", "instance_families": ["g6e"]}]},
                "workloads": [
                    {
                        "name": "llama",
                        "pool": "gpu",
                        "sync_model": False,
                        "model": {"id": "meta-llama/Llama-3.1-8B-Instruct", "source": {"prefix": "team-a/llama/"}},
                    }
                ],
            }
        )
        app = synth_config(config, nag=False)
        statements = self.statements(app, "Readerinferencellama")
        reads = next(s for s in statements if s["Action"] == "s3:GetObject")
        assert json.dumps(reads["Resource"]).endswith('/team-a/llama/*"]]}')
        assert all("s3:PutObject" not in json.dumps(s["Action"]) for s in statements)
        decrypt = next(s for s in statements if s["Action"] == "kms:Decrypt")
        assert "kms:ViaService" in decrypt["Condition"]["StringEquals"]
        association = only(app.resources("workloads", "AWS::EKS::PodIdentityAssociation"))["Properties"]
        assert (association["Namespace"], association["ServiceAccount"]) == ("inference", "llama")


class TestFsx:
    def test_file_system_sits_in_the_gpu_subnet(self, fsx_app):
        file_system = only(fsx_app.resources("storage", "AWS::FSx::FileSystem"))["Properties"]
        group = only(fsx_app.resources("compute", "AWS::EKS::Nodegroup"))["Properties"]
        assert len(file_system["SubnetIds"]) == 1
        assert file_system["SubnetIds"] == group["Subnets"]  # the same (zone 1) private subnet
        assert "privateSubnet2" in json.dumps(file_system["SubnetIds"])
        assert file_system["LustreConfiguration"]["DeploymentType"] == "PERSISTENT_2"

    def test_data_repository_association_imports_the_model_prefix(self, fsx_app):
        dra = only(fsx_app.resources("storage", "AWS::FSx::DataRepositoryAssociation"))["Properties"]
        assert dra["FileSystemPath"] == "/models"
        assert json.dumps(dra["DataRepositoryPath"]).endswith('/models/"]]}')
        assert dra["S3"]["AutoImportPolicy"]["Events"] == ["NEW", "CHANGED", "DELETED"]

    def test_lustre_ports_open_to_cluster_nodes(self, fsx_app):
        rules = [r["Properties"] for r in fsx_app.resources("storage", "AWS::EC2::SecurityGroupIngress").values()]
        ports = {(r["FromPort"], r["ToPort"]) for r in rules}
        assert {(988, 988), (1018, 1023)} <= ports

    def test_csi_addons_with_pod_identity(self, fsx_app):
        addons = {
            a["Properties"]["AddonName"]: a["Properties"]
            for a in fsx_app.resources("storage", "AWS::EKS::Addon").values()
        }
        assert set(addons) == {"aws-mountpoint-s3-csi-driver", "aws-fsx-csi-driver"}
        assert addons["aws-fsx-csi-driver"]["PodIdentityAssociations"][0]["ServiceAccount"] == "fsx-csi-controller-sa"


class TestVolumes:
    def test_s3_volume_and_claim_bind_by_name(self, s3_mount_app):
        objects = s3_mount_app.kubernetes_objects()
        (pv,) = [o for o in objects if o["kind"] == "PersistentVolume"]
        (pvc,) = [o for o in objects if o["kind"] == "PersistentVolumeClaim"]
        assert pv["spec"]["claimRef"] == {"namespace": "llm", "name": pvc["metadata"]["name"]}
        assert pvc["spec"]["volumeName"] == pv["metadata"]["name"]
        assert pv["spec"]["accessModes"] == pvc["spec"]["accessModes"] == ["ReadOnlyMany"]
        assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
        assert pv["spec"]["csi"]["driver"] == "s3.csi.aws.com"
        assert "prefix models/Qwen/Qwen3-8B/main/" in pv["spec"]["mountOptions"]
        assert pv["spec"]["csi"]["volumeAttributes"]["cacheEmptyDirSizeLimit"] == "20Gi"

    def test_fsx_volume(self, fsx_app):
        (pv,) = [o for o in fsx_app.kubernetes_objects() if o["kind"] == "PersistentVolume"]
        assert pv["spec"]["csi"]["driver"] == "fsx.csi.aws.com"
        assert set(pv["spec"]["csi"]["volumeAttributes"]) == {"dnsname", "mountname"}

    def test_sync_job_is_hardened_and_batch_priority(self, s3_mount_app):
        (job,) = [o for o in s3_mount_app.kubernetes_objects() if o["kind"] == "Job"]
        pod = job["spec"]["template"]["spec"]
        assert pod["priorityClassName"] == "inferstack-batch"
        assert pod["serviceAccountName"] == "qwen3-8b-model-sync"
        (container,) = pod["containers"]
        assert container["securityContext"]["runAsNonRoot"] is True
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert env["MODEL_ID"] == "Qwen/Qwen3-8B" and env["PREFIX"] == "models/Qwen/Qwen3-8B/main/"


@pytest.mark.parametrize("removed", ["fsx", "model_bucket"])
def test_removing_storage_from_config_keeps_the_data(removed, synth_config):
    """Removing storage from the config removes the resources from the template; their Retain policies make
    CloudFormation leave them (and their data) in place."""
    kind = "AWS::FSx::FileSystem" if removed == "fsx" else "AWS::S3::Bucket"
    before = synth_config(parse_config({"storage": {"fsx": {"availability_zone": 0}}}), nag=False)
    retained = before.resources("storage", kind)
    assert retained, f"expected {kind} before removal"
    assert all(r["DeletionPolicy"] == r["UpdateReplacePolicy"] == "Retain" for r in retained.values())
    after = synth_config(parse_config({"storage": {"fsx": {"availability_zone": 0}, removed: None}}), nag=False)
    assert not set(retained) & set(after.resources("storage", kind))
