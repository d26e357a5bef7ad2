"""ServingGroup: one engine replica spread over several pods (one per node) as a LeaderWorkerSet
(``leaderworkerset.x-k8s.io/v1``, LWS v0.10.0): the leader serves the API, the workers join it. Used by every
multi-node engine; the engine gives the leader's and the workers' command lines.

What LWS v0.10.0 does and this relies on (kubernetes-sigs/lws at v0.10.0): its pod webhook injects
``LWS_LEADER_ADDRESS`` (``<lws>-<group>.<lws>.<namespace>``), ``LWS_GROUP_SIZE`` and ``LWS_WORKER_INDEX`` (0 on the
leader) into every container (pkg/utils/pod/pod_utils.go), so args may say ``$(LWS_LEADER_ADDRESS)``; it labels
pods ``leaderworkerset.sigs.k8s.io/name`` and ``…/worker-index`` (``"0"`` = leader) — the templates here carry
``inferstack.io/role: leader|worker`` themselves, so the Service's selector is visible in the manifest; it creates
a headless Service named after the LeaderWorkerSet (publishNotReadyAddresses)
that makes the leader address resolve — so the LeaderWorkerSet is ``<name>-group`` and the API Service, selecting
the leaders only, keeps ``<name>`` (as for single-node kinds).
``restartPolicy: RecreateGroupOnPodRestart`` restarts the whole group when one pod fails (a vLLM replica cannot
survive losing a rank); ``startupPolicy: LeaderCreated`` (not ``LeaderReady``: the leader is only ready once its
workers have joined, which would deadlock).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from constructs import Construct

from inferstack.constructs import validation as check
from inferstack.constructs.custom_resource import CustomResource
from inferstack.constructs.pod import (
    ServingPodProps,
    add_front,
    pod_template_json,
    serving_container,
    validate,
)

#: ``leader`` / ``worker`` on the group's pods (the leader Service and PodMonitor select ``leader``).
ROLE_LABEL = "inferstack.io/role"
#: The LeaderWorkerSet is ``<name>-group``: LWS names its own headless Service after it (the leader address
#: resolves through that Service, which also selects the workers), so the API Service keeps the plain ``<name>``
#: for every kind — clients of a workload need not know how many nodes serve it.
GROUP_SUFFIX = "-group"
#: Label values and names Kubernetes derives must stay ≤ 63 characters: ``controller-revision-hash`` of a worker
#: pod is ``<lws>-<group index>-<10-character hash>``.
_REVISION_HASH = 10
#: Largest group inferstack renders (LWS has no limit; beyond this, startup and blast radius grow too large).
MAX_GROUP_SIZE = 64


@dataclass(frozen=True, kw_only=True)
class ServingGroupProps:
    """A multi-node replica: ``pod`` describes the leader (its command line, probes, resources…); workers run the
    same pod with ``worker_command``/``worker_args`` and serve nothing (no port, no probes)."""

    pod: ServingPodProps
    """The leader's pod (name, image, command line, probes, resources; ``replicas`` counts whole groups). Workers run
    the same pod with ``worker_command``/``worker_args``. ``autoscaling`` is refused."""
    size: int
    """Pods per replica (leader + workers): the LeaderWorkerSet ``size``, one per node. 2 to 64."""
    worker_command: Sequence[str]
    """Command of the worker containers (instead of ``pod.command``)."""
    worker_args: Sequence[str]
    """Arguments of the worker containers (instead of ``pod.args``), e.g. joining ``$(LWS_LEADER_ADDRESS)``."""
    worker_pre_stop_seconds: int = 0
    """preStop pause of the workers: LWS deletes a group's pods together, so workers that hold pipeline stages must
    outlive the leader's drain (its preStop + the engine's drain deadline). Default 0 (none)."""


def group_name(name: str) -> str:
    """The LeaderWorkerSet of the workload ``name``."""
    return f"{name}{GROUP_SUFFIX}"


def max_group_name_length(replicas: int) -> int:
    """Longest LeaderWorkerSet name whose derived names (worker StatefulSet ``<lws>-<replicas - 1>``, its revision
    hash label ``<statefulset>-<10>``) stay within 63 characters."""
    return 63 - _REVISION_HASH - 1 - len(str(max(replicas - 1, 0))) - 1


class ServingGroup(Construct):
    """LeaderWorkerSet + leader Service + PodDisruptionBudget (+ PodMonitor on the leaders) of one multi-node
    engine. Replicas are whole groups; a group restarts together."""

    def __init__(
        self, scope: Construct, construct_id: str, props: ServingGroupProps, *, owner: str | None = None
    ) -> None:
        super().__init__(scope, construct_id)
        pod = props.pod
        owner = owner or f"ServingGroup {pod.name!r}"
        validate(owner, pod)
        check.at_least(owner, "size", props.size, 2, "a group is a leader and at least one worker")
        if props.size > MAX_GROUP_SIZE:
            raise check.PropError(f"{owner}: size {props.size} — at most {MAX_GROUP_SIZE} pods per group")
        if pod.autoscaling is not None:
            raise check.PropError(f"{owner}: autoscaling — a ServingGroup scales by whole groups: set replicas")
        if not 0 <= props.worker_pre_stop_seconds < pod.termination_grace_seconds:
            raise check.PropError(
                f"{owner}: worker_pre_stop_seconds {props.worker_pre_stop_seconds} — 0 to "
                f"{pod.termination_grace_seconds - 1} (below termination_grace_seconds)"
            )
        self.group_name = group_name(pod.name)
        longest = max_group_name_length(pod.replicas)
        if len(self.group_name) > longest:
            raise check.PropError(
                f"{owner}: name {pod.name!r} — LeaderWorkerSet {self.group_name!r} is {len(self.group_name)} "
                f"characters; at {pod.replicas} replicas at most {longest} fit the names LWS derives (worker "
                f"StatefulSet '<lws>-<group>', its pods' controller-revision-hash '<statefulset>-<10>', ≤ 63): use a "
                f"name of at most {longest - len(GROUP_SUFFIX)} characters"
            )
        self.props = props
        labels = {
            "app.kubernetes.io/name": pod.name,
            "app.kubernetes.io/component": pod.component,
            "app.kubernetes.io/part-of": "inferstack",
        }
        self.labels = labels
        pod_labels = {**pod.labels, **labels}
        leaders = {**labels, ROLE_LABEL: "leader"}
        self.leader_labels = leaders
        worker = serving_container(
            pod,
            serves=False,
            command=props.worker_command,
            args=props.worker_args,
            pre_stop_seconds=props.worker_pre_stop_seconds,
        )
        manifest = {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": self.group_name, "namespace": pod.namespace, "labels": pod_labels},
            "spec": {
                "replicas": pod.replicas,
                "startupPolicy": "LeaderCreated",
                "rolloutStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0},
                },
                "leaderWorkerTemplate": {
                    "size": props.size,
                    "restartPolicy": "RecreateGroupOnPodRestart",
                    "leaderTemplate": pod_template_json(pod, {**pod_labels, ROLE_LABEL: "leader"}),
                    "workerTemplate": pod_template_json(pod, {**pod_labels, ROLE_LABEL: "worker"}, worker),
                },
            },
        }
        self.leader_worker_set = CustomResource(self, "leader-worker-set", manifest=manifest)
        self.service = add_front(self, pod, labels, leaders)
