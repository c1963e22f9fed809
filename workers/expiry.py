"""Expiring the requests nobody decided on in time (`joinops.requests.expiries` holds their
deadlines).

`sweep` claims the due deadlines (each second, in `joinops worker`); a claimed one whose
request is no longer waiting, or whose deadline moved later, is let go or put back.
"""

from __future__ import annotations

from joinops.requests.audit import Action
from joinops.requests.events import Event, EventKind
from joinops.requests.expiries import claim_due, schedule_expiry
from joinops.requests.lifecycle import State
from joinops.requests.store import Request
from workers.context import EngineContext

SWEEP_SECONDS = 1.0  # how often `joinops worker` sweeps the deadlines


def expire(ctx: EngineContext, request_id: str) -> str:
    """A pending request that nobody approved in time expires: it will not run."""
    request = ctx.store.get(request_id)
    if request is None or ctx.clock() < request.expires_at:
        return "not due"
    return _expire(ctx, request)


def _expire(ctx: EngineContext, request: Request) -> str:
    """`request`, due, expires unless someone decided on it first."""
    request_id = request.id
    moved, _ = ctx.store.transition(
        request_id, State.EXPIRED, outcome="expired, not run", decided_at=ctx.clock()
    )
    if moved:
        ctx.audit.record(Action.EXPIRED, "joinops", request, "nobody approved it in time")
        ctx.reporter.emit(
            Event(
                request_id,
                EventKind.STATE,
                "expired, not run",
                state=str(State.EXPIRED),
                at=ctx.clock(),
            )
        )
    return "expired" if moved else "already decided"


def sweep(ctx: EngineContext) -> list[str]:
    """Expire every request whose deadline has come; the ids expired."""
    expired = []
    for request_id in claim_due(ctx.redis, ctx.clock()):
        request = ctx.store.get(request_id)
        if request is None:
            continue
        if ctx.clock() < request.expires_at:
            if request.state is State.PENDING:
                schedule_expiry(ctx.redis, request_id, request.expires_at)  # moved later
        elif _expire(ctx, request) == "expired":
            expired.append(request_id)
    return expired
