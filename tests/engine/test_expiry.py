"""Requests nobody decided on expire once, by whichever worker sweeps first, and not before
their (possibly moved) deadline."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from joinops.requests.audit import Action
from joinops.requests.expiries import deadline_of
from joinops.requests.lifecycle import State
from joinops.requests.store import Request
from tests.support.engine import stored_request
from workers.expiry import sweep


def _pending(ctx, expires_at: float) -> Request:  # type: ignore[no-untyped-def]
    """A request waiting for approval: `create` records its deadline with it."""
    return stored_request(ctx.store, expires_at=expires_at)


def test_racing_sweeps_expire_each_due_request_once_and_leave_the_others(make_ctx):
    ctx = make_ctx()
    now = time.time()
    due = [_pending(ctx, now - 1) for _ in range(30)]
    later = _pending(ctx, now + 3600)
    with ThreadPoolExecutor(4) as sweepers:
        expired = [i for ids in sweepers.map(lambda _: sweep(ctx), range(4)) for i in ids]
    assert sorted(expired) == sorted(r.id for r in due)
    assert {ctx.store.get(r.id).state for r in due} == {State.EXPIRED}
    audited = [e.request_id for e in ctx.audit.entries() if e.action == str(Action.EXPIRED)]
    assert sorted(audited) == sorted(expired)
    assert ctx.store.get(later.id).state is State.PENDING
    assert deadline_of(ctx.redis, later.id) == later.expires_at


def test_a_deadline_moved_later_is_kept_and_a_decided_request_is_let_go(make_ctx):
    ctx = make_ctx()
    now = time.time()
    moved = _pending(ctx, now - 1)
    ctx.store.update(moved.id, expires_at=now + 3600)  # asked again: a later deadline
    approved = _pending(ctx, now - 1)
    assert ctx.store.transition(approved.id, State.APPROVED)[0]
    assert sweep(ctx) == []
    assert ctx.store.get(moved.id).state is State.PENDING
    assert deadline_of(ctx.redis, moved.id) == now + 3600
    assert ctx.store.get(approved.id).state is State.APPROVED
    assert deadline_of(ctx.redis, approved.id) is None
