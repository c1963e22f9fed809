"""Loans in Slack: the thread's lines, the reminder and its buttons, `/join loans`.

The words Slack and the terminal share (durations, ranges, why a return is refused) are in
`joinops.loans.texts`; this module puts them in Slack's mrkdwn.
"""

from __future__ import annotations

from datetime import timedelta

from bot.texts.common import COMMAND, at, user
from joinops.loans.texts import spell

USAGE_LOAN = f"{COMMAND} NODE from SOURCE to TARGET [as ROLE] for DURATION"
USAGE_LOANS = f"{COMMAND} loans"
EXTEND = "Extend 4h"
RETURN_NOW = "Return now"


def loan_field(length: timedelta, home: str) -> str:
    """The request message's field for a loan."""
    return f"*Loan*\n{spell(length)}, then back to {home}"


def return_field(loan_id: str) -> str:
    return f"*Returns the loan of*\n`{loan_id}`"


def lent(node: str, home: str, borrower: str, due_at: float, lead: timedelta) -> str:
    return (
        f":hourglass_flowing_sand: Lent to {borrower} until {at(due_at)}: then `{node}` "
        f"moves back to {home}. A reminder comes here {spell(lead)} before."
    )


def reminder(node: str, home: str, borrower: str, due_at: float, requester: str) -> str:
    return (
        f":alarm_clock: {user(requester)} the loan of `{node}` to {borrower} ends at "
        f"{at(due_at)}: then it moves back to {home}. *{EXTEND}* keeps it longer; "
        f"*{RETURN_NOW}* moves it back now."
    )


def reminder_fallback(node: str, home: str) -> str:
    return f"The loan of {node} ends soon: it moves back to {home}."


def extended(node: str, by: timedelta, who: str, due_at: float) -> str:
    return (
        f":fast_forward: {user(who)} extended the loan of `{node}` by {spell(by)}: "
        f"it moves back at {at(due_at)}."
    )


def return_asked(node: str, home: str, who: str) -> str:
    return (
        f":leftwards_arrow_with_hook: {user(who)} asked for `{node}` back: it moves to {home} now."
    )


def returning(node: str, home: str, approver: str, waits: bool) -> str:
    if waits:
        how = "the return waits for an approver (`policy.loan_returns_need_approval`)"
    else:
        how = f"under {user(approver)}'s approval of the loan" if approver else "as approved"
    return f":leftwards_arrow_with_hook: The loan is up: `{node}` moves back to {home}, {how}."


def returned(node: str, home: str) -> str:
    return f":house: `{node}` is back in {home}; the loan is closed."


def overdue(node: str, reason: str) -> str:
    return f":warning: The loan of `{node}` is overdue. {reason}"


def closed(reason: str) -> str:
    return f":information_source: {reason}"


def overdue_fallback(node: str) -> str:
    return f"The loan of {node} is overdue."


def not_yours(requester: str) -> str:
    return (
        f"Only {user(requester)}, who asked for the loan, or an approver may extend it or ask "
        "for the node back."
    )


def changed_since(state: str, due_at: float) -> str:
    return (
        f"Nothing changed: the loan changed since that message (someone pressed first). It is "
        f"{state}, due back at {at(due_at)}."
    )


def not_extendable(state: str) -> str:
    return f"This loan is {state}: only an active loan can be extended."


def not_returnable(state: str) -> str:
    return f"This loan is {state}: there is nothing to move back now."


def unknown_loan(loan_id: str) -> str:
    return f"I have no loan `{loan_id}`. `{USAGE_LOANS}` lists the loans."


def status_line(state: str, home: str, due_at: float, reason: str) -> str:
    if state == "lending":
        return f"*Loan*: starts when the move succeeds; then back to {home}."
    if state in ("active", "returning"):
        return f"*Loan*: {state}, back to {home} at {at(due_at)}."
    return f"*Loan*: {state}. {reason}".rstrip()


def list_title(count: int) -> str:
    return f"*Loans ({count})*"


def list_empty() -> str:
    return "No node is lent at the moment."


def list_line(
    loan_id: str, node: str, home: str, borrower: str, state: str, due_at: float, requester: str
) -> str:
    return (
        f"• `{loan_id}` `{node}`: lent by {home} to {borrower}, {state}, back at {at(due_at)}, "
        f"asked by {user(requester)}"
    )


def help_entries() -> list[tuple[str, str]]:
    return [
        (USAGE_LOAN, "lend a node for a while (90s, 45m, 8h, 2d): it moves back to SOURCE then"),
        (USAGE_LOANS, "list the loans: active, being returned, overdue"),
    ]
