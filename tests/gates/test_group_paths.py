"""The ports a group's pods use between them, read from what runs (not from the kinds' declarations): a
LeaderWorkerSet's workers reach the leader on the ``--master-port`` their own command line names (the pods the LWS
controller makes, inferstack/gates/lws.py), a Ray worker reaches the head's GCS on the port KubeRay gives it
(RAY_ADDRESS, projections.ray_pods). The NetworkPolicies must admit both."""

from __future__ import annotations

from inferstack.gates.lws import lws_pods
from inferstack.gates.network import Pod, connection_allowed
from inferstack.gates.projections import ray_pods


def _pod(manifest: dict) -> Pod:
    return Pod(manifest["metadata"]["namespace"], manifest["metadata"]["labels"])


def _flag(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def test_lws_workers_reach_the_leader_on_their_master_port(multinode_app):
    objects = multinode_app.kubernetes_objects()
    leader, worker = list(lws_pods(objects))[:2]
    args = worker["spec"]["containers"][0]["args"]
    port = int(_flag(args, "--master-port"))
    assert connection_allowed(objects, _pod(worker), _pod(leader), port)
    assert connection_allowed(objects, _pod(leader), _pod(worker), 40_000)  # NCCL's ports are chosen at run time


def test_ray_workers_reach_the_heads_gcs(ray_multi_app, ray_pd_app):
    for app in (ray_multi_app, ray_pd_app):
        objects = app.kubernetes_objects()
        head, *workers = ray_pods(objects)
        for worker in workers:
            address = {e["name"]: e.get("value") for e in worker["spec"]["containers"][0]["env"]}["RAY_ADDRESS"]
            port = int(address.rsplit(":", 1)[1])
            assert connection_allowed(objects, _pod(worker), _pod(head), port), worker["metadata"]["name"]
            assert connection_allowed(objects, _pod(head), _pod(worker), 10_002)  # workers' ports: run time
