"""Showing a request's progress as plain lines: every event a line (logs, pipes, CI).

At a terminal `cli.follow` uses `cli.live` instead, which prints the same lines for what is
done and redraws one line for what is under way.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Protocol, TextIO

from joinops.requests.events import Event, EventKind

_MARK = {
    EventKind.STEP_STARTED: "..",
    EventKind.STEP_SUCCEEDED: "ok",
    EventKind.STEP_RETRYING: "!!",
    EventKind.STEP_FAILED: "XX",
    EventKind.PROGRESS: "  ",
    EventKind.STATE: "==",
}


def line(event: Event) -> str:
    """One event as a plain line: time, mark, step, what happened, how long it took."""
    stamp = time.strftime("%H:%M:%S", time.localtime(event.at or time.time()))
    step = f"[{event.step}] " if event.step else ""
    took = f" ({event.seconds:.1f} s)" if event.seconds >= 0.1 else ""
    state = f"{event.state.upper()}: " if event.kind is EventKind.STATE else ""
    return f"{stamp} {_MARK[event.kind]} {step}{state}{event.text}{took}"


class Reporter(Protocol):
    """What `cli.follow` shows a request's events with; used as a context manager."""

    def __enter__(self) -> Reporter: ...

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    def emit(self, event: Event) -> None: ...

    def note(self, text: str) -> None: ...


class TerminalReporter:
    """Every event as a line, as it comes."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out  # None: whatever sys.stdout is when a line is printed

    def __enter__(self) -> TerminalReporter:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def emit(self, event: Event) -> None:
        self.note(line(event))

    def note(self, text: str) -> None:
        print(text, file=self.out or sys.stdout, flush=True)
