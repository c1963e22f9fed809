"""The steps that act on the node and its source: the rules again, cordon, drain, the node
agent (the point of no return) and the clean-up in both clusters.

Each returns the line to report and is safe to run twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from joinops.clusters import hostpods, podstatus
from joinops.clusters.etcdmembers import EtcdPod
from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterConflict, ClusterError, ClusterNotFound, ClusterUnreachable
from joinops.requests import drain_texts, host_texts, step_texts
from joinops.requests.lifecycle import State
from joinops.requests.model import CONTROL_PLANE_LABEL, Role
from joinops.rules.check import check
from joinops.rules.refusal_now import refusal_now
from workers import (
    agent,
    certkeys,
    drain,
    etcdcleanup,
    hostprobe,
    material,
    podcheck,
    preflight,
    return_material,
    waits,
)
from workers.drain_plan import DrainPlan
from workers.errors import Cancelled, PermanentError
from workers.material_steps import delete_tokens, fresh_material
from workers.run import Run
from workers.serving_certs import approve_for_run as approve_serving_certs

log = logging.getLogger(__name__)

WORKER_LABEL = "node-role.kubernetes.io/worker"
AGENT_ANNOTATION = "joinops.io/agent-sent"  # on the source's Node: the request whose agent


# --- check ---


def recheck(run: Run) -> str:
    verdict = check(
        run.ask,
        run.source,
        run.target,
        agent_namespace=run.namespace,
        agent_image=run.ctx.settings.agent.image,
    )
    if not verdict.allowed:
        raise PermanentError(refusal_now(verdict))
    if run.request.role is Role.CONTROL_PLANE:  # its upload would break another's join
        certkeys.ensure_free(run.ctx.redis, run.request.target, run.id, run.ctx.clock())
    run.ctx.store.update(run.id, destroys_source=verdict.destroys_source)
    run.request.destroys_source = verdict.destroys_source
    return step_texts.rules_still_allow(verdict.versions or "")


# --- cordon and drain ---


def cordon(run: Run) -> str:
    memory = run.memory("cordon")
    if "was_cordoned" not in memory:
        run.remember("cordon", was_cordoned=drain.is_cordoned(run.source, run.request.node))
    drain.cordon(run.source, run.request.node)
    return step_texts.cordoned(run.request.node, run.request.source)


def uncordon(run: Run) -> None:
    if not run.memory("cordon").get("was_cordoned", True):
        drain.cordon(run.source, run.request.node, unschedulable=False)


def drain_node(run: Run) -> str:
    """The pods are listed once (the plan, kept between slices): each slice evicts and waits
    for those only, never for pods that appear on the node afterwards (workers.drain_plan)."""
    memory = run.memory("drain") if run.resuming else {}
    node = run.request.node
    started = float(memory.get("since") or run.ctx.clock())
    deadline = float(
        memory.get("deadline") or started + run.ctx.settings.timeouts.drain.total_seconds()
    )
    plan = DrainPlan.from_memory(memory.get("plan"))
    run.remember("drain", since=started, deadline=deadline)
    while True:
        until = waits.slice_end(run, deadline)
        result = drain.drain(
            run.source,
            node,
            deadline=until,
            progress=lambda gone, total: run.progress(
                "drain", drain_texts.pods_gone(node, gone, total), done=gone, total=total
            ),
            notice=lambda text: run.progress("drain", text),
            stopped=run.cancelled,
            clock=run.ctx.clock,
            force=run.request.force,
            plan=plan,
            keep=lambda listed: run.remember("drain", plan=listed.to_memory()),
        )
        plan = result.plan
        run.remember("drain", plan=plan.to_memory(), rate_limited=result.rate_limited)
        if run.cancelled():
            raise Cancelled()
        if result.done or until >= deadline:
            break
        waits.give_up_worker_if_needed(run, "pods terminating")
    timeout = run.ctx.settings.timeouts.drain
    if not result.done:
        raise PermanentError(drain_texts.drain_timed_out(node, timeout, result.held, plan.appeared))
    seconds = run.ctx.clock() - started
    return drain_texts.drained(
        node,
        plan.total,
        seconds,
        plan.skipped,
        plan.empty_dir,
        plan.deleted_for_good,
        plan.appeared,
    )


# --- the node agent: the point of no return ---


def start_agent(run: Run) -> str:
    if not run.ctx.store.set_flag_if_state(run.id, "agent_started", {State.RUNNING}):
        raise Cancelled()
    run.request.agent_started = True
    # Was the agent pod's creation ever sent (by an earlier attempt or run)? Then it may exist,
    # and the node may be leaving, whatever happens next: its join is in flight with that
    # material; never replace or delete it. Decided from the source, not from Redis alone.
    sent_before = _agent_sent_before(run)
    try:
        if not sent_before:
            _preflight(run, fresh_material(run))
        hostpods.ensure_namespace(run.source, run.namespace)
    except Exception:
        if not sent_before:
            _agent_not_started(run)
        raise
    created = _send_agent(run) if not sent_before else ""
    _await_agent_start(run, created)
    return step_texts.agent_started(
        run.request.node, run.request.source, run.request.target, run.request.destroys_source
    )


def _agent_sent_before(run: Run) -> bool:
    """Redis's record, else the source's: the pod itself, or the Node's agent annotation
    (written before the pod is created). An unreachable source: assume it was sent."""
    if run.memory("agent").get("pod_requested"):
        return True
    node = run.request.node
    try:
        found = run.source.call_json("get", f"nodes/{node}", run.source.core.read_node, node)
    except ClusterNotFound:
        return False  # no Node to act on: the agent step fails on its own
    except ClusterUnreachable:
        return True
    annotations = (found.get("metadata") or {}).get("annotations") or {}
    return bool(annotations.get(AGENT_ANNOTATION) == run.id)


def _send_agent(run: Run) -> str:
    """The point of no return: mark the Node, confirm the locks, create the agent pod. Its
    resourceVersion as created ("" when an earlier run created it)."""
    deadline = run.ctx.clock() + run.ctx.settings.timeouts.agent_start.total_seconds()
    run.remember("agent", start_deadline=deadline)
    try:
        _annotate(run, run.id)
    except ClusterError:
        _agent_not_started(run)
        raise
    pod = agent.agent_pod(
        namespace=run.namespace,
        request_id=run.id,
        node=run.request.node,
        image=run.ctx.settings.agent.image,
        profile=run.ctx.settings.agent.host_profile,
        not_after=int(deadline),
        returnable=return_material.returnable(run),
    )
    run.confirm_ours()  # right before the irreversible call: another run may own it now
    run.remember("agent", pod_requested=True)
    try:
        created = run.source.call_json(
            "create",
            f"pods/{agent.agent_pod_name(run.id)}",
            run.source.core.create_namespaced_pod,
            run.namespace,
            pod,
        )
    except ClusterConflict:
        return ""  # created by an earlier, interrupted run
    except ClusterUnreachable:
        raise  # no answer: the pod may have been created all the same
    except ClusterError:
        _agent_not_started(run)  # refused (403, 422...): this one was not created
        _annotate(run, None)
        raise
    return str((created.get("metadata") or {}).get("resourceVersion") or "")


def _await_agent_start(run: Run, created: str = "") -> None:
    """The agent must run within `timeouts.agent_start`; one that never starts is deleted (its
    Secret first: a pod whose Secret is gone cannot start) and the move rolled back. A pod
    that started late anyway finds its deadline passed and does nothing.

    A Pending pod alone does not prove that nothing ran: the reset stops the kubelet, and one
    stopped before it reported the pod Running leaves it Pending for good. Its node then stops
    reporting (NotReady within the node-monitor grace period, well inside the deadline). So the
    move is rolled back only while the node is still Ready; otherwise the join is awaited."""
    deadline = float(
        run.memory("agent").get("start_deadline")
        or run.ctx.clock() + run.ctx.settings.timeouts.agent_start.total_seconds()
    )
    name = agent.agent_pod_name(run.id)
    try:
        pod = hostprobe.await_start(
            run.source, run.namespace, name, deadline, run, "node agent", since=created
        )
    except ClusterUnreachable:
        if run.request.destroys_source:
            return  # its reset took the source's only API server with it, as it should
        raise
    except hostprobe.NeverStarted as never:
        if not _ready_in_source(run):
            within = run.ctx.settings.timeouts.agent_start
            run.progress(
                "agent", host_texts.agent_start_unknown(run.request.node, within, never.why)
            )
            return
        left = _remove_unstarted_agent(run)
        _agent_not_started(run)
        _annotate(run, None)
        if left:
            raise PermanentError(f"{never} {host_texts.unstarted_agent_left(left)}") from never
        raise
    message = podstatus.termination_message(pod)
    if message.startswith(agent.NOT_STARTED):
        _agent_not_started(run)
        _annotate(run, None)
        raise PermanentError(message.removeprefix("joinops: ").strip())


def _ready_in_source(run: Run) -> bool:
    node = run.source.get_node(run.request.node)
    return node is not None and node.ready


def _remove_unstarted_agent(run: Run) -> str:
    """Its Secret first (a pod whose Secret is gone cannot start), then the pod; "" when both
    went, else why not (the agent's own deadline still keeps a late start from acting)."""
    try:
        material.delete_quietly(run.source, run.namespace, "secret", agent.join_secret_name(run.id))
        material.delete_quietly(run.source, run.namespace, "pod", agent.agent_pod_name(run.id))
    except ClusterError as e:
        log.warning("request %s: the unstarted agent could not be removed: %s", run.id, e)
        return e.detail
    return ""


def _annotate(run: Run, request_id: str | None) -> None:
    """The source's own record that this request's agent was sent to the node (None: not)."""
    patch = {"metadata": {"annotations": {AGENT_ANNOTATION: request_id}}}
    node = run.request.node
    try:
        run.source.call_json("patch", f"nodes/{node}", run.source.core.patch_node, node, patch)
    except ClusterNotFound:
        pass


def _preflight(run: Run, cluster_info: dict[str, str] | None) -> None:
    """The quorum guard and cluster-info again, as late as possible (workers.preflight).
    `cluster_info`: as the material's freshness check saw it a moment ago; read again when
    the quorum guard ran in between (its etcdctl pod takes seconds)."""
    request = run.request
    if request.from_control_plane and not request.destroys_source:
        etcd_pod = EtcdPod(run.namespace, run.ctx.settings.agent.image)
        preflight.check_quorum(run.source, request.node, request.source, etcd_pod)
        cluster_info = None
    memory = run.memory("join-material")
    token_id = str(memory.get("token_id", ""))
    token = run.token if run.token is not None and run.token.id == token_id else None
    pinned = list(memory.get("ca_hashes", []))
    preflight.check_cluster_info(run.target, token_id, token, pinned, cluster_info)


def _agent_not_started(run: Run) -> None:
    """The node has not left the source: a failure may undo the earlier steps."""
    run.ctx.store.update(run.id, agent_started=False)
    run.request.agent_started = False


# --- clean-up ---


def cleanup(run: Run) -> str:
    notes: list[str] = []
    request = run.request
    source_gone = request.destroys_source  # its last control plane was reset: the API is gone
    etcd_member = request.from_control_plane and not source_gone
    if etcd_member:
        _quietly_unreachable(lambda: etcdcleanup.remember_old_address(run))
    actions = (
        ()
        if source_gone
        else (
            (f"node {request.node}", lambda: _delete_node(run.source, request.node)),
            (
                "the node agent",
                lambda: material.delete_quietly(
                    run.source, run.namespace, "pod", agent.agent_pod_name(run.id)
                ),
            ),
            (
                "the agent's Secret",
                lambda: material.delete_quietly(
                    run.source, run.namespace, "secret", agent.join_secret_name(run.id)
                ),
            ),
            ("the return record", lambda: return_material.delete_record(run)),
        )
    )
    for what, action in actions:
        try:
            action()
        except ClusterUnreachable:
            notes.append(step_texts.leftover(what, request.source))
    if etcd_member and (said := etcdcleanup.member_left_behind(run)):
        run.progress("cleanup", said)  # the reset left its etcd member: removed, or what to run
    delete_tokens(run, every=True)
    _label(run)
    certs = approve_serving_certs(run)  # its kubelet's serving certificate; never fails the move
    checked = podcheck.check_pods_run(run)  # raises, saying where the node is, if none can run
    return step_texts.with_serving_certs(
        step_texts.cleaned_up(request, source_gone, notes, checked), certs
    )


def _quietly_unreachable(action: Callable[[], None]) -> None:
    try:
        action()
    except ClusterUnreachable:
        pass  # the clean-up goes on; what needed the source says so itself


def _delete_node(source: KubeCluster, node: str) -> None:
    try:
        source.call_json("delete", f"nodes/{node}", source.core.delete_node, node)
    except ClusterNotFound:
        pass


def _label(run: Run) -> None:
    request = run.request
    label = CONTROL_PLANE_LABEL if request.role is Role.CONTROL_PLANE else WORKER_LABEL
    carried = run.memory("join-material").get("carried") or {}
    patch = {
        "metadata": {
            "labels": {**carried.get("labels", {}), label: ""},
            "annotations": {
                "joinops.io/migrated-from": request.source,
                "joinops.io/request": request.id,
            },
        }
    }
    run.target.call_json(
        "patch", f"nodes/{request.node}", run.target.core.patch_node, request.node, patch
    )
