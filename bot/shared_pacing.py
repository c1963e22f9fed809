"""Slack's rate tiers kept by every bot process together: the token buckets in Redis.

Slack's limits are per app and workspace (per channel for posting), not per process, and a bot
is several processes: each replica's acking process (clicks, lookups) and post-ack process (the
request messages, and on one replica the relay's replies and root updates). Each pacing on its
own would let them together send twice Slack's rate or more, and meet 429s. So the buckets of
bot/pacing.py — the same tiers, margin, bursts and scale — live in Redis: one script refills a
method's (and a channel's) bucket from Redis's own clock, says how long until a token and takes
it, in one step for all the processes. A 429 that still happens empties the bucket for every
process. Without Redis (it stopped answering) a process paces on its own, as before.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import redis

from bot.pacing import MARGIN, METHOD_TIERS, PER_CHANNEL, UNLISTED, Pacing, Tier

log = logging.getLogger(__name__)

PREFIX = "joinops:bot:pacing:"  # + method + ":" + channel ("" for the method's own bucket)
IDLE_TTL = 600  # seconds an unused bucket is kept (full again by then anyway)

# KEYS: buckets. ARGV[1]: "1" to take a token when every bucket has one, else "0"; then for
# each bucket its rate (tokens a second) and capacity. Returns the seconds to wait, as text.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local wait, tokens = 0, {}
for i, key in ipairs(KEYS) do
  local rate, cap = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  local held = redis.call('HMGET', key, 'tokens', 'at')
  local have = tonumber(held[1]) or cap
  local at = tonumber(held[2]) or now
  have = math.min(cap, have + math.max(0, now - at) * rate)
  if have < 1 - 1e-9 then wait = math.max(wait, (1 - have) / rate) end
  tokens[i] = have
end
for i, key in ipairs(KEYS) do
  local have = tokens[i]
  if ARGV[1] == '1' and wait <= 0 then have = have - 1 end
  redis.call('HSET', key, 'tokens', tostring(have), 'at', tostring(now))
  redis.call('EXPIRE', key, ARGV[#ARGV])
end
return tostring(wait)
"""
# KEYS[1]: a method's bucket. ARGV: rate, capacity, Retry-After seconds, ttl.
_LIMITED = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local rate, cap = tonumber(ARGV[1]), tonumber(ARGV[2])
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local have, at = tonumber(held[1]) or cap, tonumber(held[2]) or now
have = math.min(cap, have + math.max(0, now - at) * rate)
have = math.min(have, 1 - tonumber(ARGV[3]) * rate)
redis.call('HSET', KEYS[1], 'tokens', tostring(have), 'at', tostring(now))
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""


class SharedPacing(Pacing):
    """`Pacing` whose buckets every process of the bot shares through Redis."""

    def __init__(
        self,
        client: redis.Redis,
        scale: float = 1.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(scale, clock=clock)
        self.redis = client
        self._take = client.register_script(_TAKE)
        self._limited = client.register_script(_LIMITED)

    def ready_in(self, method: str, channel: str | None = None) -> float:
        try:
            return self._ask(method, channel, take=False)
        except redis.RedisError:
            return super().ready_in(method, channel)

    def acquire(self, method: str, channel: str | None = None) -> None:
        if getattr(self._prepaid, "method", None) == method:
            self._prepaid.method = None
            return
        while True:
            try:
                wait = self._ask(method, channel, take=True)
            except redis.RedisError as e:
                log.info("pacing %s on this process alone: %s", method, e)
                super().acquire(method, channel)
                return
            if wait <= 0:
                return
            self.waited += wait
            time.sleep(wait)

    def rate_limited(self, method: str, retry_after: float) -> None:
        super().rate_limited(method, retry_after)
        rate, capacity = self._shape(METHOD_TIERS.get(method, UNLISTED))
        try:
            self._limited(
                keys=[PREFIX + method + ":"], args=[rate, capacity, retry_after, IDLE_TTL]
            )
        except redis.RedisError as e:
            log.info("a 429 of %s kept on this process alone: %s", method, e)

    def _ask(self, method: str, channel: str | None, *, take: bool) -> float:
        keys: list[str] = [PREFIX + method + ":"]
        args: list[str | float] = ["1" if take else "0"]
        args += self._shape(METHOD_TIERS.get(method, UNLISTED))
        if channel and method in PER_CHANNEL:
            keys.append(PREFIX + method + ":" + channel)
            args += self._shape(PER_CHANNEL[method])
        answer = self._take(keys=keys, args=[*args, IDLE_TTL])
        return float(answer.decode() if isinstance(answer, bytes) else answer)

    def _shape(self, tier: Tier) -> list[float]:
        """(tokens a second, capacity) of `tier` at this bot's scale, as bot/pacing.py has it."""
        return [tier.per_minute * MARGIN * self.scale / 60.0, float(tier.burst)]
