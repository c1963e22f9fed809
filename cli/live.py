"""The live progress line of `joinops migrate` at a terminal (rich).

Finished steps, retries, failures and outcomes print as lines, as without a terminal; the step
under way is one line below them, redrawn in place: its number of all the steps (3/7), what it
is doing (the drain: pods gone of those to move) and the time since following began.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from rich.console import Console
from rich.live import Live
from rich.text import Text

from cli import texts
from cli.terminal import line
from joinops.requests.events import Event, EventKind
from joinops.requests.plan import STEP_IDS

_IN_PLACE = (EventKind.STEP_STARTED, EventKind.PROGRESS)


class LiveStatus:
    """What the live line says; rendered afresh at each redraw, so the clock moves."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock, self.started = clock, clock()
        self.step, self.detail = "", ""

    def update(self, event: Event) -> None:
        if event.step and event.step != self.step:
            self.step, self.detail = event.step, ""
        if event.kind is EventKind.PROGRESS and event.total:
            self.detail = texts.pods_gone(event.done, event.total)
        elif event.kind is EventKind.PROGRESS:
            self.detail = event.text

    def render(self) -> Text:
        number = STEP_IDS.index(self.step) + 1 if self.step in STEP_IDS else 0
        return Text(
            texts.live_status(number, len(STEP_IDS), self.step, self.detail, self._elapsed()),
            no_wrap=True,
            overflow="ellipsis",
        )

    def _elapsed(self) -> str:
        seconds = int(self.clock() - self.started)
        return f"{seconds // 60}:{seconds % 60:02d}"


class LiveReporter:
    """Lines for what is done, one line redrawn in place for what is under way."""

    def __init__(self, out: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self.console = Console(file=out, highlight=False, markup=False, emoji=False)
        self.status = LiveStatus(clock)
        self._live = Live(
            console=self.console,
            get_renderable=self.status.render,
            refresh_per_second=4,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )

    def __enter__(self) -> LiveReporter:
        self._live.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._live.stop()

    def emit(self, event: Event) -> None:
        self.status.update(event)
        if event.kind not in _IN_PLACE:
            self.note(line(event))
        self._live.refresh()

    def note(self, text: str) -> None:
        self.console.print(text, soft_wrap=True)
