"""A piece of work repeated every few seconds in a daemon thread of `joinops worker`: the
expiry of undecided requests, the re-checks that are due, the recovery of dead workers' runs."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class Periodic:
    """Runs `work` every `interval` seconds until stopped; a failure is logged, never ends it."""

    def __init__(self, name: str, interval: float, work: Callable[[], object]) -> None:
        self.name, self.interval, self.work = name, interval, work
        self._stop = threading.Event()

    def start(self) -> Periodic:
        threading.Thread(target=self._loop, name=self.name, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.work()
            except Exception:  # a Redis hiccup must not end the loop
                log.exception("%s: one pass failed", self.name)
