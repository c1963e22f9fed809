"""Cluster work the bot asks the workers to do, and waits for: the bot reads no cluster itself.

A `/join` is parsed and acknowledged by the bot; the rule check (and a batch's planning, a
node's lookup, the cluster survey, an Ignition cluster's facts) runs as a job on the
`joinops-checks` queue, which every `joinops worker` takes before its migrations. The bot
enqueues the job by name (it never imports the workers) and blocks one of its work threads on
the job's result stream (RQ's `latest_result`: a blocking XREAD, no CPU while it waits) for at
most `timeouts.check`. The job answers with an `Answer`: the domain result, or the refusal of a
bad name or configuration that the bot then handles as if it had met it itself.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis
from rq import Queue
from rq.job import Job
from rq.results import Result

from joinops.errors import ConfigError, NoWorkerAnswered, UsageError, WorkerFailed

CHECKS_QUEUE = "joinops-checks"
CHECK_MOVE = "workers.asked.check_move"
LOCATE = "workers.asked.locate"
PLAN_NODES = "workers.asked.plan_nodes"
PLAN_ALL = "workers.asked.plan_all"
SURVEY = "workers.asked.survey"
IGNITION_REFUSALS = "workers.asked.ignition_refusals"
KEEP_RESULT = 60  # seconds an answer is kept after it was made (the bot reads it at once)
WAIT_SLICE = 2  # seconds of one blocking read of the result stream


@dataclass(frozen=True)
class Answer:
    """What a worker sends back: the value, or the refusal of a name or the configuration."""

    value: Any = None
    usage: str | None = None  # a UsageError's text
    config: tuple[str, ...] | None = None  # a ConfigError's problems

    @classmethod
    def of(cls, work: Callable[[], Any]) -> Answer:
        """Run `work` on the worker, its refusals kept as values (an exception's pickle would
        not carry them whole)."""
        try:
            return cls(value=work())
        except UsageError as e:
            return cls(usage=str(e))
        except ConfigError as e:
            return cls(config=tuple(e.problems))

    def unwrap(self) -> Any:
        if self.usage is not None:
            raise UsageError(self.usage)
        if self.config is not None:
            raise ConfigError(list(self.config))
        return self.value


def _wait_for_result(job: Job, seconds: int) -> Result | None:
    """The job's result, waited for up to `seconds` in blocking reads of `WAIT_SLICE` seconds
    each: a client's socket timeout (redis-py's default is 5 s) would end one long read with a
    timeout error that is no outage."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        result = job.latest_result(timeout=min(WAIT_SLICE, max(1, math.ceil(left))))
        if result is not None:
            return result
    return None


def checks_queue(connection: redis.Redis) -> Queue:
    return Queue(CHECKS_QUEUE, connection=connection)


def ask_a_worker(connection: redis.Redis, function: str, *args: Any, timeout: float) -> Any:
    """Run `function` (a name under `workers.asked`) on a worker and return its value. Raises
    NoWorkerAnswered when no worker answered within `timeout` (the job is withdrawn),
    WorkerFailed when the job broke, UsageError or ConfigError as the worker met them."""
    seconds = max(1, math.ceil(timeout))
    queue = checks_queue(connection)
    job = queue.create_job(
        function,
        args=args,
        ttl=seconds,  # not started by then: discarded, nobody waits for it any more
        timeout=seconds,
        result_ttl=KEEP_RESULT,
        failure_ttl=KEEP_RESULT,
    )
    # saved and queued in one round trip, without MULTI/EXEC (a quarter of the enqueue's CPU)
    with connection.pipeline(transaction=False) as pipe:
        queue.enqueue_job(job, pipeline=pipe)
        pipe.execute()
    result = _wait_for_result(job, seconds)
    if result is None:
        queue.remove(job.id)  # not taken by now: no worker will (a late one would find it gone)
        raise NoWorkerAnswered(seconds)
    if result.type is not Result.Type.SUCCESSFUL:
        raise WorkerFailed(function, (result.exc_string or "").strip().splitlines()[-1:])
    answer = result.return_value
    assert isinstance(answer, Answer), f"{function} answered {type(answer).__name__}"
    return answer.unwrap()
