"""The audit trail: who asked for, approved, rejected, cancelled what, and how it ended.

Each entry goes to the Redis stream `joinops:audit` and, as one structured line, to the log.
Entries carry names, ids and our own outcome lines only: never a token, key or kubeconfig.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

import redis

STREAM = "joinops:audit"
log = logging.getLogger("joinops.audit")


class Action(StrEnum):
    REQUESTED = "requested"
    REFUSED = "refused"  # a rule said no when the request was made
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    CANCELLED = "cancelled"
    RETRIED = "retried"
    DENIED = "denied"  # someone tried what they may not (approve, cancel...)
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    FILE_DELETED = "file-deleted"  # an Ignition file deleted from Slack when its token expired
    # loans (joinops.loans): the request id is the lending request's
    LENT = "lent"  # the move succeeded; the return is scheduled
    REMINDED = "reminded"
    EXTENDED = "extended"
    RETURN_ASKED = "return-asked"  # Return now
    RETURNING = "returning"  # the return request was made
    RETURNED = "returned"
    OVERDUE = "overdue"  # the return was refused, failed or not approved
    LOAN_CLOSED = "loan-closed"  # nothing to return (the node was gone), or never lent


@dataclass(frozen=True)
class Entry:
    at: float
    action: Action
    actor: str  # Slack user ID, `cli:<user>`, or `joinops` for the engine
    request_id: str = ""
    node: str = ""
    source: str = ""
    target: str = ""
    role: str = ""
    detail: str = ""
    force: bool = False  # the request deletes pods no controller recreates


class AuditLog:
    def __init__(
        self,
        redis_client: redis.Redis,
        clock: Callable[[], float] = time.time,
        maxlen: int = 100_000,
    ) -> None:
        self.redis = redis_client
        self.clock = clock
        self.maxlen = maxlen

    def record(
        self, action: Action, actor: str, request: Any = None, detail: str = "", **fields: str
    ) -> Entry:
        """Append one entry; `request` (a store.Request) fills in what it was about."""
        about = (
            {k: str(getattr(request, k, "") or "") for k in ("node", "source", "target", "role")}
            if request is not None
            else {}
        )
        about.update(fields)
        entry = Entry(
            at=self.clock(),
            action=action,
            actor=actor,
            request_id=getattr(request, "id", "") or fields.get("request_id", ""),
            detail=detail[:1000],
            force=bool(getattr(request, "force", False)),
            **{k: v for k, v in about.items() if k in ("node", "source", "target", "role")},
        )
        fields_of_entry = asdict(entry)
        self.redis.xadd(
            STREAM, {"entry": json.dumps(fields_of_entry)}, maxlen=self.maxlen, approximate=True
        )
        log.info("audit %s", action, extra={"audit": fields_of_entry})
        return entry

    def entries(self, since: float = 0.0, count: int = 10_000) -> list[Entry]:
        start = f"{int(since * 1000)}-0" if since else "-"
        out = []
        for _, fields in self.redis.xrange(STREAM, min=start, count=count):
            raw = json.loads(fields.get(b"entry") or fields.get("entry"))
            raw["action"] = Action(raw["action"])
            out.append(Entry(**raw))
        return out
