"""Request records in Redis, with atomic state transitions.

A request is a Redis hash `joinops:request:<id>`; active ones are also in the set
`joinops:requests:active`, and each requester's requests (not a batch's nodes) in
`joinops:requests:of:<user>` until a count finds them ended (`open_count`); a pending one's
deadline goes into `joinops.requests.expiries` with it. Transitions are one
Lua script each: check the current state (and optionally a flag), set the new state and fields,
keep the active set right — in one step.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import redis

from joinops.metrics import TRANSITIONS
from joinops.requests.expiries import EXPIRIES
from joinops.requests.ids import new_request_id
from joinops.requests.lifecycle import State, sources_of
from joinops.requests.model import Role

PREFIX = "joinops:request:"
ACTIVE = "joinops:requests:active"
ALL = "joinops:requests:all"
OF_REQUESTER = "joinops:requests:of:"
POSTING = "joinops:posting:"  # a request whose message is being posted: its record follows
POSTING_SECONDS = 30  # the longest a click waits for the record of a message being posted
CLICK_POLL = 0.05  # seconds between two looks for that record

# KEYS: request hash, active set. ARGV: new state, allowed states, blocking flag, terminal?, id,
# then field/value pairs.
_TRANSITION = """
local cur = redis.call('HGET', KEYS[1], 'state')
if not cur then return {0, ''} end
local allowed = false
for s in string.gmatch(ARGV[2], '[^,]+') do if s == cur then allowed = true end end
if not allowed then return {0, cur} end
if ARGV[3] ~= '' and redis.call('HGET', KEYS[1], ARGV[3]) == '1' then return {0, cur} end
redis.call('HSET', KEYS[1], 'state', ARGV[1])
for i = 6, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
if ARGV[4] == '1' then redis.call('SREM', KEYS[2], ARGV[5])
else redis.call('SADD', KEYS[2], ARGV[5]) end
return {1, cur}
"""

# Set a flag only while the request is in one of the given states. KEYS: request hash.
# ARGV: flag, allowed states.
_FLAG_IF_STATE = """
local cur = redis.call('HGET', KEYS[1], 'state')
for s in string.gmatch(ARGV[2], '[^,]+') do
  if s == cur then redis.call('HSET', KEYS[1], ARGV[1], '1') return 1 end
