"""The loan's two timed jobs, on RQ's scheduler (`enqueue_at`; the worker runs the scheduler).

Each is enqueued for one generation of the loan: after an extension or a Return now, the jobs of
the older generation find a newer one and do nothing. RQ runs a scheduled job at most once, but
a worker killed around that moment loses it: the workers' sweep (`workers.loans.sweep`) finds
every reminder and return that is due and was not carried out, so none is lost either.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

import redis
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from joinops.loans.model import Loan
from joinops.queue import queue

REMIND = "workers.loans.remind"
RETURN = "workers.loans.return_due"


def schedule(connection: redis.Redis, loan: Loan) -> None:
    """The reminder and the return of the loan's current generation."""
    _at(connection, loan.remind_at, REMIND, loan, "remind")
    _at(connection, loan.due_at, RETURN, loan, "return")


def unschedule(connection: redis.Redis, loan_id: str, generation: int) -> None:
    """Drop the jobs of an older generation (they would do nothing; this keeps RQ tidy)."""
    for what in ("remind", "return"):
        try:
            job = Job.fetch(f"loan-{loan_id}-{what}-{generation}", connection=connection)
        except NoSuchJobError:
            continue  # never scheduled, or already run and gone
        if job.get_status(refresh=False) is JobStatus.SCHEDULED:
            queue(connection).scheduled_job_registry.remove(job, delete_job=True)


def return_at_once(connection: redis.Redis, loan: Loan) -> None:
    queue(connection).enqueue(
        RETURN,
        loan.id,
        loan.generation,
        job_id=f"loan-{loan.id}-return-{loan.generation}",
        result_ttl=3600,
        failure_ttl=86400,
        at_front=True,
    )


def _at(connection: redis.Redis, when: float, function: str, loan: Loan, what: str) -> None:
    # RQ keeps schedules in whole seconds (it drops the fraction): rounded up, never before
    # the moment (a job run early would find the loan not due and never come back)
    queue(connection).enqueue_at(
        datetime.fromtimestamp(math.ceil(when), UTC),
        function,
        loan.id,
        loan.generation,
        job_id=f"loan-{loan.id}-{what}-{loan.generation}",
        result_ttl=3600,
        failure_ttl=86400,
    )
