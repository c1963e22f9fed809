"""Answers looked up in Slack and remembered for a while, one lookup per key at a time.

Two ways to ask:
- `known` answers from memory only — what an ack may use (it must not wait on Slack). A key
  never looked up, or looked up longer than `ttl` ago, is unknown (None): the caller
  acknowledges first and asks again with `get` after the ack. An entry past `REFRESH_AT` of its
  ttl is refreshed in the background while it is still used, so a key in use stays known.
- `get` looks the key up when it is not fresh.

Lookups are single-flight: while one key's lookup is in flight, every other asker waits for its
answer instead of calling Slack again, so a burst of clicks costs one call per key. A failed
lookup (`fetch` returns None) is not remembered.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")

REFRESH_AT = 0.8  # of the ttl: an entry this old is refreshed in the background while in use


class Lookups(Generic[V]):
    def __init__(
        self,
        fetch: Callable[[str], V | None],
        *,
        ttl: float,
        wait: float,
        clock: Callable[[], float] = time.monotonic,
        name: str = "joinops-lookup",
    ) -> None:
        """`fetch`: one Slack call for a key, None when Slack could not say; `wait`: how long a
        second asker waits for the first one's lookup."""
        self._fetch = fetch
        self._ttl = ttl
        self._wait = wait
        self._clock = clock
        self._name = name
        self._values: dict[str, tuple[float, V]] = {}
        self._in_flight: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def known(self, key: str) -> V | None:
        """From memory: the value if looked up less than `ttl` ago. Never calls Slack here."""
        with self._lock:
            cached = self._values.get(key)
        if cached is None:
            return None
        age = self._clock() - cached[0]
        if age >= self._ttl:
            return None
        if age >= self._ttl * REFRESH_AT:
            self._refresh_in_background(key)
        return cached[1]

    def get(self, key: str, *, again: bool = False) -> V | None:
        """The value, looked up when not fresh (`again`: looked up whatever is remembered);
        None when Slack could not say."""
        fresh = None if again else self._fresh(key)
        return fresh if fresh is not None else self._look_up(key)

    def _fresh(self, key: str) -> V | None:
        with self._lock:
            cached = self._values.get(key)
        if cached is not None and self._clock() - cached[0] < self._ttl:
            return cached[1]
        return None

    def _look_up(self, key: str) -> V | None:
        """One lookup per key at a time: a second asker waits for the first one's answer."""
        with self._lock:
            flight = self._in_flight.get(key)
            leader = flight is None
            if leader:
                flight = self._in_flight[key] = threading.Event()
        assert flight is not None
        if not leader:
            flight.wait(self._wait)
            return self._fresh(key)
        try:
            started = self._clock()
            value = self._fetch(key)
            if value is not None:
                with self._lock:
                    self._values[key] = (started, value)
            return value
        finally:
            with self._lock:
                del self._in_flight[key]
            flight.set()

    def _refresh_in_background(self, key: str) -> None:
        with self._lock:
            if key in self._in_flight:
                return
        threading.Thread(target=self._look_up, args=(key,), name=self._name, daemon=True).start()
