"""A parked step's re-check is enqueued once when due, ahead of new work, by whichever worker
sweeps first; and it comes sooner while the wait is young."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from joinops.queue import (
    MIGRATE,
    RECHECKS,
    enqueue_due_rechecks,
    enqueue_migration,
    queue,
    schedule_recheck,
)
from joinops.requests.model import Role
from joinops.requests.store import Request
from workers.run import Run
from workers.waits import FIRST_LOOK, next_look


def test_racing_sweeps_enqueue_each_due_recheck_once_and_ahead_of_new_work(make_ctx):
    ctx = make_ctx()
    assert enqueue_migration(ctx.redis, ctx.settings, "req-0000new1")  # new work, queued first
    for request_id in ("req-0000aaa1", "req-0000bbb2"):
        schedule_recheck(ctx.redis, request_id, 0)
    schedule_recheck(ctx.redis, "req-0000ccc3", 3600)
    with ThreadPoolExecutor(4) as sweepers:
        sweeps = list(sweepers.map(lambda _: enqueue_due_rechecks(ctx.redis, ctx.settings), "abcd"))
    enqueued = sorted(job_id for ids in sweeps for job_id in ids)
    assert enqueued == ["req-0000aaa1-recheck-1", "req-0000bbb2-recheck-1"]
    jobs = queue(ctx.redis).get_jobs()
    assert [j.id for j in jobs][-1] == "req-0000new1"  # the re-checks went before it
    assert {j.func_name for j in jobs} == {MIGRATE}
    assert RECHECKS.due_at(ctx.redis, "req-0000ccc3/1") is not None  # not due: still waits


def test_a_young_wait_is_looked_at_soon_and_a_long_one_once_a_recheck(make_ctx):
    ctx = make_ctx(timeouts={"recheck": "1s"})
    request = Request(id="req-0000aaa1", node="n", source="a", target="b", role=Role.WORKER)
    now = time.time()

    def look_after(waited: float) -> float:
        return next_look(Run(ctx, request, park=True, step_started=now - waited))

    assert look_after(0.1) == FIRST_LOOK
    assert 0.49 <= look_after(2.0) <= 0.51
    assert look_after(60.0) == 1.0
