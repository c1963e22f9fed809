"""The post-ack process's side of the stream: `/join` jobs taken and run, one per free thread.

Every replica's post-ack process is one consumer of the group `joinops-post-ack` on the stream
the acks push to (bot/post_ack.py), named after its host and pid, so a job pushed by any replica
is run by whichever has a thread free first. Entries are read only when a thread is free
(`XREADGROUP COUNT free`): a job taken is a job started. Once it is done (its answers are the
work's own business), its entry is acknowledged and deleted.

A stopping replica loses nothing: `stop()` takes no more jobs and waits for the running ones (up
to its timeout); what it never took stays in the stream for the other replicas. A replica that
died instead leaves its running jobs pending: while a job runs its entry's idle time is reset
every `HEARTBEAT` seconds, so an entry idle for `STALE_MS` is a dead replica's, and another
takes it (`XAUTOCLAIM`). A job that had not started then is run. One that had started (its mark
is in Redis) may have posted its request message already: it is not run again, which could post
it twice — the person is told it was interrupted and what to look at (`interrupted`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import redis

from bot.post_ack import FIELD, STREAM, PostAckJob

log = logging.getLogger(__name__)

GROUP = "joinops-post-ack"
STARTED = "joinops:bot:post-ack:started:"  # + entry id: the job began on some replica
STARTED_TTL = 24 * 3600
STALE_MS = 30_000  # an entry idle this long belongs to a replica that died
HEARTBEAT = 5.0  # seconds between two resets of the running jobs' idle time
Work = Callable[[PostAckJob], None]


class PostAckRunner:
    def __init__(
        self,
        client: redis.Redis,
        run: Work,
        interrupted: Work,
        *,
        consumer: str,
        threads: int,
        block_ms: int = 1000,
        stale_ms: int = STALE_MS,
    ) -> None:
        self.redis, self.run, self.interrupted = client, run, interrupted
        self.consumer, self.threads = consumer, threads
        self.block_ms, self.stale_ms = block_ms, stale_ms
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="joinops-post-ack")
        self._running: set[str] = set()  # entry ids being worked on
        self._unfinished: list[str] = []  # done, but Redis did not take the acknowledgement
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="joinops-post-ack", daemon=True)

    # ---- running ---------------------------------------------------------------------------

    def start(self) -> PostAckRunner:
        self.ensure_group()
        self._thread.start()
        return self

    def ensure_group(self) -> None:
        try:
            self.redis.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
        except redis.ResponseError as e:
            if "BUSYGROUP" not in str(e):
                raise

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    @property
    def running(self) -> int:
        with self._cond:
            return len(self._running)

    def stop(self, timeout: float) -> bool:
        """Take no more jobs; wait up to `timeout` s for the running ones. False if some were
        still running then (their entries stay pending: another replica answers for them)."""
        self._stop.set()
        self._thread.join()
        with self._cond:
            finished = self._cond.wait_for(lambda: not self._running, timeout)
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._finish_unfinished()
        if finished and not self._unfinished:
            try:  # nothing of ours is pending: the group forgets this consumer
                self.redis.xgroup_delconsumer(STREAM, GROUP, self.consumer)
            except redis.RedisError as e:
                log.warning("post-ack: could not leave the group: %s", e)
        return finished

    def _loop(self) -> None:
        last_beat = last_claim = time.monotonic()
        store_down = False
        while not self._stop.is_set():
            try:
                free = self._wait_free()
                self._finish_unfinished()
                if time.monotonic() - last_beat > min(HEARTBEAT, self.stale_ms / 3000):
                    last_beat = time.monotonic()
                    self._heartbeat()
                if free == 0:
                    continue  # every thread busy (or stopping)
                if time.monotonic() - last_claim > self.stale_ms / 2000:
                    last_claim = time.monotonic()
                    if self._take_stale(free):
                        continue
                self._take_new(free)
                if store_down:
                    store_down = False
                    log.info("post-ack: the state store answers again")
            except (redis.ConnectionError, redis.TimeoutError) as e:
                if not store_down:
                    store_down = True
                    log.warning("post-ack: the state store is unreachable (%s); waiting", e)
                self._stop.wait(1.0)
            except redis.ResponseError as e:
                if "NOGROUP" in str(e):  # the stream or group was deleted under us
                    self.ensure_group()
                else:
                    log.exception("post-ack: Redis refused a command")
                    self._stop.wait(1.0)
            except Exception:  # the loop lives on; the next pass tries again
                log.exception("post-ack: a pass failed")
                self._stop.wait(1.0)

    def _wait_free(self) -> int:
        with self._cond:
            self._cond.wait_for(lambda: len(self._running) < self.threads, 1.0)
            return 0 if self._stop.is_set() else self.threads - len(self._running)

    # ---- taking ----------------------------------------------------------------------------

    def _take_new(self, free: int) -> None:
        found = self.redis.xreadgroup(
            GROUP, self.consumer, {STREAM: ">"}, count=free, block=self.block_ms
        )
        self._take([(_s(i), fields) for _, entries in found or [] for i, fields in entries])

    def _take_stale(self, free: int) -> bool:
        """A dead replica's jobs become ours; True if there were any."""
        _, entries, *_ = self.redis.xautoclaim(
            STREAM, GROUP, self.consumer, min_idle_time=self.stale_ms, count=free
        )
        with self._cond:
            ours = set(self._running)  # running here: its heartbeat came late, it is not dead
        taken = [(_s(i), fields) for i, fields in entries or [] if _s(i) not in ours]
        for entry_id, _ in taken:
            log.info("post-ack: took over entry %s of a replica that stopped", entry_id)
        self._take(taken)
        return bool(taken)

    def _take(self, entries: list[tuple[str, dict[bytes, bytes] | None]]) -> None:
        """Each entry's job onto a thread: run, or answered as interrupted when it had begun
        before (on a replica that stopped). The marks that say a job began are set for all the
        entries in one round trip (a burst's first read takes one entry per free thread)."""
        jobs = []
        for entry_id, fields in entries:
            try:
                jobs.append(
                    (entry_id, PostAckJob.from_json((fields or {}).get(FIELD.encode()) or b""))
                )
            except ValueError as e:
                log.warning("post-ack: entry %s skipped: %s", entry_id, e)
                self._finish(entry_id)
        if not jobs:
            return
        with self.redis.pipeline(transaction=False) as pipe:
            for entry_id, _ in jobs:
                pipe.set(STARTED + entry_id, self.consumer, nx=True, ex=STARTED_TTL)
            firsts = pipe.execute()
        for (entry_id, job), first in zip(jobs, firsts, strict=True):
            with self._cond:
                self._running.add(entry_id)
            self._pool.submit(self._work, entry_id, job, self.run if first else self.interrupted)

    def _work(self, entry_id: str, job: PostAckJob, work: Work) -> None:
        try:
            work(job)
        except Exception:  # the work answers its own failures; this is a bug in the answering
            log.exception("post-ack: the job of entry %s failed", entry_id)
        finally:
            try:
                self._finish(entry_id)
            except redis.RedisError as e:
                log.warning("post-ack: entry %s done, not yet acknowledged: %s", entry_id, e)
                with self._cond:
                    self._unfinished.append(entry_id)
            with self._cond:
                self._running.discard(entry_id)
                self._cond.notify_all()

    def _finish(self, entry_id: str) -> None:
        """Acknowledged, deleted, its mark gone: one round trip, without MULTI/EXEC (an entry
        acknowledged is no replica's any more, whatever happens to the other two)."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.xack(STREAM, GROUP, entry_id)
            pipe.xdel(STREAM, entry_id)
            pipe.delete(STARTED + entry_id)
            pipe.execute()

    def _finish_unfinished(self) -> None:
        with self._cond:
            waiting, self._unfinished = self._unfinished, []
        for number, entry_id in enumerate(waiting):
            try:
                self._finish(entry_id)
            except redis.RedisError:
                with self._cond:
                    self._unfinished.extend(waiting[number:])
                return

    def _heartbeat(self) -> None:
        """The running jobs' entries are not idle: no other replica takes them."""
        with self._cond:
            ids = sorted(self._running)
        if ids:
            self.redis.xclaim(STREAM, GROUP, self.consumer, 0, ids, justid=True)


def _s(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
