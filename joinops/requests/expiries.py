"""Approval deadlines: when a request that nobody decided on expires.

A deadline is one member of a Redis sorted set (the request id, scored by its expiry time),
written with the request: one command, where an RQ scheduled job cost a job record and its
registry entry. Every `joinops worker` sweeps the set each second (`workers.expiry`) and claims
the due ones atomically, so each is expired by one worker, within about a second of its time.
A deadline moved later (a retry asks again) simply replaces the earlier one.
"""

from __future__ import annotations

import redis

EXPIRIES = "joinops:expiries"
CLAIM_AT_ONCE = 100  # deadlines one sweep takes; the rest wait for the next second

# KEYS: the set. ARGV: now, how many. Removes and returns the members due by now.
_CLAIM_DUE = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
if #due > 0 then redis.call('ZREM', KEYS[1], unpack(due)) end
return due
"""


def schedule_expiry(connection: redis.Redis, request_id: str, at: float) -> None:
    """The request expires at `at` unless someone decides on it first."""
    connection.zadd(EXPIRIES, {request_id: at})


def claim_due(connection: redis.Redis, now: float) -> list[str]:
    """The ids whose deadline has come, removed from the set: no other sweep sees them."""
    claimed = connection.register_script(_CLAIM_DUE)(keys=[EXPIRIES], args=[now, CLAIM_AT_ONCE])
    return [i.decode() if isinstance(i, bytes) else str(i) for i in claimed]


def deadline_of(connection: redis.Redis, request_id: str) -> float | None:
    """When the request is due to expire, if it is still waiting to."""
    score = connection.zscore(EXPIRIES, request_id)
    return float(score) if score is not None else None
