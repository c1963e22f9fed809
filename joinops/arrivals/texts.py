"""The words about arrivals that Slack and the terminal share (plain text, no markup)."""

from __future__ import annotations


def file_gone(file: str) -> str:
    return f"its file {file} is no longer in the directory"


def unseen() -> str:
    return "not recorded by a bot yet (is `joinops serve` running?)"
