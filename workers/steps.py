"""The steps of a migration, in order, by stable id (see `joinops.requests.plan.STEP_IDS`).

Each step is a small function of a `Run` returning the line to report; each is safe to run twice.
Steps before the node agent can be undone; after it, the node has left the source.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import yaml

from joinops import messages
from joinops.clusters import capins
from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterConflict, ClusterError, ClusterNotFound, ClusterUnreachable
from joinops.joinmaterial import (
    DEFAULT_API_PORT,
    KUBEADM_CERTS_LIFETIME,
    BootstrapToken,
    join_configuration,
    new_bootstrap_token,
    new_certificate_key,
)
from joinops.requests.events import Event, EventKind
from joinops.requests.lifecycle import State
from joinops.requests.model import CONTROL_PLANE_LABEL, Role
from joinops.requests.plan import STEP_IDS
from joinops.requests.store import Request
from joinops.rules.asks import MigrationAsk
from joinops.rules.check import check
from joinops.rules.refusal_now import refusal_now
from workers import agent, completion, drain, material, preflight
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
    token: BootstrapToken | None = None  # minted in this process (its secret is never stored)

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
        raise PermanentError(refusal_now(verdict))
    run.ctx.store.update(run.id, destroys_source=verdict.destroys_source)
    run.request.destroys_source = verdict.destroys_source
    return messages.rules_still_allow(verdict.versions or "")


# --- join material ---


def prepare_join_material(run: Run) -> str:
    undo_join_material(run)  # an interrupted earlier attempt's token is never reused
    target, timeouts = run.target, run.ctx.settings.timeouts
    facts = target.facts()
    try:
        info = capins.read(target)  # what the node will see, not what joinops's kubeconfig says
    except capins.ClusterInfoProblem as e:
        raise PermanentError(str(e)) from e
    endpoint = info.endpoint(facts.control_plane_endpoint)
    ca_hashes = info.ca_hashes
    run.remember("join-material", ca_hashes=ca_hashes)
    node = run.source.get_node(run.request.node)
    token = _mint_token(
        run, timeouts.drain + timeouts.join + timeouts.upload_certs + timedelta(minutes=10)
    )
    certificate_key, bind_port = None, DEFAULT_API_PORT
    if run.request.role is Role.CONTROL_PLANE:
        bind_port = target.api_server_port() or DEFAULT_API_PORT
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
        kubeadm_version=min(node.kubelet_version, facts.version) if node else facts.version,
        endpoint=endpoint,
        token=token,
        ca_hashes=ca_hashes,
        node_name=run.request.node,
        certificate_key=certificate_key,
        advertise_address=node.internal_ip if node else None,
        bind_port=bind_port,
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


def _mint_token(run: Run, ttl: timedelta) -> BootstrapToken:
    token = new_bootstrap_token()
    memory = run.memory("join-material")
    minted = [*memory.get("token_ids", []), token.id]
    # Remember the id before creating the Secret: whatever happens next, it can be deleted.
    run.remember(
        "join-material",
        token_id=token.id,
        token_ids=minted,
        minted_ids=[*memory.get("minted_ids", []), token.id],
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
    run.token = token
    return token


def _upload_host(run: Run, control_planes: tuple[Any, ...]) -> str:
    ready = [cp.name for cp in control_planes if cp.ready]
    if not ready:
        raise PermanentError(messages.no_ready_control_plane(run.request.target))
    return ready[0]


def undo_join_material(run: Run) -> None:
    """Delete every token this request minted and the agent's Secret."""
    delete_tokens(run, every=True)
    _quietly(
        lambda: material.delete_quietly(
            run.source, run.namespace, "secret", agent.join_secret_name(run.id)
        )
    )


def delete_tokens(run: Run, every: bool = False) -> None:
    """Delete the tokens this request minted, by the ids it remembered (no list needed).

    `every`: also those deleted before. A create that timed out may still have succeeded on the
    server after an earlier delete found nothing (404): the end of a request deletes them all."""
    memory = run.memory("join-material")
    ids = list(memory.get("token_ids", []))
    if every:
        ids += [i for i in memory.get("minted_ids", []) if i not in ids]
    for token_id in ids:
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
    # Then its join is in flight with that material: never replace or delete it.
    sent_before = bool(run.memory("agent").get("pod_requested"))
    try:
        if not sent_before:
            _fresh_material(run)
            _preflight(run)
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


def _fresh_material(run: Run) -> None:
    """Join material good until the join can finish, whose token this process knows."""
    if _material_stale(run) or not _token_usable(run):
        prepare_join_material(run)
        if not _token_usable(run):
            raise PermanentError(messages.token_not_signed(run.request.target))


def _preflight(run: Run) -> None:
    """The quorum guard and cluster-info again, as late as possible (workers.preflight)."""
    request = run.request
    if request.from_control_plane and not request.destroys_source:
        preflight.check_quorum(run.source, request.node, request.source)
    memory = run.memory("join-material")
    token_id = str(memory.get("token_id", ""))
    token = run.token if run.token is not None and run.token.id == token_id else None
    preflight.check_cluster_info(run.target, token_id, token, list(memory.get("ca_hashes", [])))


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
    delete_tokens(run, every=True)
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
    _quietly(lambda: delete_tokens(run, every=True))


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
    Step("wait-joined", completion.wait_joined),
    Step("cleanup", cleanup),
)
assert tuple(s.id for s in STEPS) == STEP_IDS, "the plan and the engine list the same steps"
