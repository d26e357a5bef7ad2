"""Rules EKS-ENDPOINT and EKS-LOGS: compliant and non-compliant cases, acknowledgements."""

from __future__ import annotations

import pytest

from inferstack.config import InferstackConfig, parse_config
from inferstack.rules import RuleViolationError, eks_endpoint, eks_logging, enforce, evaluate


def config(**cluster) -> InferstackConfig:
    return parse_config({"cluster": cluster})


#: 198.51.0.0/16 as 256 /24s.
SLASH_16_AS_24S = [f"198.51.{i}.0/24" for i in range(256)]


class TestEndpoint:
    def test_private_endpoint_is_compliant(self):
        assert list(eks_endpoint.check(config(endpoint_access="private"))) == []

    def test_public_with_allow_list_is_compliant(self):
        cfg = config(endpoint_access="public_and_private", public_access_cidrs=["203.0.113.0/24"])
        assert list(eks_endpoint.check(cfg)) == []

    @pytest.mark.parametrize("access", ["public", "public_and_private"])
    def test_public_without_allow_list_is_flagged(self, access):
        (finding,) = eks_endpoint.check(config(endpoint_access=access))
        assert finding.rule == "EKS-ENDPOINT"
        assert finding.path == "cluster.public_access_cidrs"
        assert "private" in finding.fix

    def test_open_to_the_internet_is_flagged(self):
        (finding,) = eks_endpoint.check(config(endpoint_access="public_and_private", public_access_cidrs=["0.0.0.0/0"]))
        assert "100.00% of the IPv4 internet" in finding.message

    @pytest.mark.parametrize("cidrs", [["11.0.0.0/8"], ["198.50.0.0/15"], ["198.50.255.0/24", *SLASH_16_AS_24S]])
    def test_more_addresses_than_a_slash_16_are_flagged_however_they_are_split(self, cidrs):
        (finding,) = eks_endpoint.check(config(endpoint_access="public_and_private", public_access_cidrs=cidrs))
        assert "more than a /16 (65,536)" in finding.message and "acknowledge" in finding.fix

    @pytest.mark.parametrize("cidrs", [["198.51.0.0/16"], ["203.0.113.0/24", "198.51.100.7/32"]])
    def test_up_to_a_slash_16_is_an_allow_list(self, cidrs):
        assert list(eks_endpoint.check(config(endpoint_access="public_and_private", public_access_cidrs=cidrs))) == []


class TestLogs:
    def test_all_logs_are_compliant(self):
        assert list(eks_logging.check(InferstackConfig())) == []

    def test_missing_log_types_are_named(self):
        (finding,) = eks_logging.check(config(control_plane_logs=["api", "audit"]))
        assert finding.path == "cluster.control_plane_logs"
        assert "authenticator, controllerManager, scheduler" in finding.message


def test_enforce_raises_with_every_finding():
    cfg = config(endpoint_access="public", control_plane_logs=["api"])
    with pytest.raises(RuleViolationError) as exc:
        enforce(cfg)
    assert {f.rule for f in exc.value.findings} == {"EKS-ENDPOINT", "EKS-LOGS"}
    assert "[EKS-ENDPOINT] cluster.public_access_cidrs:" in str(exc.value)


def test_acknowledged_finding_passes_with_its_reason():
    cfg = parse_config(
        {
            "cluster": {"control_plane_logs": ["api", "audit", "authenticator"]},
            "acknowledge": [{"rule": "EKS-LOGS", "reason": "scheduler logs go to our own agent"}],
        }
    )
    report = enforce(cfg)
    assert report.errors == []
    assert [(f.rule, reason) for f, reason in report.acknowledged] == [
        ("EKS-LOGS", "scheduler logs go to our own agent")
    ]


def test_acknowledging_an_unknown_rule_is_an_error():
    cfg = parse_config({"acknowledge": [{"rule": "EKS-LOG", "reason": "typo in the rule id here"}]})
    (finding,) = evaluate(cfg).errors
    assert finding.path == "acknowledge[0].rule" and "EKS-LOGS" in finding.fix
