"""Holding a Web API call on its way in, until the test lets it go: a deterministic seam.

`hold = sim.holds.add("chat.postMessage", lambda params: "Cordon" in params.get("text", ""))`
catches the first matching call before Slack acts on it; `hold.arrived` is set once it is
waiting. `hold.release()` lets it be answered as usual; `hold.drop()` answers nothing and closes
the connection, as if the process that sent it died before Slack handled it (nothing is posted).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

Matcher = Callable[[dict[str, Any]], bool]


class Hold:
    def __init__(self, method: str, matches: Matcher) -> None:
        self.method = method
        self.matches = matches
        self.arrived = threading.Event()
        self._let_go = threading.Event()
        self.dropped = False

    def release(self) -> None:
        self._let_go.set()

    def drop(self) -> None:
        self.dropped = True
        self._let_go.set()

    def wait_arrived(self, timeout: float = 30.0) -> None:
        if not self.arrived.wait(timeout):
            raise TimeoutError(f"no {self.method} call matched within {timeout}s")


class Holds:
    """The holds of one SlackSim (`sim.holds`); each catches one call. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: list[Hold] = []

    def add(self, method: str, matches: Matcher = lambda params: True) -> Hold:
        hold = Hold(method, matches)
        with self._lock:
            self._waiting.append(hold)
        return hold

    def clear(self) -> None:
        with self._lock:
            holds, self._waiting = self._waiting, []
        for hold in holds:
            hold.release()

    def keep(self, method: str, params: dict[str, Any], stopping: threading.Event) -> bool:
        """Hold this call if a hold matches it; False when it is to be dropped unanswered."""
        with self._lock:
            hold = next(
                (h for h in self._waiting if h.method == method and h.matches(params)), None
            )
            if hold is not None:
                self._waiting.remove(hold)
        if hold is None:
            return True
        hold.arrived.set()
        while not hold._let_go.wait(0.05) and not stopping.is_set():
            pass
        return not hold.dropped
