"""A worker's sweep for due re-checks looks in Redis when one it scheduled itself is due, and
otherwise once a second (for those of a worker that ended before they were due): ten looks a
second, mostly for nothing, cost a worker about 3 % of its CPU (issue 34)."""

from __future__ import annotations

from joinops.queue import (
    RECHECK_LOOK_AT_LEAST,
    RECHECKS,
    NextLooks,
    schedule_recheck,
    sweep_rechecks,
)


def test_a_sweep_looks_when_its_own_recheck_is_due_and_at_least_once_a_second():
    looks = NextLooks()
    assert looks.take(100.0)  # the first sweep looks
    assert not looks.take(100.1)  # nothing of its own due: not before a second has passed
    looks.scheduled(100.5)
    assert not looks.take(100.4)
    assert looks.take(100.5)  # its own re-check is due
    assert not looks.take(100.6)
    assert looks.take(100.5 + RECHECK_LOOK_AT_LEAST)  # another worker's, left behind
    looks.soon()  # a claim took all it may take at once: the rest at the next sweep
    assert looks.take(101.6)


def test_a_recheck_scheduled_here_is_enqueued_by_the_next_sweep_with_anything_else_due(
    make_ctx,
):  # type: ignore[no-untyped-def]
    ctx = make_ctx()
    RECHECKS.add(ctx.redis, "req-0000aaa1/1", 0.0)  # a worker that ended scheduled it
    schedule_recheck(ctx.redis, "req-0000bbb2", 0)
    enqueued = sweep_rechecks(ctx.redis, ctx.settings)
    assert sorted(enqueued) == ["req-0000aaa1-recheck-1", "req-0000bbb2-recheck-1"]
