"""Where a request was asked for: Slack or the terminal. Its texts name that surface's commands
(`/join retry ID` in Slack, `joinops retry ID` at the terminal), so no surface rewrites another's.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

TERMINAL_USER_PREFIX = "cli:"  # requesters at the terminal are `cli:USER` (audited so)


class Surface(StrEnum):
    SLACK = "/join"
    TERMINAL = "joinops"


def terminal_user(login: str) -> str:
    return f"{TERMINAL_USER_PREFIX}{login}"


def surface_of(request: Any) -> Surface:
    """The surface `request` came from, by its requester."""
    requester = str(getattr(request, "requester", "") or "")
    return Surface.TERMINAL if requester.startswith(TERMINAL_USER_PREFIX) else Surface.SLACK


def command(request: Any, verb: str) -> str:
    """`verb` (retry, status, cancel) for `request` as its surface spells it, in backticks."""
    return f"`{surface_of(request)} {verb} {request.id}`"
