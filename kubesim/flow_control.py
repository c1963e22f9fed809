"""API Priority and Fairness as a client sees it: a request it will not serve now is answered
429 with a Retry-After, before authorization or any handler runs (so nothing was done).

What kube-apiserver sends (staging/src/k8s.io/apiserver/pkg/server/filters: the APF filter's
`tooManyRequests`, shared with max-in-flight): `http.Error`'s plain-text body "Too many
requests, please try again later.", `Retry-After` (1 s, growing to at most 32 s while it keeps
dropping: dropped_requests_tracker.go), and the matched FlowSchema's and PriorityLevel's UIDs.
The body is no `Status`: clients make the reason (TooManyRequests) of the code themselves.

Two ways to be throttled, both off by default:
- `limit`: at most that many requests of one user (bearer token) in flight at once; watches
  count only while they start (APF's "watch initialization"), not while they stream. The real
  filter queues a request a while before it drops it; here it is dropped at once.
- `reject_every`: every Nth request of a user is dropped whatever the load (a third of the calls
  with N = 3), to test a client against a steady rate of 429s.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from kubesim.http_messages import Request, Response

MESSAGE = "Too many requests, please try again later.\n"
FLOW_SCHEMA_UID = "4e54d3f4-9b1a-4c0e-8f5e-6b2f0c1d2a31"  # a fixed "global-default" schema
PRIORITY_LEVEL_UID = "9c1f2b7e-3d4a-4f6b-a8e2-0d5c7b9e1f40"


def too_many_requests(retry_after: int = 1) -> Response:
    """The APF filter's answer, as sent."""
    return Response(
        429,
        MESSAGE.encode(),
        {
            "Content-Type": "text/plain; charset=utf-8",
            "X-Content-Type-Options": "nosniff",
            "Retry-After": str(retry_after),
            "X-Kubernetes-PF-FlowSchema-UID": FLOW_SCHEMA_UID,
            "X-Kubernetes-PF-PriorityLevel-UID": PRIORITY_LEVEL_UID,
        },
    )


class FlowControl:
    """One cluster's API Priority and Fairness (see the module's doc)."""

    def __init__(self) -> None:
        self.limit: int | None = None  # requests in flight per user; None: no limit
        self.reject_every: int | None = None  # drop every Nth request of a user; None: never
        self.retry_after = 1  # seconds, in every 429
        self.rejected = 0  # 429s answered so far
        self._lock = threading.Condition()
        self._in_flight: dict[str, int] = {}
        self._seen: dict[str, int] = {}

    def wait_in_flight(self, count: int, timeout: float = 10.0) -> None:
        """Block until `count` requests (all users) hold a seat; TimeoutError otherwise."""
        with self._lock:
            if not self._lock.wait_for(lambda: sum(self._in_flight.values()) >= count, timeout):
                raise TimeoutError(f"{count} requests were not in flight within {timeout} s")

    @contextmanager
    def admitted(self, req: Request) -> Iterator[Response | None]:
        """Yields None when the request may be served (its seat is held until the block
        ends), or the 429 to answer instead."""
        user = req.headers.get("authorization", "")
        with self._lock:
            seen = self._seen[user] = self._seen.get(user, 0) + 1
            busy = self.limit is not None and self._in_flight.get(user, 0) >= self.limit
            if busy or (self.reject_every and seen % self.reject_every == 0):
                self.rejected += 1
                refused: Response | None = too_many_requests(self.retry_after)
            else:
                refused = None
                self._in_flight[user] = self._in_flight.get(user, 0) + 1
                self._lock.notify_all()
        if refused is not None:
            yield refused
            return
        try:
            yield None
        finally:
            with self._lock:
                self._in_flight[user] -= 1
