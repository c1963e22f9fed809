"""The steps of a migration, in order, by stable id (see `joinops.plan.STEP_IDS`).

Each step is a small function of a `Run` returning the line to report; each is safe to run twice.
Steps before the node agent can be undone; after it, the node has left the source.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import urllib3
import yaml
from kubernetes import watch
from kubernetes.client.exceptions import ApiException

from joinops import messages
from joinops.asks import MigrationAsk
from joinops.errors import ClusterConflict, ClusterError, ClusterNotFound, ClusterUnreachable
from joinops.events import Event, EventKind
from joinops.findings import refusals
from joinops.joinmaterial import (
    KUBEADM_CERTS_LIFETIME,
    BootstrapToken,
    join_configuration,
    join_endpoint,
    new_bootstrap_token,
    new_certificate_key,
)
from joinops.kube import KubeCluster
from joinops.lifecycle import State
from joinops.model import CONTROL_PLANE_LABEL, Role, Version
from joinops.plan import STEP_IDS
from joinops.rules import check
from joinops.store import Request
from workers import agent, drain, material
from workers.context import EngineContext
from workers.errors import Cancelled, PermanentError

WORKER_LABEL = "node-role.kubernetes.io/worker"
TOKEN_SIGNED_WITHIN = 60.0  # seconds the target's bootstrap signer may take to sign a new token


@dataclass
class Run:
    """One run of one request's job: what every step reads and writes."""

    ctx: EngineContext
    request: Request
    resuming: bool = False  # the current step was interrupted (worker died) and is resumed
    lost: threading.Event | None = None  # set when this run's locks expired under it

    @property
    def id(self) -> str:
        return self.request.id

    @property
    def source(self) -> KubeCluster:
        return self.ctx.clusters.get(self.request.source)

    @property
    def target(self) -> KubeCluster:
        return self.ctx.clusters.get(self.request.target)

    @property
    def ask(self) -> MigrationAsk:
        r = self.request
        return MigrationAsk(r.node, r.source, r.target, r.role, r.force)

    @property
    def namespace(self) -> str:
        return self.ctx.settings.agent.namespace

    def memory(self, step: str) -> dict[str, Any]:
        return self.ctx.records.get(self.id, step).data

    def remember(self, step: str, **data: Any) -> None:
        self.ctx.records.remember(self.id, step, **data)

    def progress(self, step: str, text: str) -> None:
        self.ctx.reporter.emit(
            Event(self.id, EventKind.PROGRESS, text, step=step, at=self.ctx.clock())
        )

    def cancelled(self) -> bool:
        current = self.ctx.store.get(self.id)
        return current is not None and current.state is State.CANCELLED


# --- check ---


def recheck(run: Run) -> str:
    verdict = check(run.ask, run.source, run.target)
    if not verdict.allowed:
        reasons = " ".join(f.text for f in refusals(verdict.findings))
        raise PermanentError(messages.rules_refuse_now(reasons))
    run.ctx.store.update(run.id, destroys_source=verdict.destroys_source)
    run.request.destroys_source = verdict.destroys_source
    return messages.rules_still_allow(verdict.versions or "")


# --- join material ---


def prepare_join_material(run: Run) -> str:
    undo_join_material(run)  # an interrupted earlier attempt's token is never reused
    target, timeouts = run.target, run.ctx.settings.timeouts
    facts = target.facts()
    endpoint = join_endpoint(facts.control_plane_endpoint, facts.server)
    ca_hash = material.target_ca_hash(target)
    token = _mint_token(
        run, timeouts.drain + timeouts.join + timeouts.upload_certs + timedelta(minutes=10)
    )
    certificate_key = None
    if run.request.role is Role.CONTROL_PLANE:
        certificate_key = new_certificate_key()
        host = _upload_host(run, facts.control_planes)
        material.upload_certs(
            target,
            namespace=run.namespace,
            request_id=run.id,
            node=host,
            image=run.ctx.settings.agent.image,
            certificate_key=certificate_key,
            timeout=timeouts.upload_certs.total_seconds(),
            clock=run.ctx.clock,
        )
        run.remember("join-material", certs_uploaded_at=run.ctx.clock(), certs_host=host)
    config = join_configuration(
        kubeadm_version=_kubeadm_version(run, facts.version),
        endpoint=endpoint,
        token=token,
        ca_hash=ca_hash,
        node_name=run.request.node,
        certificate_key=certificate_key,
    )
    material.ensure_namespace(run.source, run.namespace)
    material.put_secret(
        run.source,
        run.namespace,
        agent.join_secret_name(run.id),
        {agent.JOIN_KEY: yaml.safe_dump(config, sort_keys=False)},
        agent.labels(run.id, "join"),
    )
    return messages.material_ready(
        run.request.target, token.id, endpoint, run.request.role is Role.CONTROL_PLANE
    )


