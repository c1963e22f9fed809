"""Loans on the job side: opening a loan when its move succeeds, the reminder, the return.

- `after_run` (after every migration job): a lending move that succeeded opens its loan and
  schedules its reminder and return; a return that ended settles its loan.
- `remind` and `return_due` are the scheduled jobs (joinops.loans.schedule).
- `sweep` (the recovery loop, every `timeouts.lock / 2`) does whatever is due and was not done:
  a scheduled job lost with a killed worker, or a return whose request a killed worker had
  claimed but not made.

Exactly once: the reminder and the return are each claimed by a compare-and-set on the loan (for
one generation of its due time); the return's request id is fixed by that claim, and the request
is made under a lease, so a return is made once however many workers and sweeps race for it.
The return itself is an ordinary migration: its runs are resumed as every migration's are.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from joinops.errors import ConfigError, UsageError
from joinops.loans import texts as loan_texts
from joinops.loans.model import Loan, LoanState
from joinops.loans.schedule import schedule
from joinops.loans.store import LoanStore
from joinops.queue import enqueue_migration
from joinops.requests.asks import MigrationAsk
from joinops.requests.audit import Action
from joinops.requests.events import Event, EventKind
from joinops.requests.ids import new_request_id
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.requests.store import Request
from joinops.rules.check import Verdict, check
from joinops.rules.findings import refusals, stored_findings
from joinops.rules.refusal_now import refusal_now
from workers import context
from workers.context import EngineContext

log = logging.getLogger(__name__)

NODE_MISSING = "node-missing"  # the finding code of a node its cluster does not have
NEVER_LENT = (State.CANCELLED, State.REJECTED, State.EXPIRED)  # a failed move may be retried
MIN_LEASE = timedelta(seconds=10)


def loans_of(ctx: EngineContext) -> LoanStore:
    return LoanStore(ctx.redis, ctx.clock)


# ---- the jobs --------------------------------------------------------------------------------


def remind(loan_id: str, generation: int) -> str:
    return send_reminder(context.current(), loan_id, generation)


def return_due(loan_id: str, generation: int) -> str:
    return start_return(context.current(), loan_id, generation)


def after_run(ctx: EngineContext, request_id: str) -> None:
    """A migration job ended: a loan it lends opens, a loan it returns is settled."""
    request = ctx.store.get(request_id)
    if request is None:
        return
    loans = loans_of(ctx)
    returned = request.extra.get("return_of", "")
    if returned:
        loan = loans.get(returned)
        if loan is not None:
            settle_return(ctx, loan, request)
    loan = loans.get(request_id)
    if loan is not None and loan.state is LoanState.LENDING:
        settle_lending(ctx, loan, request)


# ---- lending ---------------------------------------------------------------------------------


def settle_lending(ctx: EngineContext, loan: Loan, request: Request) -> None:
    loans = loans_of(ctx)
    if request.state is State.SUCCEEDED:
        channel, thread_ts = _thread_of(ctx, request)
        opened = loans.activate(loan.id, _approver_of(ctx, request), channel, thread_ts)
        if opened is None:
            return
        schedule(ctx.redis, opened)
        _record(ctx, Action.LENT, opened, f"for {_span(opened)}, back at {_utc(opened.due_at)}")
        _emit(ctx, opened, "lent")
    elif request.state in NEVER_LENT:
        reason = f"the move was {request.state}"
        closed = loans.not_lent(loan.id, reason)
        if closed is not None:
            _record(ctx, Action.LOAN_CLOSED, closed, f"never lent: {reason}")


def _approver_of(ctx: EngineContext, request: Request) -> str:
    """Whose approval covers the return: the move's approver (a batch node: its batch's)."""
    if request.decided_by or not request.parent:
        return request.decided_by
    batch = ctx.store.get(request.parent)
    return batch.decided_by if batch is not None else ""


def _thread_of(ctx: EngineContext, request: Request) -> tuple[str, str]:
    """Where the loan's messages go: the request's thread, or its batch's."""
    if request.parent:
        batch = ctx.store.get(request.parent)
        if batch is not None:
            return batch.channel, batch.message_ts
    return request.channel, request.message_ts


