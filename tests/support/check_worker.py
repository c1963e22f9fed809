"""The workers' side of the bot's checks, in the test process: a real RQ `SimpleWorker` on the
`joinops-checks` queue only (migrations stay for real `joinops worker` processes), in a thread,
with the test's settings installed as the engine context its jobs use.

RQ's worker installs signal handlers and bounds a job with SIGALRM, which only the main thread
may do: the thread's worker installs none and bounds jobs with a timer. RQ stops a worker by a
signal that interrupts its wait for a job; here `stop()` asks it to stop and queues `leave`, a
job that does nothing, on a queue of this worker's own (a `joinops worker` process of the same
test also takes checks: it must not take the leave), so the wait ends at once. A worker whose
Redis went away (tests that stop Redis) waits for it as `joinops worker` does, a second at a
time rather than up to a minute.
"""

from __future__ import annotations

import itertools
import threading

import redis
from rq import Queue, SimpleWorker
from rq.timeouts import TimerDeathPenalty

from joinops.asking import checks_queue
from joinops.settings import Settings
from workers import context
from workers.context import EngineContext

IDLE = 5  # seconds a worker waits for a job before it ends (and, unless stopped, is renewed)
STOP_WAIT = 60  # seconds `stop()` waits for the thread to end: its job's end, on a busy machine
_names = itertools.count(1)


def leave() -> None:
    """A job that does nothing: it lets a stopping check worker out of its wait for a job."""


class _ThreadWorker(SimpleWorker):
    death_penalty_class = TimerDeathPenalty  # a job's timeout by a timer, not SIGALRM
    max_connection_wait_time = 1.0  # Redis back after a test's outage: working within a second

    def _install_signal_handlers(self) -> None:
        """Not in a thread: `CheckWorker.stop` stops this worker, not a signal."""

    def subscribe(self) -> None:
        """No channel for RQ's remote commands (nothing sends them here): its listening thread
        outlived a Redis that a test had stopped, retrying and logging into later tests'
        output (a CI run failed tests/cli/test_redis_down.py on that traceback)."""


class CheckWorker:
    def __init__(self, settings: Settings) -> None:
        context.install(EngineContext.from_settings(settings))
        self._redis = redis.Redis.from_url(settings.secrets.redis_url)
        self._stopping = threading.Event()
        self._worker: _ThreadWorker | None = None
        self._lock = threading.Lock()
        self._leave = Queue(f"test-checks-leave-{next(_names)}", connection=self._redis)
        self._thread = threading.Thread(target=self._run, name="test-checks", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._stopping.is_set():
                    return
                self._worker = worker = _ThreadWorker(
                    [checks_queue(self._redis), self._leave],
                    connection=self._redis,
                    name=f"test-checks-{next(_names)}",
                )
            try:
                worker.work(logging_level="WARNING", max_idle_time=IDLE)
            except redis.RedisError:
                pass  # its Redis went away: the next worker waits for it
            self._stopping.wait(0.05)

    def stop(self) -> None:
        with self._lock:
            self._stopping.set()
            if self._worker is not None:
                self._worker._stop_requested = True
        try:
            self._leave.enqueue(leave, result_ttl=0, failure_ttl=60)
        except redis.RedisError:
            pass  # no Redis, no wait for a job: the worker is ending by itself
        self._thread.join(STOP_WAIT)
        context.install(None)
        self._redis.close()
