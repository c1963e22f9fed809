"""Locks in Redis with an owner and an expiry (after kured's lock).

One migration per node; control-plane changes one at a time per cluster. The owner is the
request id, so a resumed request takes its own lock back; a lock whose worker died expires after
`ttl` and then another run may take it. While a job runs, a heartbeat renews its locks.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass

import redis

PREFIX = "joinops:lock:"

# KEYS: lock keys. ARGV: owner, ttl ms. All or nothing: returns {1} or {0, key, holder}.
_ACQUIRE = """
for i, key in ipairs(KEYS) do
  local holder = redis.call('GET', key)
  if holder and holder ~= ARGV[1] then return {0, key, holder} end
end
for i, key in ipairs(KEYS) do redis.call('SET', key, ARGV[1], 'PX', ARGV[2]) end
return {1}
"""

# Extend or delete only the keys this owner holds.
_RENEW = """
local n = 0
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then redis.call('PEXPIRE', key, ARGV[2]) n = n + 1 end
end
return n
"""
_RELEASE = """
local n = 0
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then redis.call('DEL', key) n = n + 1 end
end
return n
"""


def node_lock(node: str) -> str:
    return f"{PREFIX}node:{node}"


def control_plane_lock(cluster: str) -> str:
    return f"{PREFIX}control-plane:{cluster}"


@dataclass(frozen=True)
class Held:
    key: str
    holder: str


class LockSet:
    """A set of lock keys taken and released together by one owner."""

    def __init__(
        self, redis_client: redis.Redis, keys: list[str], owner: str, ttl_seconds: float
    ) -> None:
        self.redis = redis_client
        self.keys = sorted(set(keys))
        self.owner = owner
        self.ttl_ms = int(ttl_seconds * 1000)
        self._acquire = redis_client.register_script(_ACQUIRE)
        self._renew = redis_client.register_script(_RENEW)
        self._release = redis_client.register_script(_RELEASE)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.lost = threading.Event()  # a renewal found a lock gone: another run may own it now
        self.taken_by = ""  # who held the keys when `lost` was set
        self.parked = False  # kept, without a heartbeat, for a scheduled re-check

    def acquire(self) -> Held | None:
        """Take every lock, or none. Returns what blocked, or None on success."""
        result = self._acquire(keys=self.keys, args=[self.owner, self.ttl_ms])
        if result[0] == 1:
            return None
        return Held(_s(result[1]), _s(result[2]))

    def holding(self) -> bool:
        return bool(self.keys) and all(
            _s(self.redis.get(k) or b"") == self.owner for k in self.keys
        )

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._release(keys=self.keys, args=[self.owner])

    def park(self, seconds: float) -> None:
        """Keep the locks for `seconds` without a heartbeat: the run's worker goes on to other
        jobs, and the re-check that resumes the run takes them back (same owner) before then."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._renew(keys=self.keys, args=[self.owner, int(seconds * 1000)])
        self.parked = True

    def confirm(self) -> None:
        """Renew the locks now; one found gone (expired, or another run's now) sets `lost`.
        A run asks this between steps, so it never starts a step on a heartbeat's word alone
        (a heartbeat thread starved of CPU may be late)."""
        try:
            renewed = self._renew(keys=self.keys, args=[self.owner, self.ttl_ms])
        except redis.RedisError:
            return  # Redis away for a moment: the heartbeat tries again
        if int(renewed) < len(self.keys):
            self.taken_by = self._holders()
            self.lost.set()  # it expired (Redis was away too long): stop acting

    def _holders(self) -> str:
        """Who holds each of this set's keys now ("nobody" once expired), for the log."""
        try:
            held = [(key, holder_of(self.redis, key)) for key in self.keys]
        except redis.RedisError:
            return "unknown (Redis did not answer)"
        return ", ".join(f"{key}: {holder or 'nobody'}" for key, holder in held)

    def keep_alive(self) -> None:
        """Renew the locks every third of their ttl until released."""
        interval = self.ttl_ms / 3000

        def beat() -> None:
            while not self._stop.wait(interval):
                self.confirm()

        self._thread = threading.Thread(target=beat, name=f"locks-{self.owner}", daemon=True)
        self._thread.start()


def parked_key(request_id: str) -> str:
    """Holds the lock owner of a run parked for a re-check, for the run that resumes it."""
    return f"joinops:parked:{request_id}"


def run_owner(request_id: str) -> str:
    """A lock owner unique to one run of a request: a second run never shares the first's lock."""
    return f"{request_id}/{secrets.token_hex(4)}"


def request_of(owner: str) -> str:
    return owner.split("/", 1)[0]


def holder_of(redis_client: redis.Redis, key: str) -> str | None:
    value = redis_client.get(key)
    return _s(value) if value else None


def _s(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
