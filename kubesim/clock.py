"""World clock: wall time plus an offset that tests can advance."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime


class Clock:
    """Time as the simulated clusters see it.

    ``now()`` is real UTC time shifted by ``advance()``; timed behaviours (token expiry,
    uploaded-certificate expiry) read it, so a test can jump two hours ahead instantly.
    """

    def __init__(self) -> None:
        self._offset = 0.0
        self._lock = threading.Lock()

    def time(self) -> float:
        """Seconds since the epoch, simulated."""
        with self._lock:
            return time.time() + self._offset

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.time(), tz=UTC)

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._offset += seconds


_last: tuple[int, str] = (-1, "")


def rfc3339(ts: float | datetime) -> str:
    """RFC 3339 with second precision and a Z, as the API server writes metav1.Time."""
    global _last
    if isinstance(ts, datetime):
        return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    second = int(ts)
    cached = _last
    if cached[0] == second:
        return cached[1]
    text = datetime.fromtimestamp(second, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    _last = (second, text)
    return text


def parse_rfc3339(value: str) -> float | None:
    """Seconds since the epoch, or None when the value is not RFC 3339."""
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except (ValueError, AttributeError):
        return None
