"""Root messages kept current: `chat.update` coalesced per message, paced, never out of order,
and at least once.

The relay asks for a message to be re-rendered (`want(request_id, within)`) each time its
record changes; a message is sent at most one update at a time, and each update renders the
record as it is when the update may go (after its `chat.update` token, bot/pacing.py). So
however many changes pile up while a message waits for Slack's Tier 3 budget, one update carries
the newest of them, and a render never overtakes a newer one ("cancelling" never lands after
"cancelled"; across processes and past the render lock, bot/root_version.py). `within` spaces a
message's updates: a batch's table is re-rendered at most every `slack.batch_every`, a
migration's progress lines every few seconds; a change of state asks with 0 and goes as soon as
the budget allows.

Nothing wanted is lost. A wanted message is written to a Redis set (`joinops:bot:roots-wanted`)
before `want` returns, and leaves it only once Slack shows a render made after the last `want`;
so the relay may acknowledge an event as soon as it asked. An update that failed for a reason
that passes (Slack's 5xx or 429 outlasting the client's own retries, a refused token, Redis) is
tried again after a pause that doubles from `BACKOFF_FIRST` to `BACKOFF_LONGEST` seconds
(`chat.update` does the same thing however often it is sent). `stop()` sends what is wanted at
once (a message pausing after a failure keeps its pause), for a bounded time; what is left stays
in the set, and the next relay's `resume()` renders it. An update a click made itself and
Slack refused for a while (bot/message.py `refresh`) is handed over the same way (`hand_over`:
into the set), and the relay's refresher `adopt`s it within `ADOPT_EVERY` seconds.

The waiting happens in a small pool of its own, never in the relay's thread.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

from redis import Redis, RedisError

from bot.pacing import Pacing
from bot.root_version import Outcome

log = logging.getLogger(__name__)

SENDERS = 4  # updates in flight at once, for different messages
FORGET = 3600.0  # seconds after its last update a message's slot is dropped
WANTED = "joinops:bot:roots-wanted"  # request ids whose root waits for a render
BACKOFF_FIRST = 1.0  # seconds before a failed update is tried again; doubles each failure
BACKOFF_LONGEST = 60.0
ADOPT_EVERY = 5.0  # seconds between two looks for updates handed over (`adopt`)


class Renders(Protocol):
    def update_root(self, request_id: str) -> Outcome: ...


@dataclass
class _Slot:
    due: float = 0.0  # when the next update may go
    wanted: bool = False  # the record changed since the last render
    sending: bool = False
    last: float = float("-inf")  # when the last update was rendered
    failures: int = 0  # failed updates in a row


class Refresher:
    def __init__(
        self, messages: Renders, pacing: Pacing | None = None, redis: Redis | None = None
    ) -> None:
        self.messages = messages
        self.pacing = pacing
        self.redis = redis  # where what is wanted is kept across restarts; None: in memory
        self._cond = threading.Condition()
        self._slots: dict[str, _Slot] = {}
        self._pool = ThreadPoolExecutor(SENDERS, thread_name_prefix="joinops-refresh")
        self._stopped = False
        self.sent = 0
        self.failed = 0  # updates that failed and were put back
        self._thread = threading.Thread(target=self._schedule, name="joinops-refresh", daemon=True)
        self._thread.start()

    def want(self, request_id: str, within: float = 0.0) -> None:
        """The record of `request_id` changed: update its message, at most every `within` s.
        Once this returns the wish is kept in Redis (raises when Redis is down)."""
        with self._cond:
            if self.redis is not None:
                self.redis.sadd(WANTED, request_id)
            slot = self._slots.setdefault(request_id, _Slot())
            due = max(time.monotonic(), slot.last + within)
            if not (slot.wanted and slot.failures):  # a failed one keeps its pause
                slot.due = min(slot.due, due) if slot.wanted else due
            slot.wanted = True
            self._cond.notify_all()

    def idle(self, timeout: float) -> bool:
        """Wait until every wanted update was sent; False if some were still due at `timeout`."""
        with self._cond:
            return self._cond.wait_for(
                lambda: not any(s.wanted or s.sending for s in self._slots.values()), timeout
            )

    def resume(self) -> int:
        """Render every message a stopped refresher left wanted; returns how many."""
        if self.redis is None:
            return 0
        wanted = [_s(m) for m in self.redis.smembers(WANTED)]
        for request_id in wanted:
            self.want(request_id)
        return len(wanted)

    def adopt(self) -> int:
        """Want every message another part of the bot handed over (`hand_over`: a click's own
        update failed) that this refresher is not about to send already; returns how many."""
        if self.redis is None:
            return 0
        handed = [_s(m) for m in self.redis.smembers(WANTED)]
        with self._cond:
            idle = [i for i in handed if not _busy(self._slots.get(i))]
        for request_id in idle:
            self.want(request_id)
        return len(idle)

    def stop(self, timeout: float = 5.0) -> None:
        """Send what is wanted now, for up to `timeout` s; what is left stays in Redis."""
        with self._cond:
            now = time.monotonic()
            for slot in self._slots.values():
                if slot.wanted and not slot.failures:
                    slot.due = min(slot.due, now)  # not spaced any more: the last chance
            self._cond.notify_all()
        self.idle(timeout)
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        self._thread.join(timeout)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _schedule(self) -> None:
        with self._cond:
            while not self._stopped:
                now = time.monotonic()
                next_due = None
                for request_id, slot in list(self._slots.items()):
                    if not slot.wanted and not slot.sending and now - slot.last > FORGET:
                        del self._slots[request_id]  # a message long quiet: forgotten
                    if not slot.wanted or slot.sending:
                        continue
                    if slot.due <= now:
                        slot.sending = True
                        self._pool.submit(self._send, request_id, slot)
                    elif next_due is None or slot.due < next_due:
                        next_due = slot.due
                self._cond.wait(None if next_due is None else next_due - now)

    def _send(self, request_id: str, slot: _Slot) -> None:
        outcome = Outcome.FAILED
        try:
            if self.pacing is None:
                outcome = self._render(request_id, slot)
            else:
                with self.pacing.prepaid("chat.update"):
                    outcome = self._render(request_id, slot)
        except Exception:
            log.exception("request %s: its message was not updated", request_id)
        finally:
            self._settle(request_id, slot, outcome)

    def _render(self, request_id: str, slot: _Slot) -> Outcome:
        with self._cond:
            slot.wanted = False  # what changes from here on is wanted again, for the next one
            slot.last = time.monotonic()
        outcome = self.messages.update_root(request_id)
        self.sent += 1
        return outcome

    def _settle(self, request_id: str, slot: _Slot, outcome: Outcome) -> None:
        with self._cond:
            slot.sending = False
            if outcome is Outcome.FAILED:
                self.failed += 1
                slot.failures += 1
                pause = min(BACKOFF_FIRST * 2 ** (slot.failures - 1), BACKOFF_LONGEST)
                slot.due, slot.wanted = time.monotonic() + pause, True
            else:
                slot.failures = 0
                if not slot.wanted:
                    self._forget(request_id)
            self._cond.notify_all()

    def _forget(self, request_id: str) -> None:
        """Slack shows the newest render: no longer wanted (in Redis; under `_cond`)."""
        if self.redis is None:
            return
        try:
            self.redis.srem(WANTED, request_id)
        except RedisError as e:  # left in the set: one more render after a restart
            log.warning("request %s: could not mark its message current: %s", request_id, e)


def _busy(slot: _Slot | None) -> bool:
    return slot is not None and (slot.wanted or slot.sending)


def hand_over(redis: Redis, request_id: str) -> None:
    """A root update that failed elsewhere (a click's): the relay's refresher takes it on
    (`Refresher.adopt`). Never raises: Redis down too, the request's next event renders it."""
    try:
        redis.sadd(WANTED, request_id)
    except RedisError as e:
        log.warning("request %s: its message's update was not handed over: %s", request_id, e)


def _s(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
