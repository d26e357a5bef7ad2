"""GIVEN a config and stubbed AWS answers (botocore Stubber: no network, no credentials), WHEN preflight runs, THEN
a good account passes every check and a bad one fails each check with its fix; AWS errors are failed checks."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber

from inferstack import cli
from inferstack.config import parse_config
from inferstack.preflight import QUOTA_CODES, Preflight, table, vcpu_demand

CONFIG = {
    "env": {"account": "123456789012", "region": "us-west-2"},
    "network": {"availability_zones": ["us-west-2a", "us-west-2b"]},
    "cluster": {"kubernetes_version": "1.36"},
    "storage": {"model_bucket": {"existing_bucket_name": "team-models"}},
    "compute": {
        "node_groups": [
            {
                "name": "p5",
                "instance_type": "p5.48xlarge",
                "efa": True,
                "availability_zone": 0,
                "capacity_type": "reserved",
                "capacity_reservation_id": "cr-0123456789abcdef0",
                "max_size": 2,
            }
        ],
        "karpenter_pools": [{"name": "l40s", "instance_types": ["g6e.2xlarge"], "max_accelerators": 8}],
    },
}


def stubbed(responses: dict[str, list[tuple[str, dict] | tuple[str, str, str]]]):
    """A client factory whose clients answer ``responses[service]`` in order (an error: (method, code, message))."""
    clients = {}
    for service, answers in responses.items():
        client = boto3.client(service, region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="y")
        stub = Stubber(client)
        for answer in answers:
            if len(answer) == 3:
                stub.add_client_error(answer[0], service_error_code=answer[1], service_message=answer[2])
            else:
                stub.add_response(answer[0], answer[1])
        stub.activate()
        clients[service] = client
    return lambda service: clients[service]


def quota_answers(config, value_for) -> list:
    return [
        ("get_service_quota", {"Quota": {"Value": float(value_for(code, needed))}})
        for code, needed in sorted(vcpu_demand(config).items())
    ]


def offerings(*zones: str) -> tuple[str, dict]:
    return ("describe_instance_type_offerings", {"InstanceTypeOfferings": [{"Location": z} for z in zones]})


def answers(
    config,
    *,
    quota=lambda c, n: n,
    p5_zones=("us-west-2a",),
    efa=32,
    reservation=None,
    bucket=True,
    versions=("1.36",),
):
    reservation = reservation or {
        "CapacityReservationId": "cr-0123456789abcdef0",
        "State": "active",
        "InstanceType": "p5.48xlarge",
        "AvailabilityZone": "us-west-2a",
    }
    return {
        "service-quotas": quota_answers(config, quota),
        "ec2": [
            offerings(*p5_zones),
            offerings("us-west-2a", "us-west-2b"),
            (
                "describe_instance_types",
                {
                    "InstanceTypes": [
                        {
                            "InstanceType": "p5.48xlarge",
                            "NetworkInfo": {"EfaSupported": efa > 0, "EfaInfo": {"MaximumEfaInterfaces": efa}},
                        }
                    ]
                },
            ),
            ("describe_capacity_reservations", {"CapacityReservations": [reservation]}),
        ],
        "s3": [("head_bucket", {})] if bucket else [("head_bucket", "403", "Forbidden")],
        "eks": [
            (
                "describe_cluster_versions",
                {"clusterVersions": [{"clusterVersion": v, "status": "STANDARD_SUPPORT"} for v in versions]},
            )
        ],
    }


@pytest.fixture(scope="module")
def config():
    return parse_config(CONFIG)


def results_of(config, **changes):
    return Preflight(config, stubbed(answers(config, **changes))).run()


def test_a_good_account_passes_every_check(config):
    results = results_of(config)
    assert {r.check for r in results} == {"quota", "offering", "efa", "reservation", "bucket", "eks-version"}
    assert [r for r in results if not r.passed] == []


def test_demand_counts_what_the_pools_could_launch(config):
    demand = vcpu_demand(config)
    assert demand["L-417A185B"] == 2 * 192  # two p5.48xlarge (an ODCR uses on-demand P quota)
    assert demand["L-DB2E81BA"] == 8 * 8  # 8 GPUs of g6e.2xlarge (1 GPU, 8 vCPU each)
    assert QUOTA_CODES["P5"] == ("L-417A185B", "L-C4BD4855")  # P5 spot has its own quota beside P2-P4's


def test_spot_p5_counts_against_the_p5_spot_quota():
    spot = parse_config(
        {
            **CONFIG,
            "compute": {
                "karpenter_pools": [
                    {
                        "name": "p5",
                        "instance_types": ["p5.48xlarge"],
                        "capacity_types": ["spot"],
                        "max_accelerators": 16,
                    }
                ]
            },
        }
    )
    assert vcpu_demand(spot)["L-C4BD4855"] == 2 * 192
    assert "L-7212CCBC" not in vcpu_demand(spot)


@pytest.mark.parametrize(
    ("changes", "check", "fix"),
    [
        ({"quota": lambda c, n: n - 1}, "quota", "Service Quotas"),
        ({"p5_zones": ("us-west-2b",)}, "offering", "not sold in us-west-2a"),
        ({"efa": 0}, "efa", "catalog"),
        (
            {
                "reservation": {
                    "CapacityReservationId": "cr-0123456789abcdef0",
                    "State": "expired",
                    "InstanceType": "p5.48xlarge",
                    "AvailabilityZone": "us-west-2b",
                }
            },
            "reservation",
            "zone",
        ),
        ({"bucket": False}, "bucket", "read it"),
        ({"versions": ()}, "eks-version", "describe-cluster-versions"),
    ],
)
def test_each_failure_names_its_fix(config, changes, check, fix):
    failed = [r for r in results_of(config, **changes) if not r.passed]
    assert failed and {r.check for r in failed} == {check}
    assert all(fix in r.fix for r in failed), failed


def test_an_aws_error_is_a_failed_check_not_a_traceback(config):
    responses = answers(config)
    responses["eks"] = [("describe_cluster_versions", "AccessDeniedException", "not authorized")]
    (failed,) = [r for r in Preflight(config, stubbed(responses)).run() if not r.passed]
    assert failed.check == "eks_version" and "AccessDeniedException" in failed.detail


def test_the_command_prints_the_table_and_fails(tmp_path, capsys, config):
    path = tmp_path / "config.yaml"
    import yaml

    path.write_text(yaml.safe_dump(CONFIG))
    code = cli._preflight(str(path), None, clients=stubbed(answers(config, bucket=False)))
    out = capsys.readouterr().out
    assert code == 1 and "FAIL" in out and "fix:" in out and "1 failed" in out
    assert "PASS" in table(results_of(config))


def _product(usd: float) -> str:
    import json

    return json.dumps(
        {"terms": {"OnDemand": {"T1": {"priceDimensions": {"D1": {"unit": "Hrs", "pricePerUnit": {"USD": f"{usd}"}}}}}}}
    )


def test_vendored_prices_are_compared_with_the_pricing_api():
    from inferstack.catalog.prices import price

    config = parse_config(
        {
            "env": {"region": "us-east-1"},
            "compute": {"karpenter_pools": [{"name": "l40s", "instance_types": ["g6e.2xlarge"]}]},
        }
    )
    vendored = price("g6e.2xlarge", "us-east-1").on_demand
    for live, passed in ((vendored, True), (vendored * 1.2, False)):
        clients = stubbed({"pricing": [("get_products", {"PriceList": [_product(live)], "FormatVersion": "aws_v1"})]})
        checker = Preflight(config, clients, prices=True)
        (result,) = list(checker.prices())
        assert result.passed is passed, result
        if not passed:
            assert "price_data" in result.fix


def test_synth_can_require_a_passing_preflight(config, capsys):
    """``-c inferstack:preflight=true`` runs the checks before synth: a failing account stops it with the table."""
    from inferstack.app import _preflight_passes

    assert _preflight_passes(config, stubbed(answers(config))) is True
    assert _preflight_passes(config, stubbed(answers(config, versions=()))) is False
    assert "preflight failed (1 of" in capsys.readouterr().err


def test_an_unknown_reservation_is_named_not_a_credentials_failure(config):
    responses = answers(config)
    ec2 = responses["ec2"]
    ec2[3] = ("describe_capacity_reservations", "InvalidCapacityReservationId.NotFound", "no such reservation")
    failed = [r for r in Preflight(config, stubbed(responses)).run() if not r.passed]
    (reservation,) = failed
    assert reservation.check == "reservation" and "not found" in reservation.detail


def test_a_memory_limit_caps_the_quota_demand():
    pool = {"name": "g", "instance_types": ["g6e.2xlarge"], "max_memory_gib": 130}
    demand = vcpu_demand(parse_config({"compute": {"karpenter_pools": [pool]}}))
    assert demand["L-DB2E81BA"] == 2 * 8  # two g6e.2xlarge fit the limit, not the 64 the GPU limit allows
