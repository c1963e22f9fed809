"""A loan → what its messages show: the reminder (with its buttons) and the list of loans."""

from __future__ import annotations

from dataclasses import dataclass

from bot.texts import loans as loan_texts
from bot.views.report import ReportView
from joinops.loans.model import Loan


@dataclass(frozen=True)
class LoanMessageView:
    """A loan's message in its thread; the buttons only while they can be pressed."""

    fallback: str
    text: str
    value: str  # the buttons' value: the loan and the generation of its due time shown
    extend: str = ""  # the Extend button's label ("" : no button)
    return_now: str = ""  # the Return now button's label


def button_value(loan: Loan) -> str:
    """`req-…:3`: a click on a message shown before the loan changed changes nothing."""
    return f"{loan.id}:{loan.generation}"


def reminder_view(loan: Loan) -> LoanMessageView:
    return LoanMessageView(
        fallback=loan_texts.reminder_fallback(loan.node, loan.home),
        text=loan_texts.reminder(loan.node, loan.home, loan.borrower, loan.due_at, loan.requester),
        value=button_value(loan),
        extend=loan_texts.EXTEND,
        return_now=loan_texts.RETURN_NOW,
    )


def overdue_view(loan: Loan, reason: str) -> LoanMessageView:
    """Overdue: Return now tries again once the cause is fixed."""
    return LoanMessageView(
        fallback=loan_texts.overdue_fallback(loan.node),
        text=loan_texts.overdue(loan.node, reason),
        value=button_value(loan),
        return_now=loan_texts.RETURN_NOW,
    )


def pressed_view(loan: Loan, said: str, still_lent: bool) -> LoanMessageView:
    """The reminder once a button was pressed: what it did; while the node stays lent (it was
    extended), the buttons stay too."""
    if not still_lent:
        return LoanMessageView(fallback=said, text=said, value=button_value(loan))
    return LoanMessageView(
        fallback=said,
        text=said,
        value=button_value(loan),
        extend=loan_texts.EXTEND,
        return_now=loan_texts.RETURN_NOW,
    )


def status_line(loan: Loan) -> str:
    """The loan's line under `/join status` of the request that lends the node."""
    return loan_texts.status_line(str(loan.state), loan.home, loan.due_at, loan.reason)


def list_view(loans: list[Loan]) -> ReportView:
    title = loan_texts.list_title(len(loans))
    if not loans:
        return ReportView(title=loan_texts.list_empty(), fallback=title)
    lines = [
        loan_texts.list_line(
            loan.id,
            loan.node,
            loan.home,
            loan.borrower,
            str(loan.state),
            loan.due_at,
            loan.requester,
        )
        for loan in loans
    ]
    return ReportView(title=title, lines=tuple(lines))
