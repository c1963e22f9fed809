"""`Retry-After` honoured as client-go honours it (k8s.io/client-go/rest: `request.go`,
`with_retry.go` `checkWait`, `maxRetries`), for every call joinops makes to an API server.

`install(api_client, cluster)` puts `RetryAfterRest` under the official client's `ApiClient`
(as its `rest_client`), so every API object built on that client goes through it, watches
included. `KubeCluster` installs it on its own client: every Kubernetes call of the project
passes here. urllib3's own status retries are turned off on that client (it honours any
Retry-After, hours included, for reads only); its connection retries stay.

What is retried, and after how long:
- 429 Too Many Requests (API Priority and Fairness, max-in-flight): the server did not act on
  the request, so it is retried whatever its verb, after its Retry-After. client-go gives up at
  once on a 429 without a Retry-After; joinops retries it too, after `DEFAULT_WAIT_SECONDS`
  (1 s), as it does when the header is not a whole number of seconds.
- A 5xx carrying a valid Retry-After (the watch cache's 504 "Too large resource version",
  a 503 that says when): retried after it, as client-go does. A 5xx without one may have been
  acted on: it reaches the caller, whose step decides (workers/runner.py).
- A Retry-After above the cap (`DEFAULT_CAP_SECONDS`, 60 s, or `timeouts.retry_after_cap`) is
  cut to the cap: a server asking for hours would otherwise hold a worker for hours.
- At most `MAX_RETRIES` (10, client-go's) per call; then the last answer is the caller's
  (`ClusterRateLimited` once `KubeCluster.call` has translated a 429).
- Not evictions: an eviction's 429 is a disruption budget's "not now" (Retry-After 10 while
  the budget is still being processed, none once it is exhausted). The drain retries those
  itself until its deadline and can stop at once, which a wait in here could not
  (workers/drain.py, workers/eviction_answers.py).

Every POST, PUT and PATCH also names joinops as its field manager (`fieldManager=joinops`,
unless the call named one), so the objects' managedFields say which fields joinops wrote (the
server otherwise names the client's user agent, `OpenAPI-Generator`).

Each wait is logged, and told to the listener the current thread set with `telling` (the step
under way: workers/api_waits.py says a long, capped or defaulted wait in the request's thread).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from kubernetes import client
from kubernetes.client import rest
from urllib3.util.retry import Retry

log = logging.getLogger(__name__)

MAX_RETRIES = 10  # client-go's rest.Request maxRetries
DEFAULT_WAIT_SECONDS = 1.0  # a 429 without a usable Retry-After
DEFAULT_CAP_SECONDS = 60.0  # the longest single wait
FIELD_MANAGER = "joinops"
WRITES = frozenset({"POST", "PUT", "PATCH"})
# urllib3 keeps retrying failed connections (as before), never an answer's status.
CONNECTION_RETRIES_ONLY = Retry(total=3, respect_retry_after_header=False)
_WHOLE_SECONDS = re.compile(r"^\s*\d+\s*$")


@dataclass(frozen=True)
class Wait:
    """One wait before a retry: what was answered, what the server asked, what joinops does."""

    cluster: str
    method: str
    path: str  # the URL's path, no query
    status: int
    asked: str | None  # the Retry-After header as sent; None when there was none
    seconds: float  # how long joinops waits
    retry: int  # 1 for the first retry, up to MAX_RETRIES

    @property
    def asked_seconds(self) -> int | None:
        return whole_seconds(self.asked)

    @property
    def capped(self) -> bool:
        asked = self.asked_seconds
        return asked is not None and asked > self.seconds

    @property
    def defaulted(self) -> bool:
        """The answer said no usable Retry-After (none, or not a whole number of seconds)."""
        return self.asked_seconds is None


Listener = Callable[[Wait], None]
_listening = threading.local()


@contextmanager
def telling(listener: Listener) -> Iterator[None]:
    """Within the block, this thread's waits are also told to `listener`."""
    previous = getattr(_listening, "listener", None)
    _listening.listener = listener
    try:
        yield
    finally:
        _listening.listener = previous


def whole_seconds(value: str | None) -> int | None:
    """A Retry-After as client-go reads it: a whole, non-negative number of seconds."""
    if value is None or not _WHOLE_SECONDS.match(value):
        return None
    return int(value)


def wait_seconds(status: int, retry_after: str | None, cap: float) -> float | None:
    """How long to wait before retrying an answer; None: it is not retried."""
    asked = whole_seconds(retry_after)
    if status == 429:
        return min(float(DEFAULT_WAIT_SECONDS if asked is None else asked), cap)
    if status >= 500 and asked is not None:
        return min(float(asked), cap)
    return None


def with_field_manager(method: str, url: str) -> str:
    """`url` with `fieldManager=joinops` for a write that names no field manager."""
    if method.upper() not in WRITES:
        return url
    if any(key == "fieldManager" for key, _ in parse_qsl(urlsplit(url).query)):
        return url
    return f"{url}{'&' if '?' in url else '?'}fieldManager={FIELD_MANAGER}"


class RetryAfterRest(rest.RESTClientObject):
    """The official client's REST layer, with Retry-After honoured (see the module's doc)."""

    def __init__(
        self,
        configuration: client.Configuration,
        cluster: str,
        cap_seconds: float = DEFAULT_CAP_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(configuration)
        self.cluster = cluster
        self.cap_seconds = cap_seconds
        self._sleep = sleep

    def request(
        self,
        method: str,
        url: str,
        headers: Any = None,
        body: Any = None,
        post_params: Any = None,
        _request_timeout: Any = None,
    ) -> rest.RESTResponse:
        url = with_field_manager(method, url)
        path = urlsplit(url).path
        retry = 0
        while True:
            response = super().request(
                method,
                url,
                headers=headers,
                body=body,
                post_params=post_params,
                _request_timeout=_request_timeout,
            )
            seconds = self._wait_for(response, path) if retry < MAX_RETRIES else None
            if seconds is None:
                return response
            retry += 1
            asked = response.getheader("Retry-After")
            _discard(response)
            self._wait(Wait(self.cluster, method, path, response.status, asked, seconds, retry))

    def _wait_for(self, response: rest.RESTResponse, path: str) -> float | None:
        if path.endswith("/eviction"):
            return None
        return wait_seconds(response.status, response.getheader("Retry-After"), self.cap_seconds)

    def _wait(self, wait: Wait) -> None:
        log.info(
            "%s: %s %s answered %s (Retry-After %s); retry %d of %d in %.1f s",
            wait.cluster,
            wait.method,
            wait.path,
            wait.status,
            wait.asked if wait.asked is not None else "none",
            wait.retry,
            MAX_RETRIES,
            wait.seconds,
        )
        listener: Listener | None = getattr(_listening, "listener", None)
        if listener is not None:
            listener(wait)
        self._sleep(wait.seconds)


def install(
    api_client: client.ApiClient,
    cluster: str,
    cap_seconds: float = DEFAULT_CAP_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Put `RetryAfterRest` under `api_client` (once), with urllib3's status retries off."""
    current = api_client.rest_client
    if isinstance(current, RetryAfterRest):
        current.cap_seconds = cap_seconds
        return
    api_client.configuration.retries = CONNECTION_RETRIES_ONLY
    current.close()
    api_client.rest_client = RetryAfterRest(api_client.configuration, cluster, cap_seconds, sleep)


def _discard(response: rest.RESTResponse) -> None:
    """Read what is left of an answer not used (a short Status) and free its connection."""
    raw = response.response
    try:
        raw.drain_conn()
    finally:
        raw.release_conn()
