"""Runs a request's steps in order, with records, events, locks, retries and rollback.

A rerun of the same request skips the steps whose record says they succeeded. A failure before
the node agent undoes the earlier steps (uncordon, delete the token); after it, the node has left
the source and the outcome says where it is and what to do.
"""

from __future__ import annotations

import logging
import math

import redis
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from joinops.errors import ClusterError, ClusterUnreachable, ConfigError
from joinops.logs import request_context
from joinops.metrics import STEP_SECONDS
from joinops.queue import schedule_recheck
from joinops.requests import outcome_texts, step_texts
from joinops.requests.audit import Action
from joinops.requests.events import Event, EventKind
from joinops.requests.lifecycle import State
from joinops.requests.steprecords import Outcome, StepRecord
from joinops.requests.store import Request
from workers import api_waits
from workers.context import EngineContext
from workers.errors import Cancelled, LockLost, PermanentError, TemporaryError, Waiting
from workers.fallback import Returned
from workers.locks import (
    LockSet,
    control_plane_lock,
    node_lock,
    parked_key,
    request_of,
    run_owner,
)
from workers.material_steps import after_failure
from workers.pinning import pin_step_clusters
from workers.run import Run
from workers.steps import STEPS, Step

log = logging.getLogger(__name__)

RECHECK_LATENESS = 3.0  # seconds a re-check may be late past its due time (swept each 0.1 s)
# A step is attempted again after these. Not after a 429 (`ClusterRateLimited`): the client has
# already retried that call up to 10 times, each after the server's Retry-After
# (joinops/clusters/retry_after.py), as client-go does; more would only hold the worker.
TRANSIENT = (ClusterUnreachable, TemporaryError)
ATTEMPTS_PER_STEP = 4
# The join material is built from the check's own reading (the target's version,
# kubeadm-config and control planes, the node's kubelet version and address), taken moments
# before in the same run, as the rules judged it: not read a second time. Every other step,
# and any retry, reads the clusters afresh; nothing is kept across runs or requests
# (joinops/clusters/steady.py says why).
KEEPS_THE_CHECKS_READING = "join-material"


def lock_keys(request: Request) -> list[str]:
    """One migration per node; control-plane changes one at a time per cluster."""
    keys = [node_lock(request.node)]
    if request.role == "control-plane":
        keys.append(control_plane_lock(request.target))
    if request.from_control_plane:
        keys.append(control_plane_lock(request.source))
    return keys


def run_request(ctx: EngineContext, request_id: str, park: bool = False) -> State | None:
    """Carry out one approved (or interrupted) request. Returns its final state, or `running`
    when `park` let a waiting step give up the worker until its scheduled re-check."""
    request = ctx.store.get(request_id)
    parked_owner = _take_parked_owner(ctx, request_id)
    waking = parked_owner is not None
    # a parked run cancelled meanwhile wakes to put the node back, as a running one would
    runnable = (State.APPROVED, State.RUNNING) + ((State.CANCELLED,) if waking else ())
    if request is None or request.state not in runnable:
        return request.state if request else None
    locks = LockSet(
        ctx.redis,
        lock_keys(request),
        parked_owner or run_owner(request.id),
        ctx.settings.timeouts.lock.total_seconds(),
    )
    held = locks.acquire()
    if held is not None and request_of(held.holder) == request.id:
        log.info(
            "request %s: another run of it holds its locks; leaving it to that run", request.id
        )
        return request.state
    if held is not None:
        return _finish(
            ctx,
            request,
            State.FAILED,
            outcome_texts.failed(
                "check", outcome_texts.locked(request.node, request_of(held.holder)), ""
            ),
            failed_step="check",
        )
    locks.keep_alive()
    try:
        with request_context(request.id):
            return _run_locked(ctx, request, locks, park, waking)
    finally:
        if not locks.parked:
            locks.release()


