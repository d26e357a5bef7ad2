"""`pip install .` gives an importable package with its data files; a separate CDK app builds the cluster stack
into its own VPC from it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.synth import ROOT

CONSUMER = textwrap.dedent("""
    import json, sys
    import aws_cdk as cdk
    from aws_cdk import aws_ec2 as ec2
    import inferstack
    from inferstack.catalog.crds import validate_custom_resource
    from inferstack.config import ClusterConfig
    from inferstack.constructs.model_sync import MODEL_SYNC_IMAGE_DIR
    from inferstack.stacks import ClusterStack

    assert "site-packages" in inferstack.__file__ or "target" in inferstack.__file__, inferstack.__file__
    assert validate_custom_resource({"apiVersion": "ray.io/v1", "kind": "RayService", "metadata": {"name": "x"},
                                     "spec": {"bogus": 1}})
    from importlib import resources
    assert resources.files("inferstack").joinpath("py.typed").is_file()  # PEP 561: type checkers read our hints
    # the model-sync image's build context ships in the wheel (StorageStack builds it as a container asset)
    assert {p.name for p in MODEL_SYNC_IMAGE_DIR.iterdir()} >= {"Dockerfile", "requirements.txt"}, MODEL_SYNC_IMAGE_DIR
    app = cdk.App(context={"aws:cdk:disable-asset-staging": True})
    net = cdk.Stack(app, "team-network")
    vpc = ec2.Vpc(net, "Vpc", max_azs=2)
    ClusterStack(app, "team-cluster", vpc=vpc, config=ClusterConfig(), cluster_name="team-llm")
    assembly = app.synth()
    template = assembly.get_stack_by_name("team-cluster").template
    clusters = [r for r in template["Resources"].values() if r["Type"] == "AWS::EKS::Cluster"]
    print(json.dumps({"clusters": len(clusters), "name": clusters[0]["Properties"]["Name"]}))
""")


@pytest.mark.slow
def test_installed_package_builds_a_cluster_in_a_foreign_vpc(tmp_path):
    wheel_dir, target = tmp_path / "wheel", tmp_path / "target"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(wheel_dir),
            str(ROOT),
        ],
        check=True,
        cwd=tmp_path,
        capture_output=True,
    )
    (wheel,) = wheel_dir.glob("inferstack-*.whl")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    data = list((target / "inferstack" / "catalog" / "crd_schemas").glob("*.json.gz"))
    assert len(data) > 40
    app = tmp_path / "consumer.py"
    app.write_text(CONSUMER)
    env = {**os.environ, "PYTHONPATH": str(target)}
    result = subprocess.run(
        [sys.executable, str(app)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert '"clusters": 1' in result.stdout and '"name": "team-llm"' in result.stdout