end
return 0
"""


@dataclass
class Request:
    """One request: a migration (or, later, an Ignition file or a batch)."""

    id: str
    node: str
    source: str
    target: str
    role: Role = Role.WORKER
    kind: str = "migrate"
    state: State = State.PENDING
    requester: str = ""  # Slack user ID, or `cli:<user>`
    channel: str = ""  # Slack channel of the request message
    message_ts: str = ""  # the request message (root of the thread)
    created_at: float = 0.0
    expires_at: float = 0.0  # a pending request expires then
    decided_by: str = ""  # who approved, rejected or cancelled
    decided_at: float = 0.0
    outcome: str = ""  # the last outcome line (failure reason, where the node is)
    failed_step: str = ""
    agent_started: bool = False  # point of no return: the node has left (or is leaving) source
    destroys_source: bool = False
    from_control_plane: bool = False  # the node is a control plane in the source
    force: bool = False  # its drain deletes pods no controller recreates (kubectl drain --force)
    parent: str = ""  # the batch request this migration belongs to
    extra: dict[str, str] = field(default_factory=dict)

    def to_hash(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "extra":
                out.update({f"x:{k}": v for k, v in value.items()})
            elif isinstance(value, bool):
                out[f.name] = "1" if value else "0"
            else:
                out[f.name] = str(value)
        return out

    @classmethod
    def from_hash(cls, raw: dict[str, str]) -> Request:
        kwargs: dict[str, object] = {}
        extra = {k[2:]: v for k, v in raw.items() if k.startswith("x:")}
        for f in dataclasses.fields(cls):
            if f.name == "extra" or f.name not in raw:
                continue
            value = raw[f.name]
            if f.name in ("created_at", "expires_at", "decided_at"):
                kwargs[f.name] = float(value or 0)
            elif f.name in ("agent_started", "destroys_source", "from_control_plane", "force"):
                kwargs[f.name] = value == "1"
            elif f.name == "state":
                kwargs[f.name] = State(value)
            elif f.name == "role":
                kwargs[f.name] = Role(value)
            else:
                kwargs[f.name] = value
        return cls(extra=extra, **kwargs)  # type: ignore[arg-type]


class RequestStore:
    """Create, read and transition requests. `clock` is injected for tests."""

    def __init__(self, redis_client: redis.Redis, clock: Callable[[], float] = time.time) -> None:
        self.redis = redis_client
        self.clock = clock
        self._transition = redis_client.register_script(_TRANSITION)
        self._flag_if_state = redis_client.register_script(_FLAG_IF_STATE)

    def create(self, request: Request) -> Request:
        if not request.id:
            request.id = new_request_id()
        request.created_at = request.created_at or self.clock()
        key = PREFIX + request.id
        with self.redis.pipeline() as pipe:
            pipe.hset(key, mapping=dict(request.to_hash()))  # type: ignore[arg-type]
            pipe.sadd(ACTIVE, request.id)
            pipe.zadd(ALL, {request.id: request.created_at})
            if request.requester and not request.parent:
                pipe.sadd(OF_REQUESTER + request.requester, request.id)
            if request.state is State.PENDING and request.expires_at:
                EXPIRIES.add(pipe, request.id, request.expires_at)  # its deadline, with it
            pipe.execute()
        return request

    def open_count(self, requester: str, exact_from: int = 0) -> int:
        """How many of `requester`'s requests are open (a batch's nodes are not counted). Reads
        only that person's requests, and forgets those that ended.

        With `exact_from`, fewer requests than that remembered is answered by their number
        alone, an upper bound (some may have ended): enough to say a limit is not reached, at
        the cost of one command; the ended ones are forgotten once the count matters."""
        key = OF_REQUESTER + requester
        if exact_from and (remembered := int(self.redis.scard(key))) < exact_from:
            return remembered
        ids = list(self.redis.smembers(key))
        if not ids:
            return 0
        still = self.redis.smismember(ACTIVE, ids)
        ended = [i for i, active in zip(ids, still, strict=True) if not active]
        if ended:
            self.redis.srem(key, *ended)
        return len(ids) - len(ended)

    def get(self, request_id: str) -> Request | None:
        return _request_of(self.redis.hgetall(PREFIX + request_id))

    def state_of(self, request_id: str) -> State | None:
        """`get(...).state` alone: one field read, not the whole record (a running migration
        asks before each step whether it was cancelled)."""
        state = self.redis.hget(PREFIX + request_id, "state")
        return State(_s(state)) if state else None

    def get_many(
        self, request_ids: list[str], fields: tuple[str, ...] = ()
    ) -> list[Request | None]:
        """`get` of each id, in one round trip (a batch's children). With `fields` (names of
        `Request`'s fields, `x:<name>` for an extra), only those and the id are read, the
        others left at their defaults: a batch's look reads every child at every child's end,
        and a whole record is several times the fields it needs."""
        names = ("id", *fields) if fields else ()
        with self.redis.pipeline(transaction=False) as pipe:
            for request_id in request_ids:
                if names:
                    pipe.hmget(PREFIX + request_id, names)
                else:
                    pipe.hgetall(PREFIX + request_id)
            answers = pipe.execute()
        if names:
            keys = [name.encode() for name in names]  # as HGETALL answers them
            answers = [
                {k: v for k, v in zip(keys, raw, strict=True) if v is not None} for raw in answers
            ]
        return [_request_of(raw) for raw in answers]

    def posting(self, request_id: str) -> None:
        """Say that the message of `request_id` is being posted. Its record is written once it
        is posted (with its timestamp), so a click on its buttons can come before the record:
        `get_clicked` then waits for it instead of finding no such request."""
        self.redis.set(POSTING + request_id, 1, ex=POSTING_SECONDS)

    def get_clicked(self, request_id: str) -> Request | None:
        """`get`, for a click or a command naming a request: while its message is being posted
        (`posting`), its record is waited for, at most POSTING_SECONDS."""
        while (request := self.get(request_id)) is None and self.redis.exists(POSTING + request_id):
            time.sleep(CLICK_POLL)
        return request

    def transition(
        self, request_id: str, to: State, *, unless_flag: str = "", **fields: object
    ) -> tuple[bool, State | None]:
        """Move to `to` if the current state allows it (and `unless_flag` is not set).

        Returns (moved, state before). Exactly one of any number of racing callers wins.
        """
        pairs: list[str] = []
        for name, value in fields.items():
            pairs += [name, _encode(value)]
        allowed = ",".join(sorted(sources_of(to)))
        args = [str(to), allowed, unless_flag, "1" if to.is_terminal else "0", request_id, *pairs]
        moved, before = self._transition(keys=[PREFIX + request_id, ACTIVE], args=args)
        if moved:
            TRANSITIONS.labels(str(to)).inc()
        before_text = _s(before)
        return bool(moved), State(before_text) if before_text else None

    def set_flag_if_state(self, request_id: str, flag: str, states: set[State]) -> bool:
        allowed = ",".join(sorted(str(s) for s in states))
        return bool(self._flag_if_state(keys=[PREFIX + request_id], args=[flag, allowed]))

    def update(self, request_id: str, **fields: object) -> None:
        """Set fields that are not the state (message ts, outcome text...)."""
        if "state" in fields:
            raise ValueError("use transition() to change the state")
        self.redis.hset(PREFIX + request_id, mapping={k: _encode(v) for k, v in fields.items()})

    def active(self) -> list[Request]:
        ids = sorted(_s(i) for i in self.redis.smembers(ACTIVE))
        found = (self.get(i) for i in ids)
        return sorted((r for r in found if r), key=lambda r: r.created_at)

    def recent(self, count: int = 20) -> list[Request]:
        ids = [_s(i) for i in self.redis.zrevrange(ALL, 0, count - 1)]
        return [r for r in (self.get(i) for i in ids) if r]


def _request_of(raw: dict[bytes, bytes]) -> Request | None:
    if not raw or b"id" not in raw:
        return None  # never stored, or only a stray field left after a flush
    return Request.from_hash({_s(k): _s(v) for k, v in raw.items()})


def _encode(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def _s(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
