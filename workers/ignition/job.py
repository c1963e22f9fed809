"""The RQ job that makes an Ignition for a request from Slack.

`generate_ignition(request_id)` runs `prepare` (workers.ignition.prepare: reads the cluster,
builds and validates the file) and `create` (workers.ignition.create: the join material) for an
approved request of kind `ignition`, keeps the file in Redis for the bot to deliver, and records
its expiry and SHA-256. `joinops ignition` (CLI) uses the same two parts directly.
"""

from __future__ import annotations

import logging
from pathlib import Path

from joinops.errors import ClusterError, UsageError
from joinops.ignition import request as ir
from joinops.ignition import texts
from joinops.ignition.byo import parse_byo
from joinops.ignition.byo_resolve import resolve_byo
from joinops.ignition.config import role_words
from joinops.requests.events import Event, EventKind
from joinops.requests.lifecycle import State
from joinops.requests.store import Request
from joinops.settings import parse_duration
from workers import certkeys
from workers.context import EngineContext, current
from workers.errors import PermanentError
from workers.ignition.create import create, delete_token_quietly, token_description
from workers.ignition.prepare import IgnitionAsk, Refused, prepare
from workers.locks import LockSet, control_plane_lock

log = logging.getLogger(__name__)

STEP = "ignition"


def generate_ignition(request_id: str) -> str:
    state = run_ignition(current(), request_id)
    return str(state) if state else "missing"


def run_ignition(ctx: EngineContext, request_id: str) -> State | None:
    """Carry out one approved ignition request. Returns its final state."""
    request = ctx.store.get(request_id)
    if request is None:
        return None
    if request.kind != ir.KIND:
        return request.state
    if request.state not in (State.APPROVED, State.RUNNING):
        return request.state
    if request.state is State.APPROVED:
        moved, _ = ctx.store.transition(request.id, State.RUNNING)
        if not moved:
            current_request = ctx.store.get(request.id)
            return current_request.state if current_request else None
    _emit(
        ctx,
        request.id,
        EventKind.STEP_STARTED,
        texts.job_started(request.target, role_words(request.role)),
    )
    try:
        outcome = _make(ctx, request)
    except (UsageError, PermanentError) as e:
        return _fail(ctx, request, str(e))
    except ClusterError as e:
        return _fail(ctx, request, e.detail)
    except Exception:
        log.exception("request %s: unexpected error making Ignition", request.id)
        return _fail(ctx, request, texts.JOB_INTERNAL_ERROR)
    _emit(ctx, request.id, EventKind.STEP_SUCCEEDED, outcome)
    return _finish(ctx, request, State.SUCCEEDED, outcome)


def ask_from_request(request: Request) -> IgnitionAsk:
    """The ask stored on a request; UsageError when its byo configuration does not hold."""
    ttl = parse_duration(int(request.extra.get(ir.EXTRA_TTL) or ir.DEFAULT_TTL.total_seconds()))
    problem = ir.ttl_problem(ttl)
    if problem:
        raise UsageError(f"ttl: {problem}")
    byo = None
    text = request.extra.get(ir.EXTRA_BYO, "")
    if text:
        where = "the request's byo configuration"
        base = request.extra.get(ir.EXTRA_BYO_DIR) or None
        byo = resolve_byo(parse_byo(text, where), where, Path(base) if base else None)
    return IgnitionAsk(request.target, request.role, ttl, byo)


def _make(ctx: EngineContext, request: Request) -> str:
    ask = ask_from_request(request)
    cluster = ctx.clusters.get(request.target)
    prepared = prepare(cluster, ask)
    locks = None
    if prepared.control_plane:
        locks = LockSet(
            ctx.redis,
            [control_plane_lock(request.target)],
            request.id,
            ctx.settings.timeouts.lock.total_seconds(),
        )
        held = locks.acquire()
        if held is not None:
            raise Refused(texts.control_plane_busy(request.target, held.holder))
        locks.keep_alive()
    try:
        # An interrupted earlier run may have left a token: it is never reused.
        previous = request.extra.get(ir.TOKEN_ID)
        if previous:
            delete_token_quietly(cluster, previous)
        if prepared.control_plane:  # never overwrite a key another join relies on
            certkeys.ensure_free(ctx.redis, request.target, request.id, ctx.clock())
        ctx.store.update(request.id, **{"x:" + ir.TOKEN_ID: prepared.token.id})
        created = create(
            cluster,
            prepared,
            settings=ctx.settings,
            request_id=request.id,
            description=token_description(f"{request.requester} ({request.id})"),
            clock=ctx.clock,
        )
        if created.certs_expire_at:  # relied on while the file can join, never longer
            certkeys.record(
                ctx.redis, request.target, request.id, certkeys.IGNITION, created.valid_until
            )
    finally:
        if locks is not None:
            locks.release()
    try:
        ctx.redis.set(ir.file_key(request.id), prepared.data, ex=ir.DELIVERY_TTL)
    except Exception:
        delete_token_quietly(cluster, prepared.token.id)
        raise
    fields: dict[str, object] = {
        ir.SHA256: prepared.sha256,
        ir.VALID_UNTIL: created.valid_until,
        ir.TOKEN_EXPIRES_AT: created.token_expires_at,
        ir.SIZE: len(prepared.data),
    }
    if created.certs_expire_at:
        fields[ir.CERTS_EXPIRE_AT] = created.certs_expire_at
    ctx.store.update(request.id, **{"x:" + k: v for k, v in fields.items()})
    _emit(
        ctx,
        request.id,
        EventKind.PROGRESS,
        texts.job_token(created.token_secret, created.token_expires_at),
    )
    if created.certs_host:
        _emit(
            ctx,
            request.id,
            EventKind.PROGRESS,
            texts.job_certs(created.certs_host, created.certs_expire_at),
        )
    return texts.ignition_ready(created.valid_until, prepared.sha256)


def _fail(ctx: EngineContext, request: Request, reason: str) -> State:
    text = texts.job_failed(reason)
    _emit(ctx, request.id, EventKind.STEP_FAILED, reason)
    return _finish(ctx, request, State.FAILED, text, failed_step=STEP)


def _finish(
    ctx: EngineContext, request: Request, state: State, outcome: str, failed_step: str = ""
) -> State:
    ctx.store.transition(request.id, state, outcome=outcome, failed_step=failed_step)
    ctx.reporter.emit(Event(request.id, EventKind.STATE, outcome, state=str(state), at=ctx.clock()))
    return state


def _emit(ctx: EngineContext, request_id: str, kind: EventKind, text: str) -> None:
    ctx.reporter.emit(Event(request_id, kind, text, step=STEP, at=ctx.clock()))
