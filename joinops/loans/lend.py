"""Lending: a request asked `for DURATION` gets its loan, waiting for the move to succeed."""

from __future__ import annotations

from datetime import timedelta

from joinops.loans.model import Loan
from joinops.loans.store import LoanStore
from joinops.requests.model import Role
from joinops.requests.store import Request, RequestStore

LOAN_SECONDS = "loan_seconds"  # the request's `extra` field: the loan it asks for


def lend(loans: LoanStore, requests: RequestStore, request: Request, length: timedelta) -> Loan:
    """Mark the stored `request` as a loan and store the loan (state `lending`)."""
    seconds = str(length.total_seconds())
    requests.update(request.id, **{"x:" + LOAN_SECONDS: seconds})
    request.extra[LOAN_SECONDS] = seconds
    return loans.propose(loan_of(request, length))


def loan_of(request: Request, length: timedelta) -> Loan:
    """The loan of a request's node: back to its source, in the role it had there."""
    home_role = Role.CONTROL_PLANE if request.from_control_plane else Role.WORKER
    return Loan(
        id=request.id,
        node=request.node,
        home=request.source,
        borrower=request.target,
        home_role=str(home_role),
        requester=request.requester,
        seconds=length.total_seconds(),
    )
