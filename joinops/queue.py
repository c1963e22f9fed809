"""Enqueueing the engine's jobs by name, so that the bot never imports the workers."""

from __future__ import annotations

import heapq
import threading
import time

import redis
from rq import Queue
from rq.exceptions import DuplicateJobError, NoSuchJobError
from rq.job import Job, JobStatus

from joinops.asking import checks_queue
from joinops.dueset import CLAIM_AT_ONCE, DueSet
from joinops.settings import Settings

QUEUE = "joinops"
MIGRATE = "workers.jobs.run_migration"
IGNITION = "workers.ignition.job.generate_ignition"
ADVANCE_BATCH = "workers.batch.advance"
RECHECKS = DueSet("joinops:rechecks")  # "<request id>/<number>", scored by when it is due
RECHECK_LOOK_AT_LEAST = 1.0  # seconds: how long a worker's sweep may go without a look


def queue(connection: redis.Redis) -> Queue:
    return Queue(QUEUE, connection=connection)


def job_timeout(settings: Settings) -> int:
    """Long enough for every bounded wait of a migration, plus margin (RQ's default is 180 s)."""
    t = settings.timeouts
    return int((t.drain + t.join + t.upload_certs * 2 + t.api * 20).total_seconds()) + 300


def enqueue_migration(connection: redis.Redis, settings: Settings, request_id: str) -> bool:
    """Enqueue the request's job (job id = request id). False when it is already queued."""
    return _enqueue_request_job(
        connection, MIGRATE, request_id, job_timeout(settings), f"joinops migration {request_id}"
    )


def ignition_job_timeout(settings: Settings) -> int:
    """An Ignition job reads the cluster, creates a token and may upload certificates."""
    t = settings.timeouts
    return int((t.upload_certs + t.api * 20).total_seconds()) + 120


def enqueue_ignition(connection: redis.Redis, settings: Settings, request_id: str) -> bool:
    """Enqueue an approved ignition request's job (job id = request id); False when queued."""
    return _enqueue_request_job(
        connection,
        IGNITION,
        request_id,
        ignition_job_timeout(settings),
        f"joinops ignition {request_id}",
    )


def _enqueue_request_job(
    connection: redis.Redis, function: str, request_id: str, timeout: int, description: str
) -> bool:
    """One job per request, unique by its id; a finished earlier job makes room first."""
    _drop_finished_job(connection, request_id)
    try:
        queue(connection).enqueue(
            function,
            request_id,
            job_id=request_id,
            unique=True,
            job_timeout=timeout,
            result_ttl=7 * 86400,
            failure_ttl=30 * 86400,
            description=description,
        )
    except DuplicateJobError:
        return False
    return True


def _drop_finished_job(connection: redis.Redis, job_id: str) -> None:
    """A retried request reuses its id: the earlier, finished job must make room."""
    try:
        job = Job.fetch(job_id, connection=connection)
    except NoSuchJobError:
        return
    if job.get_status(refresh=False) in (
        JobStatus.FINISHED,
        JobStatus.FAILED,
        JobStatus.STOPPED,
        JobStatus.CANCELED,
    ):
        job.delete()


def replace_abandoned_job(connection: redis.Redis, settings: Settings, request_id: str) -> bool:
    """Re-enqueue a request whose worker died: its old job record is removed first."""
    try:
        Job.fetch(request_id, connection=connection).delete()
    except NoSuchJobError:
        pass
    return enqueue_migration(connection, settings, request_id)


def schedule_recheck(connection: redis.Redis, request_id: str, seconds: float) -> None:
    """Resume a migration whose step waits, in `seconds`, on whichever worker is free: a due
    set (`RECHECKS`) that every worker sweeps (`sweep_rechecks`), so a re-check is late by a
    tenth of a second where RQ's scheduler (whole seconds, looked at once a second) made it
    late by up to two. Each re-check is a job of its own: the current one is still running
    when it schedules the next."""
    number = connection.incr(f"joinops:rechecks:{request_id}")
    connection.expire(f"joinops:rechecks:{request_id}", 86400)
    at = time.time() + seconds
    RECHECKS.add(connection, f"{request_id}/{number}", at)
    NEXT_LOOKS.scheduled(at)


class NextLooks:
    """When this process's sweep looks in Redis for due re-checks: when one it scheduled
    itself is due, and otherwise at least every `RECHECK_LOOK_AT_LEAST` seconds (for one whose
    process ended before it was due, or a full claim's rest). Each look is a Redis round trip
    and a Lua script: ten a second per worker, looking for nothing most of the time, were
    about 3 % of a worker's CPU in the stitch benchmark."""

    def __init__(self) -> None:
        self._due: list[float] = []  # the due times of the re-checks scheduled here (a heap)
        self._next = 0.0  # the latest time the next look may come
        self._lock = threading.Lock()

    def scheduled(self, at: float) -> None:
        with self._lock:
            heapq.heappush(self._due, at)

    def take(self, now: float) -> bool:
        """Is a look due now? Yes: it is counted as taken."""
        with self._lock:
            own = False
            while self._due and self._due[0] <= now:
                heapq.heappop(self._due)
                own = True
            if not own and now < self._next:
                return False
            self._next = now + RECHECK_LOOK_AT_LEAST
            return True

    def soon(self) -> None:
        """Look again at the next sweep (a claim took all it may take at once)."""
        with self._lock:
            self._next = 0.0


NEXT_LOOKS = NextLooks()


def sweep_rechecks(connection: redis.Redis, settings: Settings) -> list[str]:
    """A worker's sweep, ten times a second: `enqueue_due_rechecks` when a look is due
    (`NextLooks`), else nothing; the job ids enqueued."""
    if not NEXT_LOOKS.take(time.time()):
        return []
    enqueued = enqueue_due_rechecks(connection, settings)
    if len(enqueued) >= CLAIM_AT_ONCE:
        NEXT_LOOKS.soon()
    return enqueued


def enqueue_due_rechecks(connection: redis.Redis, settings: Settings) -> list[str]:
    """Enqueue every re-check that is due, before new work (a re-check is a glance, and its
    parked locks must not lapse); the job ids enqueued."""
    enqueued = []
    for member in RECHECKS.claim_due(connection, time.time()):
        request_id, _, number = member.rpartition("/")
        job = queue(connection).enqueue(
            MIGRATE,
            request_id,
            job_id=f"{request_id}-recheck-{number}",
            job_timeout=job_timeout(settings),
            result_ttl=60,
            failure_ttl=30 * 86400,
            description=f"joinops migration {request_id} (re-check {number})",
            at_front=True,
        )
        enqueued.append(job.id)
    return enqueued


def jobs_waiting(connection: redis.Redis) -> int:
    """Jobs queued for a free worker now — migrations' and the bot's checks: a waiting step
    gives its worker up when there are."""
    return int(queue(connection).count) + int(checks_queue(connection).count)


def enqueue_batch_advance(connection: redis.Redis, batch_id: str) -> None:
    """Ask a worker to start whatever a batch can start now (cheap; safe to ask twice)."""
    queue(connection).enqueue(
        ADVANCE_BATCH, batch_id, result_ttl=600, failure_ttl=86400, job_timeout=300, at_front=True
    )