# ---- the reminder ----------------------------------------------------------------------------


def send_reminder(ctx: EngineContext, loan_id: str, generation: int) -> str:
    loan = loans_of(ctx).get(loan_id)
    if loan is None or ctx.clock() < loan.remind_at:
        return "not due"
    claimed = loans_of(ctx).claim_reminder(loan_id, generation)
    if claimed is None:
        return "not due"  # reminded already, extended since, or no longer active
    _record(ctx, Action.REMINDED, claimed, f"back at {_utc(claimed.due_at)}")
    _emit(ctx, claimed, "reminder")
    return "reminded"


# ---- the return ------------------------------------------------------------------------------


def start_return(ctx: EngineContext, loan_id: str, generation: int) -> str:
    """Claim the due return of `generation` (once) and make its request."""
    claimed = loans_of(ctx).claim_return(loan_id, generation, new_request_id())
    if claimed is None:
        return "not due"
    return carry_out(ctx, loan_id)


def carry_out(ctx: EngineContext, loan_id: str) -> str:
    """A claimed return: make its request if nobody has, or settle the loan if it ended."""
    loans = loans_of(ctx)
    lease = max(ctx.settings.timeouts.lock, MIN_LEASE).total_seconds()
    if not loans.lease(loan_id, lease):
        return "busy"
    try:
        loan = loans.get(loan_id)
        if loan is None or loan.state is not LoanState.RETURNING:
            return "not returning"
        request = ctx.store.get(loan.return_request)
        if request is None:
            return _make_return(ctx, loan)
        if request.state.is_terminal:
            settle_return(ctx, loan, request)
            return str(request.state)
        if not ctx.redis.get(_announced_key(request.id)):
            _emit(ctx, loan, "returning")  # a worker died between making and announcing it
            ctx.redis.set(_announced_key(request.id), "1", ex=30 * 86400)
        return "returning"
    finally:
        loans.release(loan_id)


def _announced_key(request_id: str) -> str:
    return f"joinops:loan-announced:{request_id}"


def _make_return(ctx: EngineContext, loan: Loan) -> str:
    ask = MigrationAsk(loan.node, loan.borrower, loan.home, Role(loan.home_role))
    try:
        verdict = check(
            ask,
            ctx.clusters.get(ask.source),
            ctx.clusters.get(ask.target),
            agent_namespace=ctx.settings.agent.namespace,
            agent_image=ctx.settings.agent.image,
        )
    except ConfigError as e:
        return _overdue(ctx, loan, loan_texts.refused_return(str(e), loan.home))
    except UsageError as e:  # a cluster of the loan is gone (its hosts file removed, say)
        return _overdue(ctx, loan, loan_texts.refused_return(loan_texts.gone(str(e)), loan.home))
    if not verdict.allowed:
        if any(f.code == NODE_MISSING for f in refusals(verdict.findings)):
            return _close_gone(ctx, loan)
        return _overdue(ctx, loan, loan_texts.refused_return(refusal_now(verdict), loan.home))
    request = ctx.store.create(_return_request(ctx, loan, verdict))
    waits = request.state is State.PENDING
    detail = "waits for an approver" if waits else f"approved by {loan.approver}'s approval"
    _record(ctx, Action.RETURNING, loan, f"return request {request.id}: {detail}")
    _emit(ctx, loan, "returning")
    ctx.redis.set(_announced_key(request.id), "1", ex=30 * 86400)
    if not waits:  # one that waits expired by its deadline, recorded with it
        enqueue_migration(ctx.redis, ctx.settings, request.id)
    return "returning"