def _take_parked_owner(ctx: EngineContext, request_id: str) -> str | None:
    owner = ctx.redis.getdel(parked_key(request_id))
    return _text(owner) if owner else None


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _run_locked(
    ctx: EngineContext, request: Request, locks: LockSet, park: bool, waking: bool
) -> State:
    resumed = request.state is State.RUNNING or waking
    if not resumed:
        moved, _ = ctx.store.transition(request.id, State.RUNNING)
        if not moved:
            return ctx.store.get(request.id).state
        request.state = State.RUNNING
    run = Run(ctx, request, lost=locks.lost, confirm_locks=locks.confirm, park=park, waking=waking)
    recorded = ctx.records.all(request.id)  # in one read: a re-check skips the steps done
    first = recorded.get("check") or StepRecord("check")
    if "run_started" not in first.data:
        # the migration's start, kept across resumes (a resumed `check` restarts its record)
        ctx.records.remember(request.id, "check", known=first, run_started=ctx.clock())
    done = {s for s, record in recorded.items() if record.outcome is Outcome.SUCCEEDED}
    step = STEPS[0]
    try:
        for step in STEPS:
            if step.id not in done:  # succeeded before this run: only this run could undo it
                _run_step(run, step, resumed)
        run.confirm_ours()
    except Waiting as waiting:
        return _park(run, locks, step, waiting)
    except LockLost:
        log.warning(
            "request %s: locks expired during step %s (held now: %s); stopping this run",
            request.id,
            step.id,
            locks.taken_by or "unknown",
        )
        current = ctx.store.get(request.id)
        return current.state if current else State.FAILED
    except Returned as back:
        return _returned(run, step, str(back))
    except Cancelled:
        _rollback(run, step)
        return _finish(ctx, request, State.CANCELLED, outcome_texts.cancelled(request))
    except (PermanentError, ClusterError) as e:
        return _fail(run, step, _reason(e), getattr(e, "where", ""))
    except redis.RedisError:
        # Not the step's failure: the state store is away. The request stays `running` and is
        # resumed from its records once Redis answers again; failing it now could roll back a
        # move that is going well.
        log.exception(
            "request %s: Redis failed in step %s; leaving it to recovery", request.id, step.id
        )
        raise
    except Exception:
        log.exception("request %s: unexpected error in step %s", request.id, step.id)
        return _fail(run, step, outcome_texts.internal_error(step.id))
    check = ctx.records.get(request.id, "check")
    seconds = ctx.clock() - float(check.data.get("run_started") or check.started)
    return _finish(ctx, request, State.SUCCEEDED, outcome_texts.succeeded(request, seconds))


def _park(run: Run, locks: LockSet, step: Step, waiting: Waiting) -> State:
    """The step waits: its record stays `running`, the locks stay with this run's owner (one
    ttl), and a re-check of the same step is scheduled; the worker is free for other jobs."""
    ctx = run.ctx
    # Until the re-check is due, plus how late a sweep may enqueue it, plus a dead worker's
    # ttl: if no worker takes the re-check by then, the locks are free and recovery resumes
    # the request as it resumes a dead worker's.
    keep = waiting.seconds + RECHECK_LATENESS + ctx.settings.timeouts.lock.total_seconds()
    locks.park(keep)
    ctx.redis.set(parked_key(run.id), locks.owner, ex=math.ceil(keep))
    schedule_recheck(ctx.redis, run.id, waiting.seconds)
    log.info("request %s: step %s waits (%s); re-check scheduled", run.id, step.id, waiting)
    return State.RUNNING


def _reason(error: PermanentError | ClusterError) -> str:
    """The failure in words; an API error names its cluster (once)."""
    if isinstance(error, ClusterError) and error.cluster in error.detail:
        return error.detail  # e.g. "the credentials for clusterA may not ..."
    return str(error)  # "clusterB: watch configmaps/cluster-info failed: HTTP 500 ..."


def _run_step(run: Run, step: Step, resumed: bool) -> None:
    ctx, request_id = run.ctx, run.id
    record = ctx.records.get(request_id, step.id)
    if record.outcome is Outcome.SUCCEEDED:
        return
    run.confirm_ours()  # in Redis, before any step starts: a late heartbeat may not know yet
    if run.cancelled() and not run.request.agent_started:
        raise Cancelled()
    run.resuming = record.outcome is Outcome.RUNNING
    waking, run.waking = run.waking and run.resuming, False  # only the parked step wakes
    if not waking:
        if resumed and record.outcome is Outcome.RUNNING:
            _emit(run, EventKind.PROGRESS, outcome_texts.resumed(step.id), step.id)
        record = ctx.records.start(request_id, step.id, known=record)
    run.step_started = record.started  # a parked step's waiting began then, not at its wake
    pin_step_clusters(run)
    if not waking:  # a re-check goes on with the step's record and its "started" line
        _emit(
            run,
            EventKind.STEP_STARTED,
            step_texts.STEP_TITLES[step.id].format(
                node=run.request.node,
                source=run.request.source,
                target=run.request.target,
                cert="",
            ),
            step.id,
        )
    text = _attempts(run, step)
    run.confirm_ours()  # another run may own the request now: leave the record to it
    done = ctx.records.finish(request_id, step.id, Outcome.SUCCEEDED, text)
    STEP_SECONDS.labels(step.id, "succeeded").observe(done.seconds)
    _emit(run, EventKind.STEP_SUCCEEDED, text, step.id, seconds=done.seconds)


