"""Faults the simulated Slack injects into Web API calls: rate limits, server errors, latency.

A fault matches a method (or every method), applies to the next `times` matching calls, and is
then spent. Faults are checked in the order they were added; the first live match wins.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass
class Fault:
    """One injected misbehaviour.

    method: Web API method it applies to (`"chat.postMessage"`); None means every method.
    status: HTTP status to answer with. 200 keeps the normal answer unless `error` is set;
        429 answers `{"ok": false, "error": "ratelimited"}` with a `Retry-After` header;
        any other status answers `{"ok": false, "error": error or "internal_error"}`.
    error: Slack error code to answer with (`"channel_not_found"`), with `status` (200 default,
        as Slack does for API-level errors).
    retry_after: seconds for the `Retry-After` header of a 429 (default 1, like Slack's minimum).
    latency: seconds to wait before answering, in addition to any of the above.
    times: how many matching calls it applies to; None means every call until removed.
    hits: how many calls it has applied to so far.
    """

    method: str | None = None
    status: int = 200
    error: str | None = None
    retry_after: int = 1
    latency: float = 0.0
    times: int | None = 1
    hits: int = 0

    @property
    def spent(self) -> bool:
        return self.times is not None and self.hits >= self.times

    @property
    def changes_answer(self) -> bool:
        """Whether the fault replaces the normal answer (rather than only delaying it)."""
        return self.status != 200 or self.error is not None

    def body(self) -> dict[str, object]:
        if self.status == 429:
            return {"ok": False, "error": self.error or "ratelimited"}
        if self.status == 200:
            return {"ok": False, "error": self.error}
        return {"ok": False, "error": self.error or "internal_error"}

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)} if self.status == 429 else {}


class Faults:
    """The fault hooks of one SlackSim (`sim.faults`). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []

    def add(
        self,
        method: str | None = None,
        *,
        status: int = 200,
        error: str | None = None,
        retry_after: int = 1,
        latency: float = 0.0,
        times: int | None = 1,
    ) -> Fault:
        """Inject a fault; returns it so a test can read `hits` afterwards."""
        if times is not None and times < 1:
            raise ValueError("times must be at least 1, or None for every call")
        if latency < 0 or retry_after < 0:
            raise ValueError("latency and retry_after cannot be negative")
        fault = Fault(method, status, error, retry_after, latency, times)
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def take(self, method: str) -> Fault | None:
        """The fault to apply to this call of `method`, counting the hit; None if there is none."""
        with self._lock:
            for fault in self._faults:
                if fault.spent or fault.method not in (None, method):
                    continue
                fault.hits += 1
                return fault
        return None

    def __len__(self) -> int:
        with self._lock:
            return sum(1 for f in self._faults if not f.spent)
