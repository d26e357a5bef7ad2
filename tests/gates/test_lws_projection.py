"""The LeaderWorkerSet controller's pods (inferstack/gates/lws.py), on a small LeaderWorkerSet and on the multi-node
example: labels, hostname/subdomain and the injected LWS_* variables the leader and workers rely on."""

from __future__ import annotations

from inferstack.gates.lws import lws_pods
from tests.gates.cluster_view import CHARTS_SRC, cluster_view

LWS = {
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "g", "namespace": "ns"},
    "spec": {
        "leaderWorkerTemplate": {
            "size": 2,
            "leaderTemplate": {"metadata": {"labels": {"role": "leader"}}, "spec": {"containers": [{"name": "c"}]}},
            "workerTemplate": {
                "spec": {"containers": [{"name": "c", "env": [{"name": "LWS_WORKER_INDEX", "value": "x"}]}]}
            },
        }
    },
}


def test_leader_and_worker_get_the_controllers_labels_and_variables():
    leader, worker = lws_pods([LWS])
    assert leader["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/worker-index"] == "0"
    assert leader["metadata"]["labels"]["role"] == "leader"
    assert leader["spec"]["hostname"] == "g-0" and worker["spec"]["hostname"] == "g-0-1"
    assert worker["spec"]["subdomain"] == "g"
    env = {e["name"]: e["value"] for e in worker["spec"]["containers"][0]["env"]}
    assert env == {"LWS_LEADER_ADDRESS": "g-0.g.ns", "LWS_GROUP_SIZE": "2", "LWS_WORKER_INDEX": "1"}


def test_a_group_of_one_has_no_worker():
    single = {**LWS, "spec": {"leaderWorkerTemplate": {**LWS["spec"]["leaderWorkerTemplate"], "size": 1}}}
    assert len(list(lws_pods([single]))) == 1


def test_the_multinode_workers_reach_the_leader_the_controller_names(multinode_app):
    """vLLM's --master-addr must be the address LWS gives the leader (its hostname in the headless Service)."""
    pods = list(lws_pods(multinode_app.kubernetes_objects()))
    assert len(pods) == 2
    leader_address = {e["name"]: e["value"] for e in pods[1]["spec"]["containers"][0]["env"]}["LWS_LEADER_ADDRESS"]
    args = " ".join(pods[1]["spec"]["containers"][0].get("args") or [])
    command = " ".join(pods[1]["spec"]["containers"][0].get("command") or [])
    assert "LWS_LEADER_ADDRESS" in args + command or leader_address in args + command
    if CHARTS_SRC.is_dir():
        assert any(p["kind"] == "Pod" for p in cluster_view(multinode_app).projected)
