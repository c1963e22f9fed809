"""Keeping to Slack's rate tiers: one limiter per method tier, shared by the whole process.

Slack limits each Web API method per workspace by tier (Tier 2 about 20 calls a minute, Tier 3
about 50, Tier 4 about 100) and `chat.postMessage` to about one message a second per channel,
short bursts allowed (docs/slack.md#rate-limits). The bot keeps a little under each: a token
bucket per method (and per channel for posting) refilled at 90 % of the documented rate, with a
smaller burst than Slack tolerates, so network jitter never tips a call over. `PacedWebClient`
takes a token before every call; a caller with no token waits for one in its own thread (the
listener's or the relay lane's), never in a thread other replies depend on. A 429 that still
happens (another app on the same token) empties the method's bucket for its Retry-After, so
every thread holds back, not only the one that met it.

The buckets are hand-written rather than a rate-limiting library's because they must answer
"how long until a token" without taking one (the relay renders a message only once it may be
sent) and run on fractional, scaled rates (`slack.rate_scale`, for a sped-up slacksim).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.web.slack_response import SlackResponse

from bot import slack_limits
from bot.token_state import FATAL, TokenState

log = logging.getLogger(__name__)

MARGIN = 0.9  # of Slack's documented rate


@dataclass(frozen=True)
class Tier:
    per_minute: float  # Slack's documented rate
    burst: int  # what the bot allows itself at once


TIER_2 = Tier(20, 2)
TIER_3 = Tier(50, 5)
TIER_4 = Tier(100, 10)
POST_PER_CHANNEL = Tier(60, 3)  # one a second per channel, a small burst
POST_PER_WORKSPACE = Tier(600, 30)

METHOD_TIERS: dict[str, Tier] = {
    "chat.postMessage": POST_PER_WORKSPACE,
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
    "auth.test": TIER_4,
}
UNLISTED = TIER_3  # a method not listed: Slack's most common tier for writes
PER_CHANNEL: dict[str, Tier] = {"chat.postMessage": POST_PER_CHANNEL}


class _Bucket:
    def __init__(self, tier: Tier, scale: float, now: float) -> None:
        self.rate = tier.per_minute * MARGIN * scale / 60.0
        self.capacity = float(tier.burst)
        self.tokens = self.capacity
        self.at = now

    def wait(self, now: float) -> float:
        self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.rate)
        self.at = now
        return 0.0 if self.tokens >= 1 - 1e-9 else (1 - self.tokens) / self.rate


class Pacing:
    """The process's rate limiters, by method (and channel). Thread-safe."""

    def __init__(self, scale: float = 1.0, *, clock: Callable[[], float] = time.monotonic):
        self.scale = scale
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[tuple[str, str], _Bucket] = {}
        self._prepaid = threading.local()
        self.waited = 0.0  # seconds callers spent waiting for a token, in total

    def ready_in(self, method: str, channel: str | None = None) -> float:
        """Seconds until a call of `method` (to `channel`) could go; takes nothing."""
        with self._lock:
            return max(b.wait(self._clock()) for b in self._buckets_of(method, channel))

    @contextmanager
    def prepaid(self, method: str, channel: str | None = None) -> Iterator[None]:
        """Take the token now; this thread's next call of `method` inside the block is free.
        For work that must happen after the wait and right before the call (a render)."""
        self.acquire(method, channel)
        self._prepaid.method = method
        try:
            yield
        finally:
            self._prepaid.method = None

    def acquire(self, method: str, channel: str | None = None) -> None:
        """Take a token for one call, waiting in this thread until there is one."""
        if getattr(self._prepaid, "method", None) == method:
            self._prepaid.method = None
            return
        while True:
            with self._lock:
                buckets = self._buckets_of(method, channel)
                wait = max(b.wait(self._clock()) for b in buckets)
                if wait <= 0:
                    for bucket in buckets:
                        bucket.tokens -= 1
                    return
                self.waited += wait
            time.sleep(wait)

    def rate_limited(self, method: str, retry_after: float) -> None:
        """Slack answered 429: no call of `method` for `retry_after` seconds, from any thread."""
        with self._lock:
            bucket = self._bucket(method, "", METHOD_TIERS.get(method, UNLISTED))
            bucket.wait(self._clock())
            bucket.tokens = min(bucket.tokens, 1 - retry_after * bucket.rate)

    def _buckets_of(self, method: str, channel: str | None) -> list[_Bucket]:
        buckets = [self._bucket(method, "", METHOD_TIERS.get(method, UNLISTED))]
        if channel and method in PER_CHANNEL:
            buckets.append(self._bucket(method, channel, PER_CHANNEL[method]))
        return buckets

    def _bucket(self, method: str, channel: str, tier: Tier) -> _Bucket:
        key = (method, channel)
        if key not in self._buckets:
            self._buckets[key] = _Bucket(tier, self.scale, self._clock())
        return self._buckets[key]


class PacedWebClient(WebClient):
    """A WebClient whose every Web API call first takes a token from the shared `Pacing`, and
    whose every message is within Slack's limits before it leaves (`slack_limits.outgoing`):
    one Slack would refuse is refused here, logged, with the `SlackApiError` Slack would raise.
    """

    def __init__(
        self, *args: Any, pacing: Pacing, token_state: TokenState | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.pacing = pacing
        self.token_state = token_state or TokenState()

    def api_call(self, api_method: str, **kwargs: Any) -> SlackResponse:
        if api_method in slack_limits.MESSAGE_METHODS:
            kwargs = self._within_limits(api_method, kwargs)
        self.pacing.acquire(api_method, _channel(kwargs))
        try:
            answer = super().api_call(api_method, **kwargs)
        except SlackApiError as e:
            error = str(e.response.get("error") or "")
            if error in FATAL:
                self.token_state.refused(error)
            raise
        self.token_state.accepted()
        return answer

    def _within_limits(self, api_method: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        message = kwargs.get("json")
        if not isinstance(message, dict):
            return kwargs
        try:
            return {**kwargs, "json": slack_limits.outgoing(message)}
        except slack_limits.OverLimits as e:
            where = _channel(kwargs)
            log.error("not sent: %s to %s breaks Slack's limits: %s", api_method, where, e)
            refusal = SlackResponse(
                client=self,
                http_verb="POST",
                api_url=self.base_url + api_method,
                req_args={},
                data={"ok": False, "error": e.error},
                headers={},
                status_code=200,
            )
            raise SlackApiError(f"refused before sending: {e}", refusal) from e


def _channel(kwargs: dict[str, Any]) -> str | None:
    for part in ("json", "data", "params"):
        found = (kwargs.get(part) or {}).get("channel")
        if isinstance(found, str):
            return found
    return None
