"""Following a request at the terminal: its events as lines, until it ends."""

from __future__ import annotations

import sys
from typing import TextIO

import redis

from cli import texts
from cli.terminal import Reporter, TerminalReporter
from joinops.requests.events import REQUEST_STREAM, RedisEventLog
from joinops.requests.lifecycle import State
from joinops.requests.store import RequestStore

WAITING_HINT_AFTER = 10  # idle seconds with no worker on the job before saying so


def follow(connection: redis.Redis, request_id: str, after: str = "0-0") -> int:
    """Print the request's events until it ends; 0 when it succeeded.

    The hint that no worker runs the job is printed once, and only while no worker has taken it
    (no event from a worker yet, the request still approved): a long quiet step is not idleness.
    `after`: an event id (see `last_event_id`) after which this run's events come.
    At a terminal the step under way is one line redrawn in place (cli.live); otherwise every
    event is a line.
    """
    with reporter_for(sys.stdout) as reporter:
        return follow_with(reporter, connection, request_id, after)


def follow_with(
    reporter: Reporter, connection: redis.Redis, request_id: str, after: str = "0-0"
) -> int:
    """`follow`, shown by `reporter` (cli.ctrl_c goes on with the same one after a Ctrl-C)."""
    idle, hinted, taken = 0, False, False
    for event in RedisEventLog(connection).follow(request_id, after=after):
        if event is None:
            idle += 1
            if not (taken or hinted) and idle >= WAITING_HINT_AFTER:
                taken = _taken(connection, request_id)
                if not taken:
                    reporter.note(texts.NO_WORKER)
                    hinted = True
            continue
        idle = 0
        taken = taken or event.kind != "state" or event.state != str(State.APPROVED)
        reporter.emit(event)
        if event.is_final:
            return 0 if event.state == State.SUCCEEDED else 1
    return 1


def reporter_for(out: TextIO) -> Reporter:
    """A live line when `out` is a terminal, plain lines otherwise."""
    if out.isatty():
        from cli.live import LiveReporter  # rich loads only where it is used

        return LiveReporter(out)
    return TerminalReporter(out)


def _taken(connection: redis.Redis, request_id: str) -> bool:
    request = RequestStore(connection).get(request_id)
    return request is not None and request.state is not State.APPROVED


def last_event_id(connection: redis.Redis, request_id: str) -> str:
    """The id of the request's newest event so far: a rerun is followed from there."""
    newest = connection.xrevrange(REQUEST_STREAM + request_id, count=1)
    if not newest:
        return "0-0"
    entry_id = newest[0][0]
    return entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
