"""Running a batch: start each node's migration when its turn comes.

A batch is a request of kind `batch` whose children are ordinary migrations (kind `migrate`,
`parent` = the batch). `advance()` runs whenever something may have changed — at approval and
each time a child ends — and starts every child that may start now:

- at most `max_parallel` children run at once;
- control-plane joins into one target run one at a time, and so do control-plane removals from
  one source;
- a child starts only once the children it waits for (`after`) have succeeded; if one of them
  did not, the child is not run and its line says why, while the others go on;
- a child cancelled while it ran has ended once its worker has put the node back.
When every child has ended, the batch ends with a summary. No process waits in between.
"""

from __future__ import annotations

import logging

from joinops.queue import enqueue_migration
from joinops.requests import outcome_texts
from joinops.requests.events import Event, EventKind
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.requests.store import Request
from workers import context
from workers.context import EngineContext
from workers.locks import holder_of, node_lock

log = logging.getLogger(__name__)
ACTIVE = (State.APPROVED, State.RUNNING)


def advance(batch_id: str) -> str:
    ctx = context.current()
    lock = ctx.redis.lock(f"joinops:batch-lock:{batch_id}", timeout=60, blocking_timeout=30)
    with lock:
        return advance_locked(ctx, batch_id)


def children(ctx: EngineContext, batch: Request) -> list[Request]:
    ids = [i for i in batch.extra.get("children", "").split(",") if i]
    return [c for c in (ctx.store.get(i) for i in ids) if c is not None]


def advance_locked(ctx: EngineContext, batch_id: str) -> str:
    batch = ctx.store.get(batch_id)
    if batch is None or batch.state not in ACTIVE:
        return "not active"
    if batch.state is State.APPROVED:
        ctx.store.transition(batch_id, State.RUNNING)
    kids = children(ctx, batch)
    by_node = {c.node: c for c in kids}
    _report_new_outcomes(ctx, batch, kids)
    running = [
        c for c in kids if c.state is State.RUNNING or _queued(ctx, c) or _rolling_back(ctx, c)
    ]
    for child in kids:
        if child.state is not State.APPROVED or _queued(ctx, child):
            continue
        blocker = _failed_dependency(child, by_node)
        if blocker is not None:
            _hold(ctx, child, blocker)
            continue
        if not _may_start(ctx, child, by_node, running):
            continue
        ctx.redis.set(_queued_key(child.id), "1")
        enqueue_migration(ctx.redis, ctx.settings, child.id)
        running.append(child)
    kids = children(ctx, batch)
    if all(_ended(ctx, c) for c in kids):
        _report_new_outcomes(ctx, batch, kids)
        _finish(ctx, batch, kids)
        return "finished"
    return f"{len(running)} running"


def _queued_key(child_id: str) -> str:
    return f"joinops:batch-queued:{child_id}"


def _queued(ctx: EngineContext, child: Request) -> bool:
    return child.state is State.APPROVED and bool(ctx.redis.exists(_queued_key(child.id)))


def _rolling_back(ctx: EngineContext, child: Request) -> bool:
    """Cancelled while it ran: its worker is still putting the node back (it sets the outcome
    when done, then releases the node lock; a dead worker's lock expires)."""
    return (
        child.state is State.CANCELLED
        and not child.outcome
        and holder_of(ctx.redis, node_lock(child.node)) is not None
    )


def _ended(ctx: EngineContext, child: Request) -> bool:
    return child.state.is_terminal and not _rolling_back(ctx, child)


def _after(child: Request) -> list[str]:
    return [n for n in child.extra.get("after", "").split(",") if n]


def _failed_dependency(child: Request, by_node: dict[str, Request]) -> Request | None:
    for node in _after(child):
        dep = by_node.get(node)
        if dep is not None and dep.state.is_terminal and dep.state is not State.SUCCEEDED:
            return dep
    return None


def _may_start(
    ctx: EngineContext, child: Request, by_node: dict[str, Request], running: list[Request]
) -> bool:
    if any(by_node[n].state is not State.SUCCEEDED for n in _after(child) if n in by_node):
        return False
    if len(running) >= ctx.settings.max_parallel:
        return False
    if child.role is Role.CONTROL_PLANE and any(
        r.role is Role.CONTROL_PLANE and r.target == child.target for r in running
    ):
        return False
    return not (
        child.from_control_plane
        and any(r.from_control_plane and r.source == child.source for r in running)
    )


def _hold(ctx: EngineContext, child: Request, blocker: Request) -> None:
    text = outcome_texts.held(child.node, blocker.node, str(blocker.state))
    moved, _ = ctx.store.transition(child.id, State.CANCELLED, outcome=text)
    if moved:
        ctx.reporter.emit(
            Event(child.id, EventKind.STATE, text, state=str(State.CANCELLED), at=ctx.clock())
        )


def _report_new_outcomes(ctx: EngineContext, batch: Request, kids: list[Request]) -> None:
    """One line per node outcome on the batch's own stream (its Slack thread), once each."""
    for child in kids:
        if _ended(ctx, child) and ctx.redis.sadd(f"joinops:batch-reported:{batch.id}", child.id):
            ctx.reporter.emit(
                Event(
                    batch.id,
                    EventKind.PROGRESS,
                    outcome_texts.batch_line(child.node, str(child.state), child.outcome),
                    step=child.node,
                    at=ctx.clock(),
                )
            )


def _finish(ctx: EngineContext, batch: Request, kids: list[Request]) -> None:
    moved = sum(c.state is State.SUCCEEDED for c in kids)
    failed = sum(c.state is State.FAILED for c in kids)
    skipped = len(kids) - moved - failed
    summary = outcome_texts.batch_summary(
        moved, failed, skipped, len(kids), ctx.clock() - (batch.decided_at or batch.created_at)
    )
    state = State.SUCCEEDED if moved == len(kids) else State.FAILED
    if ctx.store.transition(batch.id, state, outcome=summary)[0]:
        ctx.reporter.emit(
            Event(batch.id, EventKind.STATE, summary, state=str(state), at=ctx.clock())
        )
