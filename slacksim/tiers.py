"""Slack's rate limits, enforced: each Web API method's tier, answered with 429 + Retry-After.

Slack limits calls "per API method per app per workspace" by tier
(https://docs.slack.dev/apis/web-api/rate-limits): Tier 2 about 20 a minute, Tier 3 about 50,
Tier 4 about 100, each tolerating some burst; `chat.postMessage` is special: about one message
per second per channel, short bursts allowed, under a workspace-wide limit as well. Over a
limit Slack answers HTTP 429 `{"ok": false, "error": "ratelimited"}` with a `Retry-After` header
(whole seconds).

Each limit is a token bucket (`burst` calls at once, refilled at `per_minute`). `speed`
compresses time for tests: every rate is multiplied by it, so `speed=20` gives 20 thread replies
a second per channel and 1,000 updates a minute, the same shape twenty times faster; Retry-After
is then given in fractions of a second. `Tiers.off()` enforces nothing.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Limit:
    """`per_minute` calls a minute on average, `burst` at once."""

    per_minute: float
    burst: int


TIER_2 = Limit(20, 4)
TIER_3 = Limit(50, 10)
TIER_4 = Limit(100, 20)
POST_PER_CHANNEL = Limit(60, 4)  # about one a second per channel, short bursts
POST_PER_WORKSPACE = Limit(600, 60)  # the workspace-wide limit on posting

# The tier of each method the simulator answers, from its page in Slack's method reference.
METHOD_TIERS: dict[str, Limit] = {
    # apps.connections.open (Tier 1) is not limited: tests reconnect more often than a bot does
    "auth.test": TIER_4,  # "special": generous
    "chat.postMessage": POST_PER_WORKSPACE,  # and POST_PER_CHANNEL per channel
    "chat.update": TIER_3,
    "chat.postEphemeral": TIER_4,
    "chat.getPermalink": TIER_4,
    "conversations.open": TIER_3,
    "conversations.replies": TIER_3,
    "conversations.history": TIER_3,
    "users.info": TIER_4,
    "usergroups.users.list": TIER_2,
    "files.getUploadURLExternal": TIER_4,
    "files.completeUploadExternal": TIER_4,
    "files.delete": TIER_3,
    "views.open": TIER_4,
    "reactions.add": TIER_3,
}
PER_CHANNEL: dict[str, Limit] = {"chat.postMessage": POST_PER_CHANNEL}


class _Bucket:
    def __init__(self, limit: Limit, speed: float, now: float) -> None:
        self.rate = limit.per_minute * speed / 60.0  # tokens a second
        self.capacity = float(limit.burst)
        self.tokens = self.capacity
        self.at = now

    def _refill(self, now: float) -> None:
        self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.rate)
        self.at = now

    def wait(self, now: float) -> float:
        """Seconds until one token is there (0 when one is there now)."""
        self._refill(now)
        return 0.0 if self.tokens >= 1 - 1e-9 else (1 - self.tokens) / self.rate

    def take(self) -> None:
        self.tokens -= 1


class Tiers:
    """The rate limits of one simulated workspace (`sim.tiers`). Thread-safe."""

    def __init__(
        self,
        speed: float = 1.0,
        *,
        enforced: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.speed = speed
        self.enforced = enforced
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[tuple[str, str], _Bucket] = {}
        self.limited = 0  # calls answered 429 so far

    @classmethod
    def off(cls) -> Tiers:
        return cls(enforced=False)

    def reset(self) -> None:
        with self._lock:
            self._buckets.clear()
            self.limited = 0

    def admit(self, method: str, channel: str | None) -> float | None:
        """Count one call; None when it may go on, else the seconds its Retry-After says."""
        if not self.enforced or method not in METHOD_TIERS:
            return None
        with self._lock:
            now = self._clock()
            buckets = [self._bucket(method, "", METHOD_TIERS[method], now)]
            if method in PER_CHANNEL and channel:
                buckets.append(self._bucket(method, channel, PER_CHANNEL[method], now))
            wait = max(b.wait(now) for b in buckets)
            if wait > 0:
                self.limited += 1
                return wait
            for bucket in buckets:
                bucket.take()
            return None

    def retry_after(self, wait: float) -> str:
        """The header's value: whole seconds, as Slack sends; hundredths when time is sped up."""
        if self.speed == 1.0:
            return str(max(1, math.ceil(wait)))
        return f"{math.ceil(wait * 100) / 100:.2f}"

    def _bucket(self, method: str, channel: str, limit: Limit, now: float) -> _Bucket:
        key = (method, channel)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(limit, self.speed, now)
        return bucket
