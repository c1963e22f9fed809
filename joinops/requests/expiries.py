"""Approval deadlines: when a request that nobody decided on expires.

A deadline is one member of a due set (`joinops.dueset`: the request id, scored by its expiry
time), written with the pending request (`RequestStore.create`) or when a retry asks again:
one command, where an RQ scheduled job cost a job record and its registry entry. Every
`joinops worker` sweeps the set each second (`workers.expiry`), so each request is expired by
one worker, within about a second of its time.
"""

from __future__ import annotations

import redis

from joinops.dueset import DueSet

EXPIRIES = DueSet("joinops:expiries")


def schedule_expiry(connection: redis.Redis, request_id: str, at: float) -> None:
    """The request expires at `at` unless someone decides on it first."""
    EXPIRIES.add(connection, request_id, at)


def claim_due(connection: redis.Redis, now: float) -> list[str]:
    """The ids whose deadline has come, removed from the set: no other sweep sees them."""
    return EXPIRIES.claim_due(connection, now)


def deadline_of(connection: redis.Redis, request_id: str) -> float | None:
    """When the request is due to expire, if it is still waiting to."""
    return EXPIRIES.due_at(connection, request_id)
