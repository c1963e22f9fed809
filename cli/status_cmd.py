"""`joinops status [ID]`: one request, its steps and its outcome (default: the latest request)."""

from __future__ import annotations

import argparse
import time
from typing import Any

from cli import texts
from cli.requests import Requests, children, request_id
from joinops.loans.store import LoanStore
from joinops.requests.plan import STEP_IDS
from joinops.requests.steprecords import StepRecord
from joinops.requests.store import Request

EXIT_NOT_FOUND = 1


def register(sub: Any) -> None:
    p = sub.add_parser("status", help="a request's state, steps and outcome (default: the latest)")
    p.add_argument("request_id", metavar="ID", nargs="?", type=request_id, help="e.g. req-1a2b3c4d")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    requests = Requests.open()
    if args.request_id:
        request = requests.named(args.request_id)
    else:
        latest = requests.store.recent(1)
        if not latest:
            print(texts.no_requests())
            return EXIT_NOT_FOUND
        request = latest[0]
    print(render(request, requests.records.all(request.id), children(requests.store, request)))
    loan = LoanStore(requests.redis).get(request.id)
    if loan is not None:
        print(texts.loan_status(str(loan.state), loan.home, _when(loan.due_at), loan.reason))
    return 0


def render(request: Request, records: dict[str, StepRecord], children: list[Request]) -> str:
    lines = [headline(request)]
    lines.append(f"  asked by {request.requester or '?'} at {_when(request.created_at)}")
    if request.kind == "migrate":
        lines.extend(_step_line(records[s]) for s in STEP_IDS if s in records)
    lines.extend(f"  - {headline(child)}" for child in children)
    if request.outcome:
        lines.append(f"  {request.outcome}")
    return "\n".join(lines)


def headline(request: Request) -> str:
    """One line: id, state, what moves where."""
    what = (
        f"`{request.node}` {request.source} -> {request.target} as {request.role}"
        if request.kind == "migrate"
        else f"{request.kind} {request.node or ''} -> {request.target}".replace("  ", " ")
    )
    forced = " (forced)" if request.force else ""
    return f"{request.id} {str(request.state).upper()}: {what}{forced}"


def _step_line(record: StepRecord) -> str:
    took = f" ({record.seconds:.1f} s)" if record.seconds >= 0.1 else ""
    text = f": {record.message}" if record.message else ""
    return f"  [{record.step}] {record.outcome}{took}{text}"


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at)) if at else "?"
