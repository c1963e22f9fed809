"""The words about loans that Slack and the terminal share (plain text, no markup)."""

from __future__ import annotations

from datetime import timedelta

DURATION_EXAMPLES = "90s, 45m, 8h, 2d or 1d12h"


def spell(span: timedelta) -> str:
    """`30 days`, `8 h`, `1 h 30 min`, `45 s`: the largest units, at most two of them."""
    total = round(span.total_seconds())
    parts = []
    for size, unit in ((86400, "day"), (3600, "h"), (60, "min"), (1, "s")):
        count, total = divmod(total, size)
        if count:
            plural = "s" if unit == "day" and count != 1 else ""
            parts.append(f"{count} {unit}{plural}")
    return " ".join(parts[:2]) or "0 s"


def allowed_range(shortest: timedelta, longest: timedelta) -> str:
    return f"a loan lasts from {spell(shortest)} to {spell(longest)}"


def not_a_duration(word: str, shortest: timedelta, longest: timedelta) -> str:
    return (
        f"{word!r} is not a loan duration: give a number and a unit s, m, h or d "
        f"({DURATION_EXAMPLES}); {allowed_range(shortest, longest)}."
    )


def out_of_range(asked: timedelta, shortest: timedelta, longest: timedelta) -> str:
    return f"A loan of {spell(asked)} is not allowed: {allowed_range(shortest, longest)}."


def extension_too_long(longest: timedelta) -> str:
    return f"Not extended: a loan lasts at most {spell(longest)}, extensions included."


def node_gone(node: str, borrower: str) -> str:
    return (
        f"{node} is no longer in {borrower} (moved elsewhere by hand?): there is nothing to "
        "return, and the loan is closed."
    )


def gone(detail: str) -> str:
    """A cluster of the loan is no longer configured (the return cannot even be checked)."""
    return (
        f"The return cannot be made: {detail.rstrip('.')} (was its kubeconfig file removed from "
        "the hosts directory, or its entry from clusters:?)."
    )


def refused_return(reasons: str, home: str) -> str:
    return (
        f"{reasons} The node stays lent and the loan is listed as overdue: fix what is named "
        f"above (or give {home} back what it lost), then press Return now again."
    )


def return_failed(outcome: str) -> str:
    return (
        f"The return did not finish: {outcome} The loan is listed as overdue; once the cause "
        "is fixed, press Return now again."
    )


def return_not_approved(state: str) -> str:
    return f"The return was {state}; the node stays lent and the loan is listed as overdue."
