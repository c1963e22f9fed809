"""Progress events: what a migration says while it runs, and where it goes.

The engine emits `Event`s to a `Reporter`. `RedisEventLog` appends them to a Redis stream per
request (the CLI follows it) and to one global stream (the Slack bot relays it into threads).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Protocol

import redis

REQUEST_STREAM = "joinops:events:"
GLOBAL_STREAM = "joinops:events"


class EventKind(StrEnum):
    STEP_STARTED = "step-started"
    STEP_SUCCEEDED = "step-succeeded"
    STEP_RETRYING = "step-retrying"
    STEP_FAILED = "step-failed"
    PROGRESS = "progress"  # a line inside a step (drain: 40 of 100 pods gone)
    STATE = "state"  # the request changed state; `text` is the outcome line
    LOAN = "loan"  # the loan of the request's node: `state` says what happened (joinops.loans)


@dataclass(frozen=True)
class Event:
    request_id: str
    kind: EventKind
    text: str
    step: str = ""
    state: str = ""
    at: float = 0.0
    seconds: float = 0.0  # how long the step took, for finished steps
    done: int = 0  # a counting progress line: `done` of `total` (drain: pods gone of those to move)
    total: int = 0

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Event:
        raw = json.loads(text)
        raw["kind"] = EventKind(raw["kind"])
        known = {f.name for f in dataclasses.fields(cls)}  # a newer writer's extra fields: ignored
        return cls(**{k: v for k, v in raw.items() if k in known})

    @property
    def is_final(self) -> bool:
        return self.kind is EventKind.STATE and self.state in (
            "succeeded",
            "failed",
            "returned",
            "cancelled",
            "rejected",
            "expired",
        )


class Reporter(Protocol):
    def emit(self, event: Event) -> None: ...


class RedisEventLog:
    """Appends events to Redis streams; reads them back in order."""

    def __init__(self, redis_client: redis.Redis, maxlen: int = 10_000) -> None:
        self.redis = redis_client
        self.maxlen = maxlen

    def emit(self, event: Event) -> None:
        if not event.at:
            event = Event(**{**asdict(event), "at": time.time()})
        payload = {"event": event.to_json()}
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.xadd(REQUEST_STREAM + event.request_id, payload, maxlen=1000, approximate=True)
            pipe.xadd(GLOBAL_STREAM, payload, maxlen=self.maxlen, approximate=True)
            pipe.execute()

    def follow(
        self, request_id: str, block_ms: int = 1000, after: str = "0-0"
    ) -> Iterator[Event | None]:
        """Yield the request's events in order, waiting for new ones; None on each idle wait.

        Keep `block_ms` under the Redis client's socket timeout (redis-py's default is 5 s).
        """
        last = after
        while True:
            batch = self.redis.xread({REQUEST_STREAM + request_id: last}, block=block_ms)
            if not batch:
                yield None
                continue
            for entry_id, fields in batch[0][1]:
                last = _s(entry_id)
                yield Event.from_json(
                    _s(fields[b"event"] if b"event" in fields else fields["event"])
                )

    def history(self, request_id: str) -> list[Event]:
        entries = self.redis.xrange(REQUEST_STREAM + request_id)
        return [Event.from_json(_s(f.get(b"event", f.get("event")))) for _, f in entries]


def _s(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
