"""`joinops loans [--json]`: the lent nodes — active, being returned, overdue — soonest first."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from typing import Any

import redis

from cli import texts
from joinops.loans.model import Loan, LoanState
from joinops.loans.store import LoanStore
from joinops.settings import Secrets


def register(sub: Any) -> None:
    p = sub.add_parser("loans", help="the lent nodes: active, being returned, overdue")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    loans = LoanStore(redis.Redis.from_url(Secrets().redis_url)).listed()
    if not loans and not args.json:
        print(texts.no_loans())
    for loan in loans:
        print(json.dumps(asdict(loan)) if args.json else render(loan))
    return 0


def render(loan: Loan) -> str:
    due = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(loan.due_at))
    line = texts.loan_line(
        loan.id, loan.node, loan.home, loan.borrower, str(loan.state), due, loan.requester
    )
    if loan.state is LoanState.OVERDUE and loan.reason:
        line += "\n" + texts.loan_reason(loan.reason)
    return line
