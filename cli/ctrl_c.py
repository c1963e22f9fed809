"""Ctrl-C while `joinops migrate` follows its request: a decision, not an accident.

Before the point of no return (the node agent's start) the first Ctrl-C cancels the request as
`joinops cancel` does (cli.cancel_cmd: the same transition, audit entry and words). The engine's
own rule decides a race with the worker: a cancel is refused once the agent has started, and
then the move goes on — the words say so, at which step it is, and how to follow it. Whatever
still runs (a worker putting the node back, the move past that point) is followed on here; a
second Ctrl-C leaves at once, with the same words. A run Ctrl-C was pressed in exits 130.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import redis

from cli import texts
from cli.cancel_cmd import Result, cancel_any
from cli.follow import follow_with, last_event_id, reporter_for
from cli.requests import Requests, operator
from cli.terminal import Reporter
from joinops.requests.plan import STEP_IDS
from joinops.requests.steprecords import Outcome
from joinops.requests.store import Request

EXIT_INTERRUPTED = 130  # the shell's own code for a command ended by SIGINT (128 + 2)


@dataclass(frozen=True)
class Decision:
    words: str
    going_on: bool  # something still runs: followed here until it ends, or Ctrl-C again


@contextmanager
def presses_held() -> Iterator[list[int]]:
    """Ctrl-C while a short step must not be cut in half (a request half made, a cancel half
    done) is counted instead, for the caller to act on once the step is done; a second one
    (Redis hangs, say) still leaves at once (KeyboardInterrupt)."""
    presses: list[int] = []

    def count(number: int, frame: object) -> None:
        presses.append(number)
        if len(presses) > 1:
            raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGINT, count)
    except ValueError:  # not the main thread: no signal arrives here anyway
        yield presses
        return
    try:
        yield presses
    finally:
        signal.signal(signal.SIGINT, previous)


def follow(
    connection: redis.Redis, request_id: str, pressed: bool = False, after: str = "0-0"
) -> int:
    """Follow the request to its end (0 succeeded, 1 not); Ctrl-C, or `pressed` already while
    it was being made, decides instead (EXIT_INTERRUPTED). `after`: the event after which this
    run's events come (a retry's earlier run is history)."""
    with reporter_for(sys.stdout) as reporter:
        if not pressed:
            try:
                return follow_with(reporter, connection, request_id, after)
            except KeyboardInterrupt:
                pass
        return _decided(reporter, request_id)


def _decided(reporter: Reporter, request_id: str) -> int:
    try:
        with presses_held() as presses:
            requests = Requests.open()
            resume = last_event_id(requests.redis, request_id)
            decision = decide(requests, requests.named(request_id))
    except KeyboardInterrupt:  # pressed twice before it was decided
        reporter.note(texts.ctrl_c(texts.left_undecided(request_id)))
        return EXIT_INTERRUPTED
    words = texts.ctrl_c(decision.words)
    try:
        reporter.note(words)
        if presses or not decision.going_on:
            return EXIT_INTERRUPTED
        reporter.note(texts.FOLLOWING_ON)
        follow_with(reporter, requests.redis, request_id, resume)
    except KeyboardInterrupt:
        reporter.note(words)
    return EXIT_INTERRUPTED


def decide(requests: Requests, request: Request) -> Decision:
    """Cancel it if the engine still lets it be cancelled; otherwise say where it goes on."""
    answer = cancel_any(requests, request, operator())
    if answer.result is Result.TOO_LATE and request.kind == "migrate":
        position = _position(requests, request.id)
        return Decision(
            texts.move_continues(request.id, request.node, request.target, position), True
        )
    if answer.result is Result.TOO_LATE:
        return Decision(texts.batch_continues(request.id, list(answer.going_on)), True)
    return Decision(answer.text, answer.result is Result.STOPPING)


def _position(requests: Requests, request_id: str) -> str:
    """The step under way (or the last one done), e.g. `at step 7/8 wait-joined`."""
    records = requests.records.all(request_id)
    begun = [s for s in STEP_IDS if s in records and records[s].outcome is not Outcome.PENDING]
    if not begun:
        return ""
    step = begun[-1]
    done = records[step].outcome is Outcome.SUCCEEDED
    return texts.step_position(STEP_IDS.index(step) + 1, len(STEP_IDS), step, done)
