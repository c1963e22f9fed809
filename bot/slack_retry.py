"""Slack's transient failures are waited out, for a bounded time, by the Web API client itself.

What is retried depends on whether a second try could do the thing twice:

- A call that posts something (`chat.postMessage`, `chat.postEphemeral`, completing a file
  upload, opening a view) is retried only when Slack certainly did not act on it: a rate limit
  (429, after its `Retry-After`) or a connection that failed before the request was sent
  (refused, unresolvable, reset while sending: urllib's `URLError`). A read timeout, a
  connection dropped while waiting for the answer or a 5xx may come after Slack posted: retrying
  would post twice, with live buttons nobody updates, so the call fails (`may_have_posted`
  says so): a thread reply is then looked for before it is posted again (bot/post_once.py),
  anything else is logged.
- Every other call (`chat.update`, `conversations.open`, lookups) does the same thing however
  often it is made: 429, 5xx and any dropped connection are retried.

Retries back off exponentially (0.5 s doubling to 8 s, with jitter) until `budget` seconds have
gone since the call began; then the SDK raises as usual. Counting attempts instead (the SDK's
built-in handlers: three to five) drops a reply whenever Slack misbehaves for more than a few
seconds; a time bound does not. A 429 also tells `on_rate_limited` (the process's pacing,
bot/pacing.py), so every thread holds back, not only the one that met it. Every such failure
counts in `joinops_slack_api_errors_total{method}`.

An answer Slack gave on purpose (`ok: false` with `channel_not_found`, …) is not retried.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from http.client import RemoteDisconnected
from urllib.error import HTTPError, URLError

from slack_sdk.errors import SlackApiError
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
NOT_REPEATABLE = frozenset(
    {
        "chat.postMessage",
        "chat.postEphemeral",
        "chat.scheduleMessage",
        "files.completeUploadExternal",
        "files.upload",
        "views.open",
    }
)


class TransientSlackErrors(RetryHandler):
    def __init__(
        self,
        budget: float = BUDGET,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        on_rate_limited: Callable[[str, float], None] | None = None,
    ) -> None:
        super().__init__(max_retry_count=1000)  # the bound is `budget`; the SDK stops at 100
        self.budget = budget
        self._on_rate_limited = on_rate_limited
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
        method = _method(request.url)
        if not _transient(method, response, error):
            return False
        SLACK_ERRORS.labels(method).inc()
        spent = self._clock() - _started(state, self._clock)
        pause = self._pause(state, response)
        if self._on_rate_limited is not None and _status(response, error) == 429:
            self._on_rate_limited(method, pause)
        return spent + pause <= self.budget

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        return _transient(_method(request.url), response, error)

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


def _transient(method: str, response: HttpResponse | None, error: Exception | None) -> bool:
    """Whether to try again: a failure that passes, and (for a post) one Slack did not act on."""
    status = _status(response, error)
    if method in NOT_REPEATABLE:
        return status == 429 or (status is None and isinstance(error, URLError))
    if status is not None:
        return status == 429 or status >= 500
    return isinstance(error, _CONNECTION_ERRORS)


def may_have_posted(error: Exception) -> bool:
    """Whether a post that failed with `error` may still have been posted by Slack: no answer
    came after the request was sent (a read timeout, a connection dropped while waiting), or a
    5xx came (Slack may answer one after acting). The SDK raises the first as they are; urllib
    wraps what failed before the request was sent in `URLError` (Slack saw nothing)."""
    if isinstance(error, SlackApiError):
        return int(getattr(error.response, "status_code", 200) or 200) >= 500
    if isinstance(error, URLError):
        return False
    return isinstance(error, (TimeoutError, ConnectionError))


def _status(response: HttpResponse | None, error: Exception | None) -> int | None:
    if response is not None:
        return response.status_code
    if isinstance(error, HTTPError):
        return error.code
    return None


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
