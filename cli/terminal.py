"""Showing a request's progress in a terminal: the CLI's reporter."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from cli.texts import for_terminal
from joinops.requests.events import Event, EventKind

_MARK = {
    EventKind.STEP_STARTED: "..",
    EventKind.STEP_SUCCEEDED: "ok",
    EventKind.STEP_RETRYING: "!!",
    EventKind.STEP_FAILED: "XX",
    EventKind.PROGRESS: "  ",
    EventKind.STATE: "==",
}


class TerminalReporter:
    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out  # None: whatever sys.stdout is when a line is printed

    def emit(self, event: Event) -> None:
        stamp = time.strftime("%H:%M:%S", time.localtime(event.at or time.time()))
        step = f"[{event.step}] " if event.step else ""
        took = f" ({event.seconds:.1f} s)" if event.seconds >= 0.1 else ""
        state = f"{event.state.upper()}: " if event.kind is EventKind.STATE else ""
        print(
            f"{stamp} {_MARK[event.kind]} {step}{state}{for_terminal(event.text)}{took}",
            file=self.out or sys.stdout,
            flush=True,
        )
