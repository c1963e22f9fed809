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
from dataclasses import dataclass

from joinops import parallelism
from joinops.queue import enqueue_migration
from joinops.requests import outcome_texts
from joinops.requests.events import Event, EventKind
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.requests.store import Request
from workers import context
from workers.context import EngineContext
from workers.locks import node_lock

log = logging.getLogger(__name__)
ACTIVE = (State.APPROVED, State.RUNNING)
AGAIN_SECONDS = 300  # a look asked for and not taken by then is the recovery loop's to take


def advance(batch_id: str) -> str:
    """One look at the batch, by whichever worker gets the lock; a worker that does not get it
    leaves its look to the holder (the `again` flag) instead of waiting: every child's end asks
    for a look, and a worker waiting for a lock runs nothing."""
    ctx = context.current()
    again = f"joinops:batch-again:{batch_id}"
    ctx.redis.set(again, "1", ex=AGAIN_SECONDS)
    lock = ctx.redis.lock(f"joinops:batch-lock:{batch_id}", timeout=60)
    result = "looked at by another worker"
    # The flag is cleared before each look and read after the lock is released: a change
    # flagged during a look (or while the lock was held) gets one more look.
    while ctx.redis.exists(again):
        if not lock.acquire(blocking=False):
            return result  # the holder looks again once it has released the lock
        try:
            ctx.redis.delete(again)
            result = advance_locked(ctx, batch_id)
        finally:
            lock.release()
    return result


# What a look reads of each child (every child's end reads every child: not whole records)
LOOKED_AT = (
    "node",
    "source",
    "target",
    "role",
    "state",
    "outcome",
    "from_control_plane",
    "x:after",
)


def children(ctx: EngineContext, batch: Request, fields: tuple[str, ...] = ()) -> list[Request]:
    """The batch's children; with `fields`, only those of each are read (and the id)."""
    ids = [i for i in batch.extra.get("children", "").split(",") if i]
    return [c for c in ctx.store.get_many(ids, fields) if c is not None]


def width(ctx: EngineContext, batch: Request) -> int:
    """How many children may run at once: the number the batch was planned with (its message
    says it), else chosen now and stored (a batch planned before it was recorded)."""
    planned = parallelism.stored(batch.extra)
    if planned is None:
        planned = parallelism.for_new_batch(ctx.settings, ctx.redis)
        ctx.store.update(batch.id, **{"x:" + parallelism.STORED: planned})
    return planned


def advance_locked(ctx: EngineContext, batch_id: str) -> str:
    batch = ctx.store.get(batch_id)
    if batch is None or batch.state not in ACTIVE:
        return "not active"
    if batch.state is State.APPROVED:
        ctx.store.transition(batch_id, State.RUNNING)
    most = width(ctx, batch)
    kids = children(ctx, batch, LOOKED_AT)
    looks = _Looks.of(ctx, kids)
    by_node = {c.node: c for c in kids}
    _report_new_outcomes(ctx, batch, kids, looks)
    running = [c for c in kids if c.state is State.RUNNING or looks.busy(c)]
    held = False
    for child in kids:
        if child.state is not State.APPROVED or child.id in looks.queued:
            continue
        blocker = _failed_dependency(child, by_node)
        if blocker is not None:
            held |= _hold(ctx, child, blocker)
            continue
        if not _may_start(child, by_node, running, most):
            continue
        ctx.redis.set(_queued_key(child.id), "1")
        enqueue_migration(ctx.redis, ctx.settings, child.id)
        running.append(child)
    if held:  # the children held are ended now
        kids = children(ctx, batch, LOOKED_AT)
        looks = _Looks.of(ctx, kids)
        _report_new_outcomes(ctx, batch, kids, looks)
    if all(looks.ended(c) for c in kids):
        _finish(ctx, batch, kids)
        return "finished"
    return f"{len(running)} running"


def _queued_key(child_id: str) -> str:
    return f"joinops:batch-queued:{child_id}"


@dataclass(frozen=True)
class _Looks:
    """What one look reads besides the children's records, in one round trip each: which
    approved children are queued, which cancelled ones are still being put back."""

    queued: frozenset[str]
    rolling_back: frozenset[str]

    @classmethod
    def of(cls, ctx: EngineContext, kids: list[Request]) -> _Looks:
        approved = [c.id for c in kids if c.state is State.APPROVED]
        # Cancelled while it ran: its worker is still putting the node back (it sets the
        # outcome when done, then releases the node lock; a dead worker's lock expires).
        cancelled = [c.node for c in kids if c.state is State.CANCELLED and not c.outcome]
        with ctx.redis.pipeline(transaction=False) as pipe:
            for child_id in approved:
                pipe.exists(_queued_key(child_id))
            for node in cancelled:
                pipe.exists(node_lock(node))
            found = pipe.execute()
        queued = {i for i, yes in zip(approved, found[: len(approved)], strict=True) if yes}
        held = {n for n, yes in zip(cancelled, found[len(approved) :], strict=True) if yes}
        rolling = {c.id for c in kids if c.state is State.CANCELLED and c.node in held}
        return cls(frozenset(queued), frozenset(rolling))

    def busy(self, child: Request) -> bool:
        return child.id in self.queued or child.id in self.rolling_back

    def ended(self, child: Request) -> bool:
        return child.state.is_terminal and child.id not in self.rolling_back


def _after(child: Request) -> list[str]:
    return [n for n in child.extra.get("after", "").split(",") if n]


def _failed_dependency(child: Request, by_node: dict[str, Request]) -> Request | None:
    for node in _after(child):
        dep = by_node.get(node)
        if dep is not None and dep.state.is_terminal and dep.state is not State.SUCCEEDED:
            return dep
    return None


def _may_start(
    child: Request, by_node: dict[str, Request], running: list[Request], most: int
) -> bool:
    if any(by_node[n].state is not State.SUCCEEDED for n in _after(child) if n in by_node):
        return False
    if len(running) >= most:
        return False
    if child.role is Role.CONTROL_PLANE and any(
        r.role is Role.CONTROL_PLANE and r.target == child.target for r in running
    ):
        return False
    return not (
        child.from_control_plane
        and any(r.from_control_plane and r.source == child.source for r in running)
    )


def _hold(ctx: EngineContext, child: Request, blocker: Request) -> bool:
    text = outcome_texts.held(child.node, blocker.node, str(blocker.state))
    moved, _ = ctx.store.transition(child.id, State.CANCELLED, outcome=text)
    if moved:
        ctx.reporter.emit(
            Event(child.id, EventKind.STATE, text, state=str(State.CANCELLED), at=ctx.clock())
        )
    return moved


def _report_new_outcomes(
    ctx: EngineContext, batch: Request, kids: list[Request], looks: _Looks
) -> None:
    """One line per node outcome on the batch's own stream (its Slack thread), once each (the
    set's SADD decides; its members, read first, spare a command per child told already)."""
    key = f"joinops:batch-reported:{batch.id}"
    told = {m.decode() if isinstance(m, bytes) else str(m) for m in ctx.redis.smembers(key)}
    for child in kids:
        if looks.ended(child) and child.id not in told and ctx.redis.sadd(key, child.id):
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
