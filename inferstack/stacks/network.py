"""NetworkStack: the VPC — public subnets for NAT and load balancers, private subnets for nodes and pods."""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, RemovalPolicy, Stack, Tags, Validations
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_logs as logs
from constructs import Construct

from inferstack.config.model import PUBLIC_SUBNET_MASK, NetworkConfig
from inferstack.stacks.nag import acknowledge

#: Subnet tags the AWS Load Balancer Controller uses to place internet-facing and internal load balancers.
PUBLIC_ELB_TAG = "kubernetes.io/role/elb"
INTERNAL_ELB_TAG = "kubernetes.io/role/internal-elb"


class NetworkStack(Stack):
    """A VPC over ``config.az_count`` Availability Zones.

    * public subnets (/24) for NAT gateways and internet-facing load balancers;
    * private subnets with egress (/19, ~8k addresses: pods take VPC IPs) for nodes, pods and the kubectl Lambda;
    * ``config.nat_gateways`` NAT gateways, an S3 gateway endpoint and VPC flow logs (all on by default).

    Exposes :attr:`vpc` for the cluster stack (an explicit cross-stack reference).
    """

    def __init__(self, scope: Construct, construct_id: str, *, config: NetworkConfig, **kwargs: Any) -> None:
        self._pinned_zones = list(config.availability_zones) if config.availability_zones else None
        super().__init__(scope, construct_id, **kwargs)
        zones: dict[str, Any] = (
            {"availability_zones": list(config.availability_zones)}
            if config.availability_zones
            else {"max_azs": config.max_azs}
        )
        self.vpc = ec2.Vpc(
            self,
            "Vpc",
            ip_addresses=ec2.IpAddresses.cidr(config.vpc_cidr),
            nat_gateways=config.nat_gateways,
            subnet_configuration=[
                ec2.SubnetConfiguration(name="public", subnet_type=ec2.SubnetType.PUBLIC, cidr_mask=PUBLIC_SUBNET_MASK),
                ec2.SubnetConfiguration(
                    name="private",
                    subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS,
                    cidr_mask=config.private_subnet_mask,
                ),
            ],
            restrict_default_security_group=True,
            **zones,
        )
        if self._pinned_zones:
            Validations.of(self.vpc).acknowledge(
                Acknowledgment(
                    id="CloudFormation-Validate::W3010",
                    reason="network.availability_zones pins the AZs on purpose (EFA, FSx and capacity reservations "
                    "live in specific zones)",
                )
            )
        for subnet in self.vpc.public_subnets:
            Tags.of(subnet).add(PUBLIC_ELB_TAG, "1")
        for subnet in self.vpc.private_subnets:
            Tags.of(subnet).add(INTERNAL_ELB_TAG, "1")
        if config.s3_gateway_endpoint:
            self.vpc.add_gateway_endpoint("S3", service=ec2.GatewayVpcEndpointAwsService.S3)
        if config.flow_logs:
            log_group = logs.LogGroup(
                self,
                "FlowLogs",
                retention=_retention(config.flow_log_retention_days),
                removal_policy=RemovalPolicy.RETAIN,
            )
            self.vpc.add_flow_log(
                "FlowLog",
                destination=ec2.FlowLogDestination.to_cloud_watch_logs(log_group),
                traffic_type=ec2.FlowLogTrafficType.ALL,
            )
        else:  # the config turned them off: synth builds what check accepted, the choice recorded for cdk-nag
            acknowledge(
                self.vpc, "VPC7", "network.flow_logs is false in the config: VPC flow logs turned off on purpose"
            )

    @property
    def availability_zones(self) -> list[str]:
        """The configured AZs when pinned (no account lookup at synth); otherwise CDK's default."""
        return self._pinned_zones or super().availability_zones


_RETENTION_DAYS: tuple[tuple[int, logs.RetentionDays], ...] = (
    (1, logs.RetentionDays.ONE_DAY),
    (3, logs.RetentionDays.THREE_DAYS),
    (5, logs.RetentionDays.FIVE_DAYS),
    (7, logs.RetentionDays.ONE_WEEK),
    (14, logs.RetentionDays.TWO_WEEKS),
    (30, logs.RetentionDays.ONE_MONTH),
    (60, logs.RetentionDays.TWO_MONTHS),
    (90, logs.RetentionDays.THREE_MONTHS),
    (120, logs.RetentionDays.FOUR_MONTHS),
    (150, logs.RetentionDays.FIVE_MONTHS),
    (180, logs.RetentionDays.SIX_MONTHS),
    (365, logs.RetentionDays.ONE_YEAR),
    (400, logs.RetentionDays.THIRTEEN_MONTHS),
    (545, logs.RetentionDays.EIGHTEEN_MONTHS),
    (731, logs.RetentionDays.TWO_YEARS),
    (1096, logs.RetentionDays.THREE_YEARS),
    (1827, logs.RetentionDays.FIVE_YEARS),
    (2192, logs.RetentionDays.SIX_YEARS),
    (2557, logs.RetentionDays.SEVEN_YEARS),
    (2922, logs.RetentionDays.EIGHT_YEARS),
    (3288, logs.RetentionDays.NINE_YEARS),
    (3653, logs.RetentionDays.TEN_YEARS),
)


def _retention(days: int) -> logs.RetentionDays:
    """The CloudWatch retention class of ``days`` — one of CloudWatch's values: the config refuses any other
    (``network.flow_log_retention_days``) rather than have it rounded here."""
    return dict(_RETENTION_DAYS)[days]
