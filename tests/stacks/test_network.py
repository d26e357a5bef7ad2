"""GIVEN a config, WHEN the network stack is synthesized, THEN the VPC matches it."""

from __future__ import annotations


def test_default_vpc(default_app):
    vpcs = default_app.resources("network", "AWS::EC2::VPC")
    (vpc,) = vpcs.values()
    assert vpc["Properties"]["CidrBlock"] == "10.0.0.0/16"
    subnets = default_app.resources("network", "AWS::EC2::Subnet")
    assert len(subnets) == 4  # public + private in each of 2 AZs
    assert len(default_app.resources("network", "AWS::EC2::NatGateway")) == 1


def test_private_subnets_are_large_and_tagged_for_internal_load_balancers(default_app):
    subnets = default_app.resources("network", "AWS::EC2::Subnet").values()
    private = [
        s for s in subnets if {"Key": "kubernetes.io/role/internal-elb", "Value": "1"} in s["Properties"]["Tags"]
    ]
    public = [s for s in subnets if {"Key": "kubernetes.io/role/elb", "Value": "1"} in s["Properties"]["Tags"]]
    assert len(private) == 2 and len(public) == 2
    assert all(s["Properties"]["CidrBlock"].endswith("/19") for s in private)
    assert all(s["Properties"]["MapPublicIpOnLaunch"] is False for s in private)


def test_s3_gateway_endpoint_and_flow_logs(default_app):
    (endpoint,) = default_app.resources("network", "AWS::EC2::VPCEndpoint").values()
    assert endpoint["Properties"]["VpcEndpointType"] == "Gateway"
    assert "s3" in str(endpoint["Properties"]["ServiceName"])
    (flow_log,) = default_app.resources("network", "AWS::EC2::FlowLog").values()
    assert flow_log["Properties"]["TrafficType"] == "ALL"
    (group,) = default_app.resources("network", "AWS::Logs::LogGroup").values()
    assert group["Properties"]["RetentionInDays"] == 30
    assert group["DeletionPolicy"] == "Retain"


def test_pinned_zones_and_one_nat_per_zone(pinned_app):
    subnets = pinned_app.resources("network", "AWS::EC2::Subnet").values()
    assert {s["Properties"]["AvailabilityZone"] for s in subnets} == {"us-west-2a", "us-west-2b", "us-west-2c"}
    assert len(pinned_app.resources("network", "AWS::EC2::NatGateway")) == 3
    (group,) = pinned_app.resources("network", "AWS::Logs::LogGroup").values()
    assert group["Properties"]["RetentionInDays"] == 90


def test_env_agnostic_default_uses_az_tokens(default_app):
    subnets = default_app.resources("network", "AWS::EC2::Subnet").values()
    assert all("Fn::Select" in s["Properties"]["AvailabilityZone"] for s in subnets)


def test_tags_reach_resources(pinned_app):
    (vpc,) = pinned_app.resources("network", "AWS::EC2::VPC").values()
    tags = {t["Key"]: t["Value"] for t in vpc["Properties"]["Tags"]}
    assert tags["team"] == "ml-platform" and tags["inferstack:platform"] == "llm-prod"
