"""Waiting without holding a worker: a step that waits for a cluster (pods to go, the node to
join, mirror pods Ready) watches one slice of `timeouts.recheck` at a time; after a slice, if
other jobs are queued for a worker, it raises `Waiting` and the runner parks the run: the step's
record stays `running`, the locks stay, and RQ's scheduler enqueues a re-check of the same step
(`joinops.queue.schedule_recheck`). A run started in-process (`park=False`) waits inline.
"""

from __future__ import annotations

from joinops.queue import jobs_waiting
from workers.errors import Waiting
from workers.run import Run


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
    raise Waiting(what, run.ctx.settings.timeouts.recheck.total_seconds())