def _kubeadm_version(run: Run, target: Version) -> Version:
    """The node's own kubeadm reads the JoinConfiguration: its version, never above the target's."""
    node = run.source.get_node(run.request.node)
    return min(node.kubelet_version, target) if node else target


def _mint_token(run: Run, ttl: timedelta) -> BootstrapToken:
    token = new_bootstrap_token()
    minted = [*run.memory("join-material").get("token_ids", []), token.id]
    # Remember the id before creating the Secret: whatever happens next, it can be deleted.
    run.remember(
        "join-material",
        token_id=token.id,
        token_ids=minted,
        token_expires_at=run.ctx.clock() + ttl.total_seconds(),
    )
    material.create_token(
        run.target,
        token,
        ttl,
        messages.token_description(run.id),
        agent.labels(run.id, "token"),
        now=run.ctx.clock(),
    )
    return token


def _upload_host(run: Run, control_planes: tuple[Any, ...]) -> str:
    ready = [cp.name for cp in control_planes if cp.ready]
    if not ready:
        raise PermanentError(messages.no_ready_control_plane(run.request.target))
    return ready[0]


def undo_join_material(run: Run) -> None:
    """Delete every token this request minted and the agent's Secret."""
    _delete_tokens(run)
    _quietly(
        lambda: material.delete_quietly(
            run.source, run.namespace, "secret", agent.join_secret_name(run.id)
        )
    )


def _delete_tokens(run: Run) -> None:
    """Delete every token this request minted, by the ids it remembered (no list needed)."""
    for token_id in run.memory("join-material").get("token_ids", []):
        material.delete_token(run.target, token_id)
    run.remember("join-material", token_ids=[])


# --- cordon and drain ---


def cordon(run: Run) -> str:
    memory = run.memory("cordon")
    if "was_cordoned" not in memory:
        run.remember("cordon", was_cordoned=drain.is_cordoned(run.source, run.request.node))
    drain.cordon(run.source, run.request.node)
    return messages.cordoned(run.request.node, run.request.source)


def uncordon(run: Run) -> None:
    if not run.memory("cordon").get("was_cordoned", True):
        drain.cordon(run.source, run.request.node, unschedulable=False)


def drain_node(run: Run) -> str:
    started = run.ctx.clock()
    result = drain.drain(
        run.source,
        run.request.node,
        deadline=started + run.ctx.settings.timeouts.drain.total_seconds(),
        progress=lambda text: run.progress("drain", text),
        stopped=run.cancelled,
        clock=run.ctx.clock,
        force=run.request.force,
    )
    run.remember("drain", evicted=result.evicted, rate_limited=result.rate_limited)
    if run.cancelled():
        raise Cancelled()
    if not result.done:
        raise PermanentError(
            messages.drain_timed_out(
                run.request.node, run.ctx.settings.timeouts.drain, result.remaining, result.blockers
            )
        )
    return messages.drained(
        run.request.node,
        result.evicted + result.already_terminating,
        run.ctx.clock() - started,
        result.skipped,
        result.empty_dir,
        result.deleted_for_good,
    )


# --- the node agent: the point of no return ---


def start_agent(run: Run) -> str:
    if not run.ctx.store.set_flag_if_state(run.id, "agent_started", {State.RUNNING}):
        raise Cancelled()
    run.request.agent_started = True
    # Was the agent pod's creation ever sent (by an earlier attempt or run)? Then it may exist,
    # and the node may be leaving, whatever happens next.
    sent_before = bool(run.memory("agent").get("pod_requested"))
    try:
        if _material_stale(run) or not _token_usable(run):
            prepare_join_material(run)
            if not _token_usable(run):
                raise PermanentError(messages.token_not_signed(run.request.target))
        material.ensure_namespace(run.source, run.namespace)
    except Exception:
        if not sent_before:
            _agent_not_started(run)
        raise
    pod = agent.agent_pod(
        namespace=run.namespace,
        request_id=run.id,
        node=run.request.node,
        image=run.ctx.settings.agent.image,
        profile=run.ctx.settings.agent.host_profile,
    )
    run.remember("agent", pod_requested=True)
    try:
        run.source.call(
            "create",
            f"pods/{agent.agent_pod_name(run.id)}",
            run.source.core.create_namespaced_pod,
            run.namespace,
            pod,
        )
    except ClusterConflict:
        pass  # created by an earlier, interrupted run
    except ClusterUnreachable:
        raise  # no answer: the pod may have been created all the same
    except ClusterError:
        if not sent_before:  # refused (403, 422...): this one was not created
            _agent_not_started(run)
        raise
    return messages.agent_started(
        run.request.node, run.request.source, run.request.target, run.request.destroys_source
    )


def _agent_not_started(run: Run) -> None:
    """The node has not left the source: a failure may undo the earlier steps."""
    run.ctx.store.update(run.id, agent_started=False)
    run.request.agent_started = False


