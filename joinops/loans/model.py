"""A loan: a node lent from its home cluster to a borrower until a time, then moved back.

    lending ──the move succeeded──▶ active ──due──▶ returning ──moved back──▶ returned
       │                              │  ▲              │  └──node gone──▶ closed
       └─the move did not happen─▶ not-lent  └extend     └─refused, failed─▶ overdue
                                                                     (Return now: returning)

The loan's id is the id of the request that lent the node. `generation` counts the changes of
its due time (extend, return now): a scheduled job for an older generation does nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

REMINDER_LEAD = timedelta(minutes=30)  # the reminder comes this long before the return...
EXTENSION = timedelta(hours=4)  # what the reminder's Extend button adds


class LoanState(StrEnum):
    LENDING = "lending"  # the move that lends the node has not succeeded yet
    ACTIVE = "active"  # lent; the return is scheduled
    RETURNING = "returning"  # the return request exists (or is being made)
    OVERDUE = "overdue"  # the return was refused or failed; the node is still lent
    RETURNED = "returned"
    CLOSED = "closed"  # the node was not in the borrower any more: nothing to return
    NOT_LENT = "not-lent"  # the lending move was cancelled, rejected or expired

    @property
    def is_open(self) -> bool:
        return self in OPEN


OPEN = frozenset({LoanState.LENDING, LoanState.ACTIVE, LoanState.RETURNING, LoanState.OVERDUE})
LISTED = (LoanState.ACTIVE, LoanState.RETURNING, LoanState.OVERDUE)  # what `loans` lists


def reminder_lead(length: timedelta) -> timedelta:
    """...or a quarter of the loan before it, when that is sooner (a loan of 1 h: 15 min)."""
    return min(REMINDER_LEAD, length / 4)


@dataclass
class Loan:
    id: str  # the lending request's id
    node: str
    home: str  # the cluster the node returns to
    borrower: str  # the cluster it is lent to
    home_role: str = "worker"  # its role back home
    requester: str = ""
    approver: str = ""  # who approved the lending move: their approval covers the return
    seconds: float = 0.0  # the loan asked for
    state: LoanState = LoanState.LENDING
    channel: str = ""  # the Slack thread of the request ("" from the CLI)
    thread_ts: str = ""
    lent_at: float = 0.0
    due_at: float = 0.0
    generation: int = 0
    reminded: int = 0  # the generation whose reminder was sent
    reminder_ts: str = ""  # the reminder message in the thread (its buttons)
    return_request: str = ""  # the request moving it back
    return_generation: int = -1  # the generation whose return was claimed (-1: none yet)
    reason: str = ""  # why it is overdue or closed

    @property
    def remind_at(self) -> float:
        length = timedelta(seconds=max(self.due_at - self.lent_at, 0))
        return self.due_at - reminder_lead(length).total_seconds()

    def to_hash(self) -> dict[str, str]:
        return {f.name: str(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_hash(cls, raw: dict[str, str]) -> Loan:
        kwargs: dict[str, object] = {}
        for f in dataclasses.fields(cls):
            if f.name not in raw:
                continue
            value = raw[f.name]
            if f.name in ("seconds", "lent_at", "due_at"):
                kwargs[f.name] = float(value or 0)
            elif f.name in ("generation", "reminded"):
                kwargs[f.name] = int(value or 0)
            elif f.name == "return_generation":
                kwargs[f.name] = int(value or -1)
            elif f.name == "state":
                kwargs[f.name] = LoanState(value)
            else:
                kwargs[f.name] = value
        return cls(**kwargs)  # type: ignore[arg-type]
