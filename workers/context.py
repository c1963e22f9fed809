"""The engine's composition root: everything a job needs, built once per process from settings."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import redis

from joinops.clusters.registry import ClusterAccess, ClusterRegistry
from joinops.requests.audit import AuditLog
from joinops.requests.events import RedisEventLog, Reporter
from joinops.requests.steprecords import StepRecords
from joinops.requests.store import RequestStore
from joinops.settings import Settings, load_settings


@dataclass
class EngineContext:
    settings: Settings
    redis: redis.Redis
    clusters: ClusterAccess  # the registry; during a step, that step's pinned clients
    store: RequestStore
    records: StepRecords
    reporter: Reporter
    audit: AuditLog
    clock: Callable[[], float] = field(default=time.time)

    @classmethod
    def from_settings(cls, settings: Settings) -> EngineContext:
        client = redis.Redis.from_url(settings.secrets.redis_url)
        return cls(
            settings=settings,
            redis=client,
            clusters=ClusterRegistry(settings),  # nothing kept: joinops/clusters/steady.py
            store=RequestStore(client),
            records=StepRecords(client),
            reporter=RedisEventLog(client),
            audit=AuditLog(client),
        )


_current: EngineContext | None = None


def current() -> EngineContext:
    """The process's context. RQ imports job functions by name, so jobs find it here."""
    global _current
    if _current is None:
        _current = EngineContext.from_settings(load_settings())
    return _current


def install(context: EngineContext | None) -> None:
    """Set (or clear) the process's context; `joinops worker` and in-process tests use this."""
    global _current
    _current = context
