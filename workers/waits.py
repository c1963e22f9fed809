"""Waiting without holding a worker: a step that waits for a cluster (pods to go, the node to
join, mirror pods Ready) watches one slice of `timeouts.recheck` at a time; after a slice, if
other jobs are queued for a worker, it raises `Waiting` and the runner parks the run: the step's
record stays `running`, the locks stay, and a re-check of the same step is enqueued when due
(`joinops.queue.schedule_recheck`), sooner while the wait is young (`next_look`). A run started
in-process (`park=False`) waits inline.
"""

from __future__ import annotations

from joinops.queue import jobs_waiting
from workers.errors import Waiting
from workers.run import Run

FIRST_LOOK = 0.25  # seconds: the soonest a parked step looks again


def slice_end(run: Run, deadline: float) -> float:
    """Until when the step watches before asking whether to give its worker up."""
    if not run.park:
        return deadline
    return min(deadline, run.ctx.clock() + run.ctx.settings.timeouts.recheck.total_seconds())


def give_up_worker_if_needed(run: Run, what: str) -> None:
    """Park the run (raise Waiting) when another job waits for a worker; else go on watching."""
    if others_queued(run):
        give_up_worker(run, what)


def others_queued(run: Run) -> bool:
    """Is another job waiting for a worker (so this run should not keep its one)?"""
    return run.park and jobs_waiting(run.ctx.redis) > 0


def give_up_worker(run: Run, what: str) -> None:
    raise Waiting(what, next_look(run))


def next_look(run: Run) -> float:
    """Seconds until a parked step looks again: a quarter of what it has waited so far, at
    least `FIRST_LOOK` and at most `timeouts.recheck`. A short wait (a simulated join, pods
    with a short grace) is seen about when it ends; a long one is looked at no more often
    than `timeouts.recheck`, as before."""
    waited = max(0.0, run.ctx.clock() - run.step_started)
    longest = run.ctx.settings.timeouts.recheck.total_seconds()
    return min(longest, max(FIRST_LOOK, waited / 4))
