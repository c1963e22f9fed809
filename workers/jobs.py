"""RQ job entry points, imported by name (see `joinops.queue`)."""

from __future__ import annotations

from joinops.queue import enqueue_batch_advance
from workers import context, loans
from workers.context import EngineContext
from workers.expiry import expire
from workers.runner import run_request


def run_migration(request_id: str) -> str:
    ctx = context.current()
    state = run_request(ctx, request_id, park=True)
    loans.after_run(ctx, request_id)
    _advance_batch(ctx, request_id)
    return str(state) if state else "missing"


def _advance_batch(ctx: EngineContext, request_id: str) -> None:
    """A batch child that ended lets its batch start the next child (or end) now, rather than
    at the recovery loop's next pass (every `timeouts.lock / 2`, 30 s by default)."""
    request = ctx.store.get(request_id)
    if request is not None and request.parent and request.state.is_terminal:
        enqueue_batch_advance(ctx.redis, request.parent)


def expire_request(request_id: str) -> str:
    """An expiry scheduled as an RQ job by an earlier version (now `workers.expiry`)."""
    return expire(context.current(), request_id)
