"""The logs: JSON lines for a collector, readable lines for a person at a terminal; the request
id on every line logged while a request is handled.

`--log-format json|text` chooses; without it, a terminal (stderr is a tty) gets text lines
(`10:04:41 INFO    req-1a2b3c4d drained a-w-1`) and anything else (a pipe, a file, a log
collector) JSON objects.
"""

from __future__ import annotations

import contextvars
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from pythonjsonlogger.json import JsonFormatter

current_request: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")


def json_wanted(log_format: str | None, stream: TextIO | None = None) -> bool:
    """`--log-format`'s choice; none given: JSON unless `stream` (stderr) is a terminal."""
    if log_format:
        return log_format == "json"
    stream = sys.stderr if stream is None else stream
    return not stream.isatty()


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = current_request.get()
        return True


class TextFormatter(logging.Formatter):
    """One line for a person: time, level, the request id (when a request is handled), message."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(request)s%(message)s", "%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        request_id = getattr(record, "request_id", "")
        record.request = f"{request_id} " if request_id else ""
        return super().format(record)


def configure(level: str = "INFO", json_lines: bool = True) -> None:
    """Log to stderr: one JSON object per line, or `TextFormatter`'s lines (see `json_wanted`)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RequestIdFilter())
    if json_lines:
        handler.setFormatter(
            JsonFormatter(
                "%(asctime)s %(levelname)s %(name)s %(request_id)s %(message)s",
                rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            )
        )
    else:
        handler.setFormatter(TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("urllib3").setLevel("ERROR")  # its retry warnings repeat our own lines
    # "Task queue depth is N" on every request of a burst the HTTP threads did not take at
    # once: a few ms of queueing each, and a line each cost the bot 13 % of its CPU in a burst
    # of 25 concurrent /join (bench ack, py-spy). The ack latency shows what queueing costs.
    logging.getLogger("waitress.queue").setLevel("ERROR")


@contextmanager
def request_context(request_id: str) -> Iterator[None]:
    token = current_request.set(request_id)
    try:
        yield
    finally:
        current_request.reset(token)
