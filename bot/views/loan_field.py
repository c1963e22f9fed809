"""The field a request message (one node, or a batch) shows for a loan or a loan's return."""

from __future__ import annotations

from datetime import timedelta

from bot.texts import loans as loan_texts
from joinops.loans.lend import LOAN_SECONDS


def loan_field(request_extra: dict[str, str], home: str) -> str:
    """The request message's field for a loan, or ""."""
    seconds = request_extra.get(LOAN_SECONDS)
    if seconds:
        return loan_texts.loan_field(timedelta(seconds=float(seconds)), home)
    returned = request_extra.get("return_of")
    return loan_texts.return_field(returned) if returned else ""