def _return_request(ctx: EngineContext, loan: Loan, verdict: Verdict) -> Request:
    now = ctx.clock()
    waits = ctx.settings.policy.loan_returns_need_approval
    return Request(
        id=loan.return_request,
        node=loan.node,
        source=loan.borrower,
        target=loan.home,
        role=Role(loan.home_role),
        state=State.PENDING if waits else State.APPROVED,
        requester=loan.requester,
        channel=loan.channel,
        created_at=now,
        expires_at=now + ctx.settings.timeouts.approval.total_seconds() if waits else 0.0,
        decided_by="" if waits else loan.approver,
        decided_at=0.0 if waits else now,
        destroys_source=verdict.destroys_source,
        from_control_plane=bool(verdict.node and verdict.node.is_control_plane),
        extra={
            "return_of": loan.id,
            "thread_ts": loan.thread_ts,
            "findings": stored_findings(verdict),
            "versions": verdict.versions or "",
            "forced_deletions": str(verdict.forced_deletions),
        },
    )


def settle_return(ctx: EngineContext, loan: Loan, request: Request) -> None:
    """The return request ended: the loan is returned, or overdue."""
    if not request.state.is_terminal:
        return
    if request.state is State.SUCCEEDED:
        ended = loans_of(ctx).end_return(loan.id, request.id, LoanState.RETURNED, "")
        if ended is not None:
            _record(ctx, Action.RETURNED, ended, f"by request {request.id}")
            _emit(ctx, ended, "returned")
        return
    if request.state in (State.FAILED, State.CANCELLED):
        reason = loan_texts.return_failed(request.outcome or str(request.state))
    else:
        reason = loan_texts.return_not_approved(str(request.state))
    ended = loans_of(ctx).end_return(loan.id, request.id, LoanState.OVERDUE, reason)
    if ended is not None:
        _record(ctx, Action.OVERDUE, ended, reason)
        _emit(ctx, ended, "overdue", reason)


def _overdue(ctx: EngineContext, loan: Loan, reason: str) -> str:
    ended = loans_of(ctx).end_return(loan.id, loan.return_request, LoanState.OVERDUE, reason)
    if ended is not None:
        _record(ctx, Action.OVERDUE, ended, reason)
        _emit(ctx, ended, "overdue", reason)
    return "overdue"


def _close_gone(ctx: EngineContext, loan: Loan) -> str:
    reason = loan_texts.node_gone(loan.node, loan.borrower)
    ended = loans_of(ctx).end_return(loan.id, loan.return_request, LoanState.CLOSED, reason)
    if ended is not None:
        _record(ctx, Action.LOAN_CLOSED, ended, reason)
        _emit(ctx, ended, "closed", reason)
    return "closed"


# ---- the sweep -------------------------------------------------------------------------------


def sweep(ctx: EngineContext) -> None:
    """Whatever is due on any open loan and was not done (see the module's docstring)."""
    now = ctx.clock()
    for loan in loans_of(ctx).open_loans():
        try:
            _sweep_one(ctx, loan, now)
        except Exception:  # one loan's trouble must not hold up the others
            log.exception("loan %s: the sweep failed on it", loan.id)


def _sweep_one(ctx: EngineContext, loan: Loan, now: float) -> None:
    if loan.state is LoanState.LENDING:
        request = ctx.store.get(loan.id)
        if request is not None and request.state.is_terminal:
            settle_lending(ctx, loan, request)
    elif loan.state is LoanState.ACTIVE:
        if now >= loan.remind_at and loan.reminded != loan.generation:
            send_reminder(ctx, loan.id, loan.generation)
        if now >= loan.due_at:
            start_return(ctx, loan.id, loan.generation)
    elif loan.state is LoanState.RETURNING:
        carry_out(ctx, loan.id)


# ---- records ---------------------------------------------------------------------------------


def _utc(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _span(loan: Loan) -> str:
    return loan_texts.spell(timedelta(seconds=loan.due_at - loan.lent_at))


def _record(ctx: EngineContext, action: Action, loan: Loan, detail: str) -> None:
    ctx.audit.record(
        action,
        "joinops",
        None,
        detail,
        request_id=loan.id,
        node=loan.node,
        source=loan.home,
        target=loan.borrower,
    )


def _emit(ctx: EngineContext, loan: Loan, what: str, text: str = "") -> None:
    ctx.reporter.emit(Event(loan.id, EventKind.LOAN, text, state=what, at=ctx.clock()))