def _attempts(run: Run, step: Step) -> str:
    """The step, attempted again after a transient failure; its line."""
    with api_waits.said_once(run, step.id):  # an API server's long wait: one line a step
        try:
            for attempt in Retrying(
                retry=retry_if_exception_type(TRANSIENT),
                stop=stop_after_attempt(ATTEMPTS_PER_STEP),
                wait=wait_exponential(multiplier=0.5, max=8),
                reraise=True,
                before_sleep=lambda state: _emit(
                    run,
                    EventKind.STEP_RETRYING,
                    f"{state.outcome.exception()}; retrying" if state.outcome else "retrying",
                    step.id,
                ),
            ):
                with attempt:
                    _keep_reads(run, step, attempt.retry_state.attempt_number)
                    text = step.run(run)
        finally:
            run.keeping = False  # between steps, and in any undo, the clusters are read afresh
    return text


def _keep_reads(run: Run, step: Step, attempt: int) -> None:
    """Before each attempt of a step: the check keeps what it reads for the join material's
    first attempt, which reads through the same views; anything else reads afresh."""
    goes_on = step.id == KEEPS_THE_CHECKS_READING and attempt == 1
    if not goes_on:
        run.forget_reads()
    run.keeping = goes_on or step.id == "check"


def _fail(run: Run, step: Step, reason: str, known_where: str = "") -> State:
    ctx, request = run.ctx, run.request
    record = ctx.records.finish(request.id, step.id, Outcome.FAILED, reason)
    STEP_SECONDS.labels(step.id, "failed").observe(record.seconds)
    _emit(run, EventKind.STEP_FAILED, reason, step.id)
    current = ctx.store.get(request.id)
    if known_where:  # the step knows best where the node is (joined, but pods cannot start)
        where = known_where
    elif step.id == "cleanup":
        where = outcome_texts.where_after_join(request)
    elif current is not None and current.agent_started:
        after_failure(run)
        # the later steps' own messages say where the node is; the agent step cannot know
        where = outcome_texts.where_agent_unconfirmed(request) if step.id == "agent" else ""
    else:
        restored = _rollback(run, step)
        where = outcome_texts.where_before_agent(request, restored)
    return _finish(
        ctx,
        request,
        State.FAILED,
        outcome_texts.failed(step.id, reason, where),
        failed_step=step.id,
    )


def _returned(run: Run, step: Step, outcome: str) -> State:
    """The join failed and the node went back into its source (workers.fallback)."""
    record = run.ctx.records.finish(run.id, step.id, Outcome.FAILED, outcome)
    STEP_SECONDS.labels(step.id, "returned").observe(record.seconds)
    _emit(run, EventKind.STEP_FAILED, outcome, step.id)
    return _finish(run.ctx, run.request, State.RETURNED, outcome, failed_step=step.id)


def _rollback(run: Run, failed: Step) -> bool:
    """Undo the steps before `failed`, newest first. True when the node was uncordoned."""
    uncordoned = False
    records = run.ctx.records.all(run.id)
    for step in reversed(STEPS[: STEPS.index(failed) + 1]):
        record = records.get(step.id)
        if (
            step.undo is None
            or record is None
            or record.outcome not in (Outcome.SUCCEEDED, Outcome.RUNNING, Outcome.FAILED)
        ):
            continue
        try:
            step.undo(run)
        except (ClusterError, ConfigError) as e:
            log.warning("request %s: undo of %s failed: %s", run.id, step.id, e)
            continue
        run.ctx.records.finish(run.id, step.id, Outcome.ROLLED_BACK, "undone after a failure")
        uncordoned |= step.id == "cordon"
    return uncordoned


def _finish(
    ctx: EngineContext, request: Request, state: State, outcome: str, failed_step: str = ""
) -> State:
    if state is State.CANCELLED:
        ctx.store.update(request.id, outcome=outcome)  # the canceller already set the state
    else:
        moved, before = ctx.store.transition(
            request.id, state, outcome=outcome, failed_step=failed_step
        )
        if not moved:  # another run ended it first: one outcome, one message
            return before or state
    ctx.audit.record(Action(str(state)), "joinops", request, outcome)
    ctx.reporter.emit(Event(request.id, EventKind.STATE, outcome, state=str(state), at=ctx.clock()))
    return state


def _emit(run: Run, kind: EventKind, text: str, step: str, seconds: float = 0.0) -> None:
    run.ctx.reporter.emit(Event(run.id, kind, text, step=step, at=run.ctx.clock(), seconds=seconds))
