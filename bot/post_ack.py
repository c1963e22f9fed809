"""The work after a `/join`'s ack, as data: what the acking process hands on, and how.

A `PostAckJob` holds what the work needs and nothing else: the command's text (parsed again
where it runs: pure, microseconds), who typed it, where, and the command's `response_url` to
answer through (Slack's, valid for 30 minutes and five answers). Never a token or a secret.

Two hand-offs:
- `PostAckQueue.push` (`joinops serve`): one `XADD` to the stream `joinops:bot:post-ack`; the
  post-ack process of any replica takes it (bot/post_ack_runner.py). This is all the acking
  process does for the work: its CPU stays for the next acks.
- `InProcess` (tests, `joinops sandbox`): the job, through the same JSON, run on a thread pool of
  the acking process, as before there was a post-ack process.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import asdict, dataclass

from redis import Redis
from slack_bolt.context import BoltContext
from slack_bolt.context.respond import Respond
from slack_bolt.response import BoltResponse

from bot import middleware

STREAM = "joinops:bot:post-ack"
FIELD = "job"

HandOff = Callable[["PostAckJob"], None]


@dataclass(frozen=True)
class PostAckJob:
    text: str  # the slash command's text, as typed
    user: str
    channel: str
    response_url: str

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

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

    def push(self, job: PostAckJob) -> None:
        """Raises a RedisError when the job could not be queued."""
        self.redis.xadd(STREAM, {FIELD: job.to_json()})


class InProcess:
    """The job run by `run` on `pool`, in this process (through the same JSON as the queue's)."""

    def __init__(self, pool: Executor, run: Callable[[PostAckJob], None]) -> None:
        self.pool = pool
        self.run = run

    def push(self, job: PostAckJob) -> None:
        self.pool.submit(self.run, PostAckJob.from_json(job.to_json()))


def respond_to(response_url: str) -> Callable[..., object]:
    """`respond` for a job, as bolt gives it to a listener: answers through the command's
    response_url, within Slack's limits (`middleware.keep_to_limits`)."""
    context = BoltContext({"respond": Respond(response_url=response_url)})
    middleware.keep_to_limits(context, lambda: BoltResponse(status=200))
    respond: Callable[..., object] = context["respond"]
    return respond
