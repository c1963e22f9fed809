"""How the domain's texts name things: lists of names, counts of pods, spans of time."""

from __future__ import annotations

from datetime import timedelta


def named(items: list[str], most: int = 10, quote: bool = True) -> str:
    """`a, b, c`, at most `most` of them, then `and N more`."""
    shown = ", ".join(f"`{item}`" if quote else item for item in items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


def count_pods(count: int) -> str:
    return f"{count} pod" if count == 1 else f"{count} pods"


def minutes(span: timedelta) -> str:
    total = int(span.total_seconds())
    return f"{total // 60} min" if total % 60 == 0 and total >= 60 else f"{total} s"
