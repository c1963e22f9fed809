"""Finding requests that a dead worker left behind, and resuming them.

A running job always holds its node lock and renews it; so a request that is `running` while
its node lock is free has lost its worker. An `approved` request with no job waiting has lost its
job. Both are enqueued again; the rerun skips the steps that already succeeded.
"""

from __future__ import annotations

import logging
import threading

from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from joinops.lifecycle import State
from joinops.queue import replace_abandoned_job
from workers.context import EngineContext
from workers.locks import holder_of, node_lock

log = logging.getLogger(__name__)
LIVE_JOB = (JobStatus.QUEUED, JobStatus.STARTED, JobStatus.SCHEDULED, JobStatus.DEFERRED)


def orphans(ctx: EngineContext) -> list[str]:
    found = []
    for request in ctx.store.active():
        if request.kind != "migrate":
            continue
        if (
            request.state is State.RUNNING and holder_of(ctx.redis, node_lock(request.node)) is None
        ) or (request.state is State.APPROVED and not _job_alive(ctx, request.id)):
            found.append(request.id)
    return found


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


class RecoveryLoop:
    """Looks for orphans every `interval` seconds in a daemon thread."""

    def __init__(self, ctx: EngineContext, interval: float) -> None:
        self.ctx, self.interval = ctx, interval
        self._stop = threading.Event()

    def start(self) -> None:
        threading.Thread(target=self._loop, name="joinops-recovery", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                resume_orphans(self.ctx)
            except Exception:  # a Redis hiccup must not end the loop
                log.exception("recovery pass failed")
