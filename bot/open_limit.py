"""At most `policy.max_open_requests_per_user` requests open per person, across every replica.

A request is open while it waits for approval, is approved or runs (a batch counts once, its
nodes not at all). The count is made after the ack, from the requests in Redis plus the asks of
that person still being checked by any post-ack process of any replica: a burst of commands
from one person is acked in full, and exactly those beyond the limit are refused, each with an
answer saying why and what to do.

The asks in flight live in Redis, one sorted set per person (`ASKING` + user: a member per ask,
scored with the time its slot lapses on Redis's clock), taken and given back by scripts. A slot
is given back when its ask is finished; one whose process died lapses after `HOLD_MARGIN`
seconds beyond the check timeout. Each take and give-back bumps the person's version: a take
whose count of recorded requests was read before another ask was recorded or given back reads
again, so an ask is never missed between the two counts (never counted twice in what the person
reads either: the larger of the two is said). Far enough below the limit — the requests
remembered for the person, an upper bound, plus the asks in flight — one script takes the slot
in one round trip (`_QUICK_TAKE`, the common case); only near the limit is the exact count made.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from bot.context import BotContext
from bot.texts import answers as answers_texts
from joinops.requests.store import OF_REQUESTER

ASKING = "joinops:bot:asking:"  # + user: the asks being checked now (sorted set)
VERSION = "joinops:bot:asking-version:"  # + user: bumped by every take and give-back
HOLD_MARGIN = 120.0  # seconds beyond the check timeout a slot outlives a process that died
RETRIES = 20  # reads again at most this often when other asks move meanwhile; then decides

# KEYS: asking, version. Returns {version, asks in flight}.
_READ = """
local t = redis.call('TIME')
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(t[1]) * 1000 + math.floor(t[2] / 1000))
return {redis.call('GET', KEYS[2]) or '0', redis.call('ZCARD', KEYS[1])}
"""
# KEYS: asking, version. ARGV: limit, recorded, version read ('' to not compare), slot, hold ms.
# Returns {1, asks} when the slot is taken, {0, asks} when every one is, {-1, 0} to read again.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(t[2] / 1000)
if ARGV[3] ~= '' and (redis.call('GET', KEYS[2]) or '0') ~= ARGV[3] then return {-1, 0} end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local asks = redis.call('ZCARD', KEYS[1])
if tonumber(ARGV[2]) + asks >= tonumber(ARGV[1]) then return {0, asks} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[5]), ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return {1, asks}
"""
# KEYS: asking, version, the person's requests (RequestStore.open_count's set). ARGV: limit,
# slot, hold ms. The common case in one round trip: the requests remembered (an upper bound,
# as open_count's own first answer) and the asks in flight below the limit take the slot; 1 when
# taken, 0 when the exact count must settle it (`_take_slot`).
_QUICK_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(t[2] / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('SCARD', KEYS[3]) + redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
"""
# KEYS: asking, version. ARGV: slot, hold ms.
_GIVE_BACK = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
"""


class OpenRequestLimit:
    def __init__(self, ctx: BotContext) -> None:
        self.ctx = ctx
        self._read = ctx.redis.register_script(_READ)
        self._take = ctx.redis.register_script(_TAKE)
        self._quick_take = ctx.redis.register_script(_QUICK_TAKE)
        self._give_back = ctx.redis.register_script(_GIVE_BACK)

    @contextmanager
    def slot(self, user: str) -> Iterator[str | None]:
        """Hold one of `user`'s slots while their ask is checked and posted: yields None, or
        the refusal to tell them when every slot is taken (nothing is held then)."""
        keys = [ASKING + user, VERSION + user]
        hold_ms = int((self.ctx.settings.timeouts.check.total_seconds() + HOLD_MARGIN) * 1000)
        slot = uuid.uuid4().hex
        limit = self.ctx.settings.policy.max_open_requests_per_user
        quick = self._quick_take(keys=[*keys, OF_REQUESTER + user], args=[limit, slot, hold_ms])
        refusal = None if quick == 1 else self._take_slot(user, keys, slot, hold_ms)
        if refusal is not None:
            yield refusal
            return
        try:
            yield None
        finally:
            self._give_back(keys=keys, args=[slot, hold_ms])

    def _take_slot(self, user: str, keys: list[str], slot: str, hold_ms: int) -> str | None:
        limit = self.ctx.settings.policy.max_open_requests_per_user
        for attempt in range(RETRIES + 1):
            version, asking = self._read(keys=keys)
            # below the limit, the number remembered settles it (bounded by the limit)
            recorded = self.ctx.store.open_count(user, exact_from=limit - int(asking))
            compared = "" if attempt == RETRIES else _text(version)
            taken, _ = self._take(keys=keys, args=[limit, recorded, compared, slot, hold_ms])
            if taken == 1:
                return None
            if taken == 0:
                # an ask still being finished may be recorded already: never counted twice
                return answers_texts.too_many_open(max(recorded, limit), limit)
        raise AssertionError("unreachable: the last attempt does not compare")


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
