"""What the request commands (status, list, cancel, retry) share: the store, ids, the operator."""

from __future__ import annotations

import argparse
import getpass
from dataclasses import dataclass

import redis

from cli import texts
from joinops.errors import UsageError
from joinops.requests.audit import AuditLog
from joinops.requests.events import RedisEventLog
from joinops.requests.ids import is_request_id
from joinops.requests.steprecords import StepRecords
from joinops.requests.store import Request, RequestStore
from joinops.requests.surface import terminal_user
from joinops.settings import Settings, load_settings


@dataclass
class Requests:
    """The stores the bot uses, opened for one console command."""

    settings: Settings
    redis: redis.Redis
    store: RequestStore
    records: StepRecords
    events: RedisEventLog
    audit: AuditLog

    @classmethod
    def open(cls) -> Requests:
        settings = load_settings()
        client = redis.Redis.from_url(settings.secrets.redis_url)
        return cls(
            settings=settings,
            redis=client,
            store=RequestStore(client),
            records=StepRecords(client),
            events=RedisEventLog(client),
            audit=AuditLog(client),
        )

    def named(self, request_id: str) -> Request:
        """The request `request_id`, or a UsageError saying what to type instead."""
        request = self.store.get(request_id)
        if request is None:
            raise UsageError(texts.unknown_request(request_id))
        return request


def children(store: RequestStore, request: Request) -> list[Request]:
    """A batch's migrations (none for anything else)."""
    ids = [i for i in request.extra.get("children", "").split(",") if i]
    return [c for c in (store.get(i) for i in ids) if c is not None]


def request_id(value: str) -> str:
    """argparse type of a request id: a clear message for anything else."""
    if not is_request_id(value.strip()):
        raise argparse.ArgumentTypeError(texts.bad_request_id(value))
    return value.strip()


def operator() -> str:
    """The CLI user: the operator, who may act on any request (as an approver in Slack)."""
    return terminal_user(getpass.getuser())
