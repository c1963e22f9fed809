"""A Kubernetes API server asked a step to wait (a 429, or a 5xx with Retry-After: the client
waits, then retries the call, `joinops/clusters/retry_after.py`): the request's thread hears of
it, once per step run, when the wait is worth a line — `LONG_WAIT_SECONDS` or more, more than
the server asked (an absurd Retry-After, capped), or no usable Retry-After (defaulted to 1 s).
Shorter waits are only logged: a throttled API server answering "retry in 1 s" now and then is
normal under API Priority and Fairness.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from joinops.clusters import retry_after
from joinops.requests import step_texts
from workers.run import Run

LONG_WAIT_SECONDS = 5.0


def worth_saying(wait: retry_after.Wait) -> bool:
    return wait.seconds >= LONG_WAIT_SECONDS or wait.capped or wait.defaulted


@contextmanager
def said_once(run: Run, step: str) -> Iterator[None]:
    """Within the block, the first wait worth saying becomes a progress line of `step`."""
    said = False

    def listen(wait: retry_after.Wait) -> None:
        nonlocal said
        if said or not worth_saying(wait):
            return
        said = True
        text = step_texts.api_asked_to_wait(
            wait.cluster, wait.status, wait.asked_seconds, wait.seconds, retry_after.MAX_RETRIES
        )
        run.progress(step, text)

    with retry_after.telling(listen):
        yield
