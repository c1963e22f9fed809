"""When is a migration's join complete? Seen in the target, never reported by the node.

A worker: its Node, same name, Ready. A control plane: kubeadm starts the kubelet (the node
turns Ready) *before* its control-plane-join phase adds the etcd member, starts the static pods
and marks the node, so the move is complete only when, besides Ready, the node's
`kube-apiserver-<node>` and `etcd-<node>` mirror pods are Running and Ready and the node
carries the control-plane label, and, with a stacked etcd, etcd's own member list (read on
the node) has it as a started voting member. A target whose kubeadm-config names an external
etcd has no `etcd-<node>` pod and no stacked member: neither is waited for there. The run holds
the target's control-plane lock until then.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NoReturn

import urllib3
from kubernetes.client.exceptions import ApiException

from joinops.clusters import etcdmembers, watches
from joinops.clusters.kube import pod_running_ready
from joinops.errors import ClusterError, ClusterNotFound, ClusterRateLimited, ClusterUnreachable
from joinops.requests import etcd_texts, outcome_texts, step_texts
from joinops.requests.model import CONTROL_PLANE_LABEL, Role
from joinops.rules.quorum import STATIC_COMPONENTS, mirror_pod_name
from workers import agent, fallback, return_material, waits
from workers.errors import PermanentError
from workers.material_steps import delete_tokens
from workers.run import Run

RETURN_MARGIN = 300.0  # seconds the wait outlasts the agent's own deadline, for its mark
LOOK_FOR_MARK = 2.0  # seconds between looks at the agent's record while waiting
SHORTEST_WATCH = 1.0  # seconds: a node watch is asked for at least this (so is any watch)


def wait_joined(run: Run) -> str:
    memory = run.memory("wait-joined")
    deadline = memory.get("deadline") if run.resuming else None
    started = float(memory.get("since") or run.ctx.clock()) if run.resuming else run.ctx.clock()
    if deadline is None:
        # a node that can go back: its agent decides by `timeouts.join` after its own start,
        # then writes its mark; the wait outlasts that by RETURN_MARGIN
        join = run.ctx.settings.timeouts.join.total_seconds()
        margin = min(RETURN_MARGIN, join) if return_material.returnable(run) else 0.0
        deadline = run.ctx.clock() + join + margin
        run.remember("wait-joined", deadline=deadline, since=started)
    unreachable = False  # did the target's API fail to answer the last watch?
    ready = False
    while run.ctx.clock() < deadline:
        until = waits.slice_end(run, deadline)
        if return_material.returnable(run):
            if (why := fallback.abandoned(run)) is not None:
                fallback.bring_back(run, why)
            until = min(until, run.ctx.clock() + LOOK_FOR_MARK)
        try:
            if not ready and waits.others_queued(run):  # one look, no watch: then let go
                ready = _node_ready_now(run)
                if not ready:
                    waits.give_up_worker(run, "the node to join")
            ready = ready or _node_ready(run, until)
            if ready and run.request.role is Role.CONTROL_PLANE:
                missing = _control_plane_missing(run, until)
                if missing and until < deadline:
                    waits.give_up_worker_if_needed(run, "mirror pods Ready")
                    continue
                if missing:
                    raise PermanentError(
                        step_texts.control_plane_incomplete(
                            run.request.node,
                            run.request.target,
                            missing,
                            agent.unit_name(run.id),
                            run.request,
                        )
                    )
            if ready and not fallback.claim_complete(run):
                continue  # the agent gave the target up first: its mark leads the way back
            if ready:
                return step_texts.joined(
                    run.request.node, run.request.target, run.ctx.clock() - started
                )
            unreachable = False
        except (
            ClusterUnreachable,
            ClusterRateLimited,  # still throttled after the client's retries: keep waiting
            ApiException,
            OSError,
            urllib3.exceptions.HTTPError,
        ):
            unreachable = True
            run.ctx.redis.ping()  # a dead Redis should fail the job, not loop here
            time.sleep(1.0)  # the target's API is away for a moment; the deadline still holds
        if until < deadline:
            waits.give_up_worker_if_needed(run, "the node to join")
    if (why := fallback.abandoned(run)) is not None:
        fallback.bring_back(run, why)
    _never_joined(run, unreachable)


def _node_ready(run: Run, deadline: float) -> bool:
    return _node_watch(run, _ready, deadline) is not None


def _node_watch(run: Run, matches: Callable[[Any], bool], deadline: float) -> Any | None:
    """The node once `matches`, from one watch asked with no resourceVersion: the API server
    begins it with the node as it is now (a synthetic ADDED event: "get state and start at
    most recent"), then its changes. One request where a list and then a watch took two, at
    every re-check of the wait. It is asked for a second at least (as short a watch as
    `watches` asks for), so that the node is looked at even when little time is left."""
    target, node = run.target, run.request.node
    return watches.wait_for(
        target,
        f"nodes/{node}",
        target.core.list_node,
        matches=matches,
        deadline=max(deadline, run.ctx.clock() + SHORTEST_WATCH),
        clock=run.ctx.clock,
        relist=_as_it_is_now,
        field_selector=f"metadata.name={node}",
    )


def _as_it_is_now() -> tuple[list[Any], str]:
    """Nothing listed, and no version: the watch itself brings the state as it is now."""
    return [], ""


def _node_ready_now(run: Run) -> bool:
    """One look; a node not there yet is not Ready."""
    conditions = _path(_node_now(run), "status", "conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _node_now(run: Run) -> dict[str, Any]:
    """The node as JSON ({}: not there yet): a GET, with no model built for a Node (large)."""
    target, node = run.target, run.request.node
    try:
        return target.call_json("get", f"nodes/{node}", target.core.read_node, node)
    except ClusterNotFound:
        return {}


def _path(found: dict[str, Any], *keys: str) -> Any:
    """`found[keys[0]][keys[1]]...`, or {} where a level is missing or null."""
    for key in keys:
        found = (found.get(key) if isinstance(found, dict) else None) or {}
    return found


def _control_plane_missing(run: Run, deadline: float) -> list[str]:
    """What the control plane still lacks at the deadline (empty: complete)."""
    target, node = run.target, run.request.node
    external = _external_etcd(run)
    components = [c for c in STATIC_COMPONENTS if c != "etcd" or not external]
    wanted = {mirror_pod_name(component, node) for component in components}
    ready: dict[str, bool] = {}

    def all_pods_ready(pod: Any) -> bool:
        ready[pod.metadata.name] = pod_running_ready(pod)
        return all(ready.get(name) for name in wanted)

    if not run.memory("wait-joined").get("said_waiting"):  # once, not at every re-check
        run.remember("wait-joined", said_waiting=True)
        run.progress(
            "wait-joined",
            step_texts.control_plane_waiting(node, run.request.target, _pod_words(wanted)),
        )
    pods_done = watches.wait_for(
        target,
        f"pods on {node} (kube-system)",
        target.core.list_namespaced_pod,
        "kube-system",
        matches=all_pods_ready,
        deadline=deadline,
        clock=run.ctx.clock,
        from_cache=True,  # a stale first list is followed by the watch: it cannot hurt a wait
        field_selector=f"spec.nodeName={node}",
    )
    missing = [] if pods_done else _pod_words({n for n in wanted if not ready.get(n)})
    if pods_done:
        labelled = _node_watch(
            run, lambda n: CONTROL_PLANE_LABEL in (n.metadata.labels or {}), deadline
        )
    else:  # one look
        found = _node_now(run)
        labelled = found if CONTROL_PLANE_LABEL in _path(found, "metadata", "labels") else None
    if labelled is None:
        missing.append(step_texts.missing_control_plane_label())
    if not missing and not external:
        missing.extend(_member_missing(run))
    return missing


def _external_etcd(run: Run) -> bool:
    """Does the target's kubeadm-config name an external etcd? Read once per wait."""
    memory = run.memory("wait-joined")
    if "external_etcd" not in memory:
        config = run.target.kubeadm_cluster_configuration()
        run.remember("wait-joined", external_etcd=etcdmembers.external_etcd(config))
        return etcdmembers.external_etcd(config)
    return bool(memory["external_etcd"])


def _member_missing(run: Run) -> list[str]:
    """A stacked target's member list, read on the joined node, must have it as a started
    voting member (kubeadm adds it as a learner first where learner mode is on)."""
    node = run.request.node
    pod = etcdmembers.EtcdPod(run.namespace, run.ctx.settings.agent.image)
    try:
        members = etcdmembers.read(run.target, node, pod, run.ctx.clock)
    except etcdmembers.MembersUnreadable as e:
        return [etcd_texts.member_list_unread(e.what)]
    facts = run.target.get_node(node)
    ip = facts.internal_ip if facts is not None else ""
    ours = [m for m in members if m.name == node or (ip and ip in m.peer_hosts)]
    if any(m.started and not m.learner for m in ours):
        return []
    return [etcd_texts.member_not_voting(node)]


def _pod_words(names: set[str]) -> list[str]:
    return [step_texts.missing_mirror_pod(name) for name in sorted(names)]


def _ready(node: Any) -> bool:
    conditions = node.status.conditions if node.status else None
    return any(c.type == "Ready" and c.status == "True" for c in conditions or [])


def _never_joined(run: Run, unreachable: bool) -> NoReturn:

    # delete the token now, so that the message can say whether it is gone
    tokens = tuple(run.memory("join-material").get("token_ids", []))
    try:
        delete_tokens(run)
        tokens = ()
    except ClusterError:
        pass  # the ids stay remembered: a retry deletes them
    raise PermanentError(
        outcome_texts.never_joined(
            run.request,
            agent.unit_name(run.id),
            run.ctx.settings.timeouts.join,
            target_unreachable=unreachable,
            tokens_left=tokens,
        )
    )
