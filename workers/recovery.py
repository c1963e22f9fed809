"""Finding requests that a dead worker left behind, and resuming them.

A running job always holds its node lock and renews it; so a request that is `running` while
its node lock is free has lost its worker. An `approved` request with no job waiting has lost its
job. Both are enqueued again; the rerun skips the steps that already succeeded.
"""

from __future__ import annotations

import logging

from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from joinops.queue import enqueue_batch_advance, replace_abandoned_job
from joinops.requests.lifecycle import State
from joinops.requests.store import Request
from workers import loans
from workers.context import EngineContext
from workers.locks import holder_of, node_lock

log = logging.getLogger(__name__)
LIVE_JOB = (JobStatus.QUEUED, JobStatus.STARTED, JobStatus.SCHEDULED, JobStatus.DEFERRED)


def orphans(ctx: EngineContext) -> list[str]:
    found = []
    for request in ctx.store.active():
        if request.kind != "migrate":
            continue
        lock_free = holder_of(ctx.redis, node_lock(request.node)) is None
        if (request.state is State.RUNNING and lock_free) or (
            request.state is State.APPROVED and _awaits_a_job(ctx, request)
        ):
            found.append(request.id)
    return found


def _awaits_a_job(ctx: EngineContext, request: Request) -> bool:
    """Approved, meant to be queued, and no job is alive for it."""
    if request.parent and not ctx.redis.exists(f"joinops:batch-queued:{request.id}"):
        return False  # a batch child waiting for its turn: the batch starts it
    return not _job_alive(ctx, request.id)


def nudge_batches(ctx: EngineContext) -> None:
    """Ask every active batch to advance, in case a child's end was missed."""
    for request in ctx.store.active():
        if request.kind == "batch" and request.state in (State.APPROVED, State.RUNNING):
            enqueue_batch_advance(ctx.redis, request.id)


def resume_orphans(ctx: EngineContext) -> list[str]:
    resumed = []
    for request_id in orphans(ctx):
        # One recoverer per request at a time, across all workers.
        if not ctx.redis.set(f"joinops:recovering:{request_id}", "1", nx=True, ex=30):
            continue
        if replace_abandoned_job(ctx.redis, ctx.settings, request_id):
            log.info("request %s: enqueued again after its worker stopped", request_id)
            resumed.append(request_id)
    return resumed


def _job_alive(ctx: EngineContext, request_id: str) -> bool:
    try:
        job = Job.fetch(request_id, connection=ctx.redis)
    except NoSuchJobError:
        return False
    return job.get_status(refresh=False) in LIVE_JOB


def recovery_pass(ctx: EngineContext) -> None:
    """One look for what dead workers and missed events left: orphaned requests, batches that
    did not advance, loans due."""
    resume_orphans(ctx)
    nudge_batches(ctx)
    loans.sweep(ctx)
