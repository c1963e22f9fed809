"""Structured JSON logs, with the request id on every line logged while a request is handled."""

from __future__ import annotations

import contextvars
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from pythonjsonlogger.json import JsonFormatter

current_request: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = current_request.get()
        return True


def configure(level: str = "INFO", json_lines: bool = True) -> None:
    """Log to stderr: one JSON object per line (or plain text for a terminal)."""
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
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
        )
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
