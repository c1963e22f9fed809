"""Slack's transient failures are waited out, for a bounded time, by the Web API client itself.

A rate limit (429, after its `Retry-After`), a server error (5xx) or a dropped connection is
retried with exponential backoff (0.5 s doubling to 8 s, with jitter) until `budget` seconds
have gone since the call began; then the SDK raises as usual and the caller logs and goes on.
Counting attempts instead (the SDK's built-in handlers: three to five) drops a thread reply
whenever Slack misbehaves for more than a few seconds; a time bound does not. The relay posts
one reply at a time, in order, so a reply that waits holds the ones behind it: they arrive
late, in order, once. Every such failure counts in `joinops_slack_api_errors_total{method}`.

An answer Slack gave on purpose (`ok: false` with `channel_not_found`, …) is not retried.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from http.client import RemoteDisconnected
from urllib.error import HTTPError, URLError

from slack_sdk.http_retry.handler import RetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

from joinops.metrics import SLACK_ERRORS

BUDGET = 120.0  # seconds one call may spend waiting out Slack's transient failures
FIRST_PAUSE = 0.5  # seconds before the first retry of a 5xx or a dropped connection
LONGEST_PAUSE = 8.0
_STARTED = "joinops_started"
_CONNECTION_ERRORS = (URLError, ConnectionError, RemoteDisconnected, TimeoutError)


class TransientSlackErrors(RetryHandler):
    def __init__(
        self,
        budget: float = BUDGET,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(max_retry_count=1000)  # the bound is `budget`; the SDK stops at 100
        self.budget = budget
        self._clock = clock
        self._sleep = sleep

    def can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if not _transient(response, error):
            return False
        SLACK_ERRORS.labels(_method(request.url)).inc()
        spent = self._clock() - _started(state, self._clock)
        return spent + self._pause(state, response) <= self.budget

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        return _transient(response, error)

    def prepare_for_next_attempt(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        state.next_attempt_requested = True
        self._sleep(self._pause(state, response))
        state.increment_current_attempt()

    def _pause(self, state: RetryState, response: HttpResponse | None) -> float:
        values = state.custom_values if state.custom_values is not None else {}
        pause = values.get("pause")
        if pause is None:
            pause = _retry_after(response)
            if pause is None:
                backoff = min(FIRST_PAUSE * 2**state.current_attempt, LONGEST_PAUSE)
                pause = backoff * (0.5 + random.random() / 2)  # "equal jitter"
            values["pause"] = pause
            state.custom_values = values
        return float(pause)


def _transient(response: HttpResponse | None, error: Exception | None) -> bool:
    if response is not None:
        return response.status_code == 429 or response.status_code >= 500
    if isinstance(error, HTTPError):
        return error.code == 429 or error.code >= 500
    return isinstance(error, _CONNECTION_ERRORS)


def _started(state: RetryState, clock: Callable[[], float]) -> float:
    """When the call began (its first failure, to within the length of one answer)."""
    if state.custom_values is None:
        state.custom_values = {}
    started = state.custom_values.setdefault(_STARTED, clock())
    state.custom_values.pop("pause", None)  # a new failure: its own pause
    return float(started)


def _retry_after(response: HttpResponse | None) -> float | None:
    if response is None or response.status_code != 429:
        return None
    for name, values in response.headers.items():
        if name.lower() == "retry-after" and values:
            try:
                return max(float(values[0]), 0.0) + random.random() / 4
            except ValueError:
                return 1.0
    return 1.0


def _method(url: str) -> str:
    """`chat.postMessage` from `…/api/chat.postMessage`."""
    return url.rstrip("/").rsplit("/", 1)[-1][:60] or "?"
