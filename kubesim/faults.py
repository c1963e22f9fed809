"""Injected faults: latency, error answers on the Nth matching call, unreachability, and etcd
compacting under a list (its continue tokens expire)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass

from kubesim.errors import ApiError

_MESSAGES = {
    429: "Too many requests, please try again later.",
    500: "Internal error occurred: injected fault",
    502: "Bad Gateway",
    503: "The server is currently unable to handle the request",
    504: "The server was unable to return a response in the time allotted, but may still be "
    "processing the request",
}


@dataclass
class Fault:
    status: int | None = None
    nth: int = 1  # fire from the nth matching call on
    path_contains: str = ""
    method: str | None = None
    times: int | None = 1  # how many times it fires; None: forever
    latency_seconds: float = 0.0
    retry_after: int = 1  # Retry-After seconds for 429/503
    too_large_resource_version: bool = False  # the watch cache's 504 (see add_too_large_rv)
    compact: bool = False  # etcd compacts to now before the request is served (add_compaction)
    seen: int = 0
    fired: int = 0

    def matches(self, method: str, path: str) -> bool:
        if self.method and self.method.upper() != method:
            return False
        if self.too_large_resource_version and not _RESOURCE_VERSION.search(path):
            return False
        return self.path_contains in path

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.fired >= self.times

    def error(self) -> ApiError | None:
        if self.compact:
            return None
        if self.too_large_resource_version:
            return too_large_resource_version(self.path_contains)
        if self.status is None:
            return None
        message = _MESSAGES.get(self.status, "injected fault")
        retry = self.retry_after if self.status in (429, 503) else None
        details = {"retryAfterSeconds": retry} if retry else {}
        return ApiError(self.status, message, details=details, retry_after=retry)


_RESOURCE_VERSION = re.compile(r"[?&]resourceVersion=(?!0(?:&|$))[^&]+")


def too_large_resource_version(_: str = "") -> ApiError:
    """What a real API server answers when a request's resourceVersion is ahead of its watch
    cache (recorded: fixtures/real-apiserver/list-504-too-large-resource-version.json)."""
    return ApiError(
        504,
        "Timeout: Too large resource version: 1000426, current: 428",
        reason="Timeout",
        details={
            "causes": [
                {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
            ],
            "retryAfterSeconds": 1,
        },
        retry_after=1,
    )


class Faults:
    """Per-cluster fault rules; ``add(reachable=False)`` stops the server listening."""

    def __init__(self, set_reachable: Callable[[bool], None]) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []
        self._set_reachable = set_reachable

    def add(
        self,
        status: int | None = None,
        nth: int = 1,
        path_contains: str = "",
        times: int | None = 1,
        latency_seconds: float = 0.0,
        method: str | None = None,
        retry_after: int = 1,
        reachable: bool | None = None,
    ) -> Fault | None:
        if reachable is not None:
            self._set_reachable(reachable)
            if status is None and not latency_seconds:
                return None
        fault = Fault(status, nth, path_contains, method, times, latency_seconds, retry_after)
        with self._lock:
            self._faults.append(fault)
        return fault

    def add_too_large_resource_version(
        self, path_contains: str = "", times: int | None = 1
    ) -> Fault:
        """Requests carrying a resourceVersion (list or watch) whose path contains
        `path_contains` answer 504 "Too large resource version", as a real API server does
        when its watch cache is behind. Requests without one (a fresh list) are served."""
        fault = Fault(path_contains=path_contains, times=times, too_large_resource_version=True)
        with self._lock:
            self._faults.append(fault)
        return fault

    def add_compaction(
        self, path_contains: str = "continue=", nth: int = 1, times: int | None = 1
    ) -> Fault:
        """Before the nth request whose path contains `path_contains` (by default the second
        page of a list: it carries `continue=`) is served, etcd compacts to the current
        revision, as the API server's compactor does every 5 minutes: that list's continue
        token, and any resourceVersion before now, are then too old (410 Expired)."""
        fault = Fault(path_contains=path_contains, nth=nth, times=times, compact=True)
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def decide(self, method: str, path: str) -> tuple[float, ApiError | None, bool]:
        """Latency to add, error to answer (if any), and whether etcd compacts first."""
        latency, error, compact = 0.0, None, False
        with self._lock:
            for fault in self._faults:
                if fault.exhausted or not fault.matches(method, path):
                    continue
                fault.seen += 1
                if fault.seen < fault.nth:
                    continue
                fault.fired += 1
                latency += fault.latency_seconds
                compact = compact or fault.compact
                if error is None:
                    error = fault.error()
        return latency, error, compact
