"""The relay's lanes: one ordered queue of Slack work per channel, each served by its own thread.

A channel's thread replies go out one after another, in the order the events came (so a thread
reads in order), and may wait there for Slack's per-channel posting budget (bot/pacing.py)
without holding up any other channel, or the relay's reading of the event stream.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor


class Lanes:
    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._lanes: dict[str, ThreadPoolExecutor] = {}
        self._queued = 0

    def submit(self, key: str, work: Callable[[], None]) -> None:
        """Run `work` after everything submitted before it on lane `key`."""
        with self._lock:
            lane = self._lanes.get(key)
            if lane is None:
                lane = self._lanes[key] = ThreadPoolExecutor(1, thread_name_prefix="joinops-lane")
            self._queued += 1
        lane.submit(self._run, work)

    @property
    def queued(self) -> int:
        """Work submitted and not yet finished, on every lane."""
        with self._lock:
            return self._queued

    def idle(self, timeout: float) -> bool:
        """Wait until every lane has finished its work; False if some was left at `timeout`."""
        with self._lock:
            return self._lock.wait_for(lambda: self._queued == 0, timeout)

    def stop(self, timeout: float) -> None:
        """Finish what is queued, for up to `timeout` seconds; what is left is dropped (its
        stream entries stay unacknowledged: the next relay delivers them)."""
        self.idle(timeout)
        with self._lock:
            lanes, self._lanes = list(self._lanes.values()), {}
        for lane in lanes:
            lane.shutdown(wait=False, cancel_futures=True)

    def _run(self, work: Callable[[], None]) -> None:
        try:
            work()
        finally:
            with self._lock:
                self._queued -= 1
                self._lock.notify_all()
