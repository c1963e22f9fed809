"""One fixed-shape record per step of a request, kept in Redis (hash `joinops:steps:<id>`).

A rerun of the same request reads these and skips what succeeded. `data` is the step's memory
(for example whether the node was already cordoned, or which token id it minted): never secrets.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

import redis

PREFIX = "joinops:steps:"


class Outcome(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    ROLLED_BACK = "rolled-back"  # succeeded once, then undone after a later failure


@dataclass
class StepRecord:
    step: str
    outcome: Outcome = Outcome.PENDING
    started: float = 0.0
    finished: float = 0.0
    attempts: int = 0
    message: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return max(0.0, self.finished - self.started) if self.finished else 0.0


class StepRecords:
    def __init__(self, redis_client: redis.Redis, clock: Callable[[], float] = time.time) -> None:
        self.redis = redis_client
        self.clock = clock

    def all(self, request_id: str) -> dict[str, StepRecord]:
        raw = self.redis.hgetall(PREFIX + request_id)
        return {_s(k): _decode(_s(v)) for k, v in raw.items()}

    def get(self, request_id: str, step: str) -> StepRecord:
        raw = self.redis.hget(PREFIX + request_id, step)
        return _decode(_s(raw)) if raw else StepRecord(step)

    def save(self, request_id: str, record: StepRecord) -> None:
        self.redis.hset(PREFIX + request_id, record.step, json.dumps(asdict(record)))

    # `known`, below: the record as the writer has just read it (the runner, at a run's start
    # and between its look at a step's record and the step's start), changed and saved
    # without a second read.

    def start(self, request_id: str, step: str, known: StepRecord | None = None) -> StepRecord:
        record = known or self.get(request_id, step)
        record.outcome, record.started, record.finished = Outcome.RUNNING, self.clock(), 0.0
        record.attempts += 1
        record.message = ""
        self.save(request_id, record)
        return record

    def finish(self, request_id: str, step: str, outcome: Outcome, message: str = "") -> StepRecord:
        record = self.get(request_id, step)
        record.outcome, record.finished, record.message = outcome, self.clock(), message
        self.save(request_id, record)
        return record

    def remember(
        self, request_id: str, step: str, *, known: StepRecord | None = None, **data: Any
    ) -> None:
        record = known or self.get(request_id, step)
        record.data.update(data)
        self.save(request_id, record)


def _decode(text: str) -> StepRecord:
    raw = json.loads(text)
    raw["outcome"] = Outcome(raw["outcome"])
    return StepRecord(**raw)


def _s(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
