"""GATE: every scrape job Prometheus gets from the rendered charts and our monitors selects pods that run on EKS —
a ServiceMonitor for the controller-manager, scheduler or etcd (which EKS runs outside the cluster) scrapes nothing,
and its rules' absent() alerts fire forever (tests/gates/test_what_runs.py holds the rules)."""

from __future__ import annotations

import pytest

from inferstack.gates.cluster_view import scrape_jobs
from tests.gates.cluster_view import CHARTS_SRC, NO_CHARTS, cluster_view

pytestmark = pytest.mark.skipif(not CHARTS_SRC.is_dir(), reason=NO_CHARTS)


def test_every_scrape_target_selects_pods_that_run(any_app):
    jobs = scrape_jobs(cluster_view(any_app).everything)
    assert {job: problems for job, problems in jobs.items() if problems} == {}