def _material_stale(run: Run) -> bool:
    """Would the token or uploaded certificates expire before the join can finish?"""
    memory, now = run.memory("join-material"), run.ctx.clock()
    join = run.ctx.settings.timeouts.join.total_seconds()
    if float(memory.get("token_expires_at", 0)) < now + join:
        return True
    uploaded = memory.get("certs_uploaded_at")
    if uploaded is None:
        return False
    return float(uploaded) + KUBEADM_CERTS_LIFETIME.total_seconds() < now + join + 300


def _token_usable(run: Run) -> bool:
    """Is the target's cluster-info signed for our token, as the joining node will check?

    The bootstrap signer signs it shortly after the token Secret appears and drops the
    signature when the token goes; waiting for it needs no right to read Secrets.
    """
    token_id = run.memory("join-material").get("token_id", "")
    deadline = run.ctx.clock() + TOKEN_SIGNED_WITHIN
    return material.wait_for_signature(run.target, token_id, deadline, run.ctx.clock)


# --- completion ---


def wait_joined(run: Run) -> str:
    memory = run.memory("wait-joined")
    deadline = memory.get("deadline") if run.resuming else None
    if deadline is None:
        deadline = run.ctx.clock() + run.ctx.settings.timeouts.join.total_seconds()
        run.remember("wait-joined", deadline=deadline)
    started = run.ctx.clock()
    unreachable = False  # did the target's API fail to answer the last watch?
    while run.ctx.clock() < deadline:
        try:
            if _watch_ready(run.target, run.request.node, deadline - run.ctx.clock()):
                return messages.joined(
                    run.request.node, run.request.target, run.ctx.clock() - started
                )
            unreachable = False
        except (ClusterUnreachable, ApiException, OSError, urllib3.exceptions.HTTPError):
            unreachable = True
            run.ctx.redis.ping()  # a dead Redis should fail the job, not loop here
            time.sleep(1.0)  # the target's API is away for a moment; the deadline still holds
    # delete the token now, so that the message can say whether it is gone
    tokens = tuple(run.memory("join-material").get("token_ids", []))
    try:
        _delete_tokens(run)
        tokens = ()
    except ClusterError:
        pass  # the ids stay remembered: a retry deletes them
    raise PermanentError(
        messages.never_joined(
            run.request,
            agent.unit_name(run.id),
            run.ctx.settings.timeouts.join,
            target_unreachable=unreachable,
            tokens_left=tokens,
        )
    )


def _watch_ready(target: KubeCluster, node: str, seconds: float) -> bool:
    stream = watch.Watch()
    for event in stream.stream(
        target.core.list_node,
        field_selector=f"metadata.name={node}",
        timeout_seconds=max(1, int(min(seconds, 30))),
        _request_timeout=min(seconds, 30) + target.timeout,
    ):
        obj = event["object"]
        conditions = obj.status.conditions if obj.status else None
        if event["type"] != "DELETED" and any(
            c.type == "Ready" and c.status == "True" for c in conditions or []
        ):
            stream.stop()
            return True
    return False


def cleanup(run: Run) -> str:
    notes: list[str] = []
    request = run.request
    source_gone = request.destroys_source  # its last control plane was reset: the API is gone
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
        )
    )
    for what, action in actions:
        try:
            action()
        except ClusterUnreachable:
            notes.append(messages.leftover(what, request.source))
    _delete_tokens(run)
    _label(run)
    return messages.cleaned_up(request, source_gone, notes)


def _delete_node(source: KubeCluster, node: str) -> None:
    try:
        source.call("delete", f"nodes/{node}", source.core.delete_node, node)
    except ClusterNotFound:
        pass


def _label(run: Run) -> None:
    request = run.request
    label = CONTROL_PLANE_LABEL if request.role is Role.CONTROL_PLANE else WORKER_LABEL
    patch = {
        "metadata": {
            "labels": {label: ""},
            "annotations": {
                "joinops.io/migrated-from": request.source,
                "joinops.io/request": request.id,
            },
        }
    }
    run.target.call(
        "patch", f"nodes/{request.node}", run.target.core.patch_node, request.node, patch
    )


def after_failure(run: Run) -> None:
    """Past the point of no return, only the token is worth removing (it can add nodes)."""
    _quietly(lambda: _delete_tokens(run))


def _quietly(action: Callable[[], None]) -> None:
    try:
        action()
    except ClusterError:
        pass  # best effort: the outcome message says what may be left


@dataclass(frozen=True)
class Step:
    id: str
    run: Callable[[Run], str]
    undo: Callable[[Run], None] | None = None


STEPS: tuple[Step, ...] = (
    Step("check", recheck),
    Step("join-material", prepare_join_material, undo_join_material),
    Step("cordon", cordon, uncordon),
    Step("drain", drain_node),
    Step("agent", start_agent),
    Step("wait-joined", wait_joined),
    Step("cleanup", cleanup),
)
assert tuple(s.id for s in STEPS) == STEP_IDS, "the plan and the engine list the same steps"
