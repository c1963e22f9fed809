"""Things due at a time, in one Redis sorted set (member scored by when it is due), claimed when
due by whichever process sweeps first.

A sweep claims the due members atomically (read and removed in one script), so each is handled
by one sweeper; adding a member again moves its time. Sub-second times are kept as they are:
RQ's own scheduler keeps whole seconds and looks once a second.
"""

from __future__ import annotations

import redis
from redis.commands.core import Script

CLAIM_AT_ONCE = 100  # members one sweep takes; the rest wait for the next sweep

# KEYS: the set. ARGV: now, how many. Removes and returns the members due by now.
_CLAIM_DUE = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
if #due > 0 then redis.call('ZREM', KEYS[1], unpack(due)) end
return due
"""


class DueSet:
    def __init__(self, key: str) -> None:
        self.key = key
        # the claim's script, made once: `register_script` hashes the text again each time,
        # and a worker sweeps ten times a second (any connection can run it: `client=`)
        self._claim: Script | None = None

    def add(self, connection: redis.Redis, member: str, at: float) -> None:
        """`member` is due at `at` (a Unix time); an earlier time for it is replaced."""
        connection.zadd(self.key, {member: at})

    def claim_due(self, connection: redis.Redis, now: float) -> list[str]:
        """The members due by `now`, removed from the set: no other sweep sees them."""
        if self._claim is None:
            self._claim = connection.register_script(_CLAIM_DUE)
        claimed = self._claim(keys=[self.key], args=[now, CLAIM_AT_ONCE], client=connection)
        return [m.decode() if isinstance(m, bytes) else str(m) for m in claimed]

    def due_at(self, connection: redis.Redis, member: str) -> float | None:
        """When `member` is due, while it waits in the set."""
        score = connection.zscore(self.key, member)
        return float(score) if score is not None else None
