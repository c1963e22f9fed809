"""Hosts seen in the hosts directory, in Redis: each one's state, and reports made once.

A host is a hash `joinops:arrivals:host:<cluster>`, listed in the sorted set
`joinops:arrivals:hosts` by when it was first seen. Its life::

    waiting --(answers, announced)--> announced --(Move clicked)--> requested --> moved
       |                                 |  ^                          |
       |                                 |  +---(request not carried out)
       +------------- dismissed <--------+

Every change is one compare-and-set (a Lua script): of several bots polling the same directory
only one announces a host, and of two clicks only one opens a request. The backoff of a host
that does not answer yet (attempts, next probe) is kept here too, so a restart does not reset it.
Things reported to the channel once (an invalid file, with its content's digest) are members of
`joinops:arrivals:reported`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import redis

PREFIX = "joinops:arrivals:host:"
HOSTS = "joinops:arrivals:hosts"
REPORTED = "joinops:arrivals:reported"


class State(StrEnum):
    WAITING = "waiting"  # seen in the directory, not announced yet (not answering, or no channel)
    ANNOUNCED = "announced"
    REQUESTED = "requested"  # a Move click opened a request
    MOVED = "moved"  # that request succeeded
    DISMISSED = "dismissed"


# KEYS: host hash. ARGV: new state, allowed states (comma-separated), then field/value pairs.
_TRANSITION = """
local cur = redis.call('HGET', KEYS[1], 'state')
if not cur then return 0 end
for s in string.gmatch(ARGV[2], '[^,]+') do
  if s == cur then
    redis.call('HSET', KEYS[1], 'state', ARGV[1])
    for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
    return 1
  end
end
return 0
"""

# KEYS: host hash, hosts set. ARGV: cluster, file, first seen, then the new record's pairs.
_SEEN = """
if redis.call('HEXISTS', KEYS[1], 'state') == 1 then
  redis.call('HSET', KEYS[1], 'file', ARGV[2])
  return 0
end
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('ZADD', KEYS[2], 'NX', ARGV[3], ARGV[1])
return 1
"""


@dataclass
class Arrival:
    cluster: str
    file: str
    state: State = State.WAITING
    first_seen: float = 0.0
    announced_at: float = 0.0
    channel: str = ""
    message_ts: str = ""  # the announcement
    request_id: str = ""  # the request its Move click opened
    by: str = ""  # who clicked Move or Dismiss
    attempts: int = 0  # probes that found it not answering
    next_probe_at: float = 0.0
    last_error: str = ""
    facts: str = ""  # joinops.arrivals.host.HostFacts, as JSON
    proposal: str = ""  # joinops.arrivals.host.Proposal, as JSON

    def to_hash(self) -> dict[str, str]:
        return {f.name: str(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_hash(cls, raw: dict[bytes, bytes]) -> Arrival:
        values = {k.decode(): v.decode() for k, v in raw.items()}
        return cls(
            cluster=values["cluster"],
            file=values.get("file", ""),
            state=State(values.get("state", "waiting")),
            first_seen=float(values.get("first_seen") or 0),
            announced_at=float(values.get("announced_at") or 0),
            channel=values.get("channel", ""),
            message_ts=values.get("message_ts", ""),
            request_id=values.get("request_id", ""),
            by=values.get("by", ""),
            attempts=int(values.get("attempts") or 0),
            next_probe_at=float(values.get("next_probe_at") or 0),
            last_error=values.get("last_error", ""),
            facts=values.get("facts", ""),
            proposal=values.get("proposal", ""),
        )


class ArrivalStore:
    def __init__(self, client: redis.Redis, clock: Callable[[], float] = time.time) -> None:
        self.redis = client
        self.clock = clock
        self._transition = client.register_script(_TRANSITION)
        self._seen = client.register_script(_SEEN)

    def seen(self, cluster: str, file: str) -> Arrival:
        """The host's record, made (waiting, first seen now) when there is none yet."""
        fresh = Arrival(cluster, file, first_seen=self.clock())
        pairs = [item for pair in fresh.to_hash().items() for item in pair]
        self._seen(keys=[PREFIX + cluster, HOSTS], args=[cluster, file, fresh.first_seen, *pairs])
        found = self.get(cluster)
        assert found is not None
        return found

    def get(self, cluster: str) -> Arrival | None:
        raw = self.redis.hgetall(PREFIX + cluster)
        if not raw or b"state" not in raw or b"first_seen" not in raw:
            return None
        return Arrival.from_hash(raw)

    def all(self) -> list[Arrival]:
        """Every host seen, the first seen first."""
        names = [n.decode() for n in self.redis.zrange(HOSTS, 0, -1)]
        return [a for a in (self.get(n) for n in names) if a is not None]

    def transition(
        self, cluster: str, to: State, allowed: tuple[State, ...], **fields: object
    ) -> bool:
        """Move the host to `to` if it is in one of `allowed`, setting `fields`, atomically."""
        args: list[str] = [str(to), ",".join(str(s) for s in allowed)]
        for name, value in fields.items():
            args += [name, str(value)]
        return bool(self._transition(keys=[PREFIX + cluster], args=args))

    def update(self, cluster: str, **fields: object) -> None:
        """Fields that do not change the state (the backoff, the announcement's ts)."""
        self.redis.hset(PREFIX + cluster, mapping={k: str(v) for k, v in fields.items()})

    def report_once(self, key: str) -> bool:
        """True the first time `key` is reported (across restarts and bots), False after."""
        return bool(self.redis.sadd(REPORTED, key))
