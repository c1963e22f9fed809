"""Root messages kept current: `chat.update` coalesced per message, paced, never out of order.

The relay asks for a message to be re-rendered (`want(request_id, within)`) each time its
record changes; a message is sent at most one update at a time, and each update renders the
record as it is when the update may go (after its `chat.update` token, bot/pacing.py). So
however many changes pile up while a message waits for Slack's Tier 3 budget, one update carries
the newest of them, and a render never overtakes a newer one ("cancelling" never lands after
"cancelled"). `within` spaces a message's updates: a batch's table is re-rendered at most every
`slack.batch_every`, a migration's progress lines every few seconds; a change of state asks with
0 and goes as soon as the budget allows.

The waiting happens in a small pool of its own, never in the relay's thread.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

from bot.pacing import Pacing

log = logging.getLogger(__name__)

SENDERS = 4  # updates in flight at once, for different messages
FORGET = 3600.0  # seconds after its last update a message's slot is dropped


class Renders(Protocol):
    def refresh(self, request_id: str) -> bool: ...


@dataclass
class _Slot:
    due: float = 0.0  # when the next update may go
    wanted: bool = False  # the record changed since the last render
    sending: bool = False
    last: float = float("-inf")  # when the last update was rendered


class Refresher:
    def __init__(self, messages: Renders, pacing: Pacing | None = None) -> None:
        self.messages = messages
        self.pacing = pacing
        self._cond = threading.Condition()
        self._slots: dict[str, _Slot] = {}
        self._pool = ThreadPoolExecutor(SENDERS, thread_name_prefix="joinops-refresh")
        self._stopped = False
        self.sent = 0
        self._thread = threading.Thread(target=self._schedule, name="joinops-refresh", daemon=True)
        self._thread.start()

    def want(self, request_id: str, within: float = 0.0) -> None:
        """The record of `request_id` changed: update its message, at most every `within` s."""
        with self._cond:
            slot = self._slots.setdefault(request_id, _Slot())
            due = max(time.monotonic(), slot.last + within)
            slot.due = min(slot.due, due) if slot.wanted else due
            slot.wanted = True
            self._cond.notify_all()

    def idle(self, timeout: float) -> bool:
        """Wait until every wanted update was sent; False if some were still due at `timeout`."""
        with self._cond:
            return self._cond.wait_for(
                lambda: not any(s.wanted or s.sending for s in self._slots.values()), timeout
            )

    def stop(self, timeout: float = 5.0) -> None:
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
        try:
            if self.pacing is None:
                self._render(request_id, slot)
            else:
                with self.pacing.prepaid("chat.update"):
                    self._render(request_id, slot)
        except Exception:
            log.exception("request %s: its message was not updated", request_id)
        finally:
            with self._cond:
                slot.sending = False
                self._cond.notify_all()

    def _render(self, request_id: str, slot: _Slot) -> None:
        with self._cond:
            slot.wanted = False  # what changes from here on is wanted again, for the next one
            slot.last = time.monotonic()
        self.messages.refresh(request_id)
        self.sent += 1
