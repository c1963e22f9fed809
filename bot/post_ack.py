"""The work after a `/join`'s ack, as data: what the acking process hands on, and how.

A `PostAckJob` holds what the work needs and nothing else: the command's text (parsed again
where it runs: pure, microseconds), who typed it, where, and the command's `response_url` to
answer through (Slack's, valid for 30 minutes and five answers). Never a token or a secret.

Two hand-offs:
- `PostAckQueue.push` (`joinops serve`): one `XADD` to the stream `joinops:bot:post-ack`; the
  post-ack process of any replica takes it (bot/post_ack_runner.py). This is all the acking
  process does for the work: its CPU stays for the next acks. Acks that hand on at once share
  one round trip: the first pushes, in one pipeline, every job queued while its XADDs were on
  their way, and the others return at once — a Redis round trip costs the acking process far
  more CPU (a blocking read, a thread woken) than the XADD itself (issue #34). A job that
  could not be queued is told to its `failed`, whichever thread pushed it.
- `InProcess` (tests, `joinops sandbox`): the job, through the same JSON, run on a thread pool of
  the acking process, as before there was a post-ack process.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass

from redis import Redis, RedisError
from slack_bolt.context import BoltContext
from slack_bolt.context.respond import Respond
from slack_bolt.response import BoltResponse

from bot import middleware

STREAM = "joinops:bot:post-ack"
FIELD = "job"

Failed = Callable[[RedisError], None]  # told when a job could not be queued
HandOff = Callable[["PostAckJob", Failed], None]
_ENCODER = json.JSONEncoder(separators=(",", ":"))


@dataclass(frozen=True)
class PostAckJob:
    text: str  # the slash command's text, as typed
    user: str
    channel: str
    response_url: str

    def to_json(self) -> str:
        # the fields by hand rather than `asdict` (which deep-copies): this runs in every ack
        fields = {
            "text": self.text,
            "user": self.user,
            "channel": self.channel,
            "response_url": self.response_url,
        }
        return _ENCODER.encode(fields)

    @classmethod
    def from_json(cls, raw: str | bytes) -> PostAckJob:
        """Raises ValueError when `raw` is not a job."""
        try:
            data = json.loads(raw)
            return cls(**{key: str(data[key]) for key in cls.__dataclass_fields__})
        except (TypeError, KeyError, AttributeError) as e:
            raise ValueError(f"not a post-ack job: {type(e).__name__}") from None


class PostAckQueue:
    """The acking side of the stream: one push per command whose work comes after its ack."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._lock = threading.Lock()
        self._waiting: deque[tuple[PostAckJob, Failed | None]] = deque()
        self._pushing = False  # a thread is sending what waits: the others only queue

    def push(self, job: PostAckJob, failed: Failed | None = None) -> None:
        """Queue `job`; without `failed`, raises a RedisError when it could not be. With it,
        `failed` is told instead, and the job may be sent by another thread pushing already."""
        if failed is None:
            self.redis.xadd(STREAM, {FIELD: job.to_json()})
            return
        with self._lock:
            self._waiting.append((job, failed))
            if self._pushing:
                return  # the pushing thread sends it before it stops (`_send_waiting`)
            self._pushing = True
        self._send_waiting()

    def _send_waiting(self) -> None:
        """Send what waits, in one pipeline a round, until nothing does."""
        try:
            while (batch := self._take_waiting()) is not None:
                self._send(batch)
        except BaseException:  # a bug on the way: the next push sends what still waits
            with self._lock:
                self._pushing = False
            raise

    def _take_waiting(self) -> list[tuple[PostAckJob, Failed | None]] | None:
        """What waits; None, and no thread pushing any more, when nothing does (one lock: a job
        queued meanwhile is either taken here or pushed by the thread that queues it)."""
        with self._lock:
            if not self._waiting:
                self._pushing = False
                return None
            batch = list(self._waiting)
            self._waiting.clear()
            return batch

    def _send(self, batch: list[tuple[PostAckJob, Failed | None]]) -> None:
        """One XADD a job, in one round trip; each job that could not be queued told so."""
        if len(batch) == 1:  # no pipeline's own cost for one job
            ((job, failed),) = batch
            try:
                self.redis.xadd(STREAM, {FIELD: job.to_json()})
            except RedisError as e:
                if failed is not None:
                    failed(e)
            return
        pipe = self.redis.pipeline(transaction=False)
        for job, _ in batch:
            pipe.xadd(STREAM, {FIELD: job.to_json()})
        try:
            results = pipe.execute(raise_on_error=False)
        except RedisError as e:  # the connection: none of them is known to be queued
            results = [e] * len(batch)
        for (_, failed), result in zip(batch, results, strict=True):
            if isinstance(result, RedisError) and failed is not None:
                failed(result)


class InProcess:
    """The job run by `run` on `pool`, in this process (through the same JSON as the queue's)."""

    def __init__(self, pool: Executor, run: Callable[[PostAckJob], None]) -> None:
        self.pool = pool
        self.run = run

    def push(self, job: PostAckJob, failed: Failed | None = None) -> None:
        self.pool.submit(self.run, PostAckJob.from_json(job.to_json()))


def respond_to(response_url: str) -> Callable[..., object]:
    """`respond` for a job, as bolt gives it to a listener: answers through the command's
    response_url, within Slack's limits (`middleware.keep_to_limits`)."""
    context = BoltContext({"respond": Respond(response_url=response_url)})
    middleware.keep_to_limits(context, lambda: BoltResponse(status=200))
    respond: Callable[..., object] = context["respond"]
    return respond
