"""Button clicks' work, off bolt's listener threads, as slash commands' is (`bot.commands`).

A click is acknowledged at once; what it does next can take a minute (Approve re-checks the
rules, up to `timeouts.check`; an arrival's Move asks for a whole request), so it runs here, in
a bounded pool of its own: bolt's listeners stay free for every command's and click's ack, and
clicks cannot take the threads the commands' work runs on either. At most `RUNNING` clicks run
and `WAITING` more wait; a click beyond that (`BOUND` in all) is answered at once "busy, try
again in a minute" and does nothing, rather than queued without bound.

Unlike a command's work (bot/post_ack.py), a click's stays in the acking process: clicks come a
few at a time (people deciding on a request), their work is mostly waiting for a worker's check,
and the "busy" bound above is a promise about this process's threads that a queue shared by the
replicas could not keep.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from slack_bolt.context import BoltContext

from bot.middleware import tell
from bot.texts import answers as answers_texts

log = logging.getLogger(__name__)

RUNNING = 16  # clicks worked on at once: mostly waiting for a worker's check, little CPU
WAITING = 48  # clicks waiting for one of those threads
BOUND = RUNNING + WAITING  # clicks taken at once; the next is answered "busy"

ClickListener = Callable[..., None]  # (ack, body, respond, context), as bolt injects them
OnError = Callable[[Exception, dict[str, Any], Any, logging.Logger], None]


class ClickPool:
    """Runs click listeners after their ack; `shutdown()` waits for the clicks taken."""

    def __init__(self, running: int = RUNNING, waiting: int = WAITING) -> None:
        self.bound = running + waiting
        self._pool = ThreadPoolExecutor(running, thread_name_prefix="joinops-click")
        self._taken = threading.BoundedSemaphore(self.bound)

    def acked_then_run(self, listener: ClickListener, on_error: OnError) -> ClickListener:
        """`listener` as bolt calls it: the click acknowledged at once, then run in the pool,
        its failure given to `on_error` as bolt's error handler would be."""

        def taken(
            ack: Callable[..., None], body: dict[str, Any], respond: Any, context: BoltContext
        ) -> None:
            ack()
            if not self._taken.acquire(blocking=False):
                log.warning("a click answered busy: %s clicks are being worked on", self.bound)
                tell(respond, answers_texts.clicks_busy(self.bound))
                return
            self._pool.submit(self._run, listener, on_error, body, respond, context)

        return taken

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)

    def _run(
        self,
        listener: ClickListener,
        on_error: OnError,
        body: dict[str, Any],
        respond: Any,
        context: BoltContext,
    ) -> None:
        try:
            listener(_already_acked, body, respond, context)
        except Exception as e:
            on_error(e, body, respond, log)
        finally:
            self._taken.release()


def _already_acked(*args: Any, **kwargs: Any) -> None:
    """The ack a listener calls: the click was acknowledged before it was taken."""
