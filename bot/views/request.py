"""A migration request's message: the request record (or a refused ask and its verdict) → a
`RequestView`.

Stored with the request (`extra`): `findings` (JSON), `versions`, `forced_deletions`, and
`status`, the running line the relay keeps current; `cancelled_by`, `retried_by` say who did
that.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from bot.texts import request as request_texts
from bot.views.closing import ClosingView, approve_confirm, cancel_confirm, closing_of
from bot.views.loan_field import loan_field
from joinops.requests.asks import MigrationAsk
from joinops.requests.lifecycle import State
from joinops.requests.plan import plan_steps
from joinops.requests.store import Request
from joinops.rules.check import Verdict
from joinops.rules.findings import stored_findings


@dataclass(frozen=True)
class RequestView:
    """What one request message shows, worded."""

    fallback: str  # the notification text
    header: str
    fields: tuple[str, ...]
    versions: str
    findings: tuple[str, ...]
    plan: str
    closing: ClosingView


def findings_json(verdict: Verdict) -> str:
    return stored_findings(verdict)


def _stored_findings(request: Request) -> list[tuple[str, str]]:
    try:
        raw = json.loads(request.extra.get("findings") or "[]")
    except ValueError:
        return []
    return [(str(sev), str(text)) for sev, text in raw]


def _int(text: str | None) -> int:
    try:
        return int(text or 0)
    except ValueError:
        return 0


def _plan(ask: MigrationAsk) -> str:
    """The steps it takes (the same with or without `force`)."""
    steps = plan_steps(MigrationAsk(ask.node, ask.source, ask.target, ask.role))
    return request_texts.plan_lines([step.title for step in steps])


def _findings(findings: list[tuple[str, str]]) -> tuple[str, ...]:
    lines = [request_texts.finding_line(sev, text) for sev, text in findings]
    return tuple(lines or [request_texts.no_findings()])


def _fields(requester: str, ask: MigrationAsk, request_id: str, loan: str = "") -> tuple[str, ...]:
    fields = request_texts.fact_fields(
        requester, ask.node, ask.source, ask.target, str(ask.role), request_id, ask.force
    )
    return (*fields, loan) if loan else tuple(fields)


def refusal_view(requester: str, ask: MigrationAsk, verdict: Verdict) -> RequestView:
    """A refused ask: nothing was stored, nothing waits for approval."""
    return RequestView(
        fallback=request_texts.refused_fallback(requester, ask.node, ask.source, ask.target),
        header=request_texts.refused_header(ask.node, ask.source, ask.target),
        fields=_fields(requester, ask, ""),
        versions=verdict.versions or request_texts.versions_unknown(),
        findings=_findings([(f.severity.name, f.text) for f in verdict.findings]),
        plan=_plan(ask),
        closing=ClosingView(request_id="", status=request_texts.refused_status()),
    )


def request_view(request: Request, approvers: Sequence[str] = ()) -> RequestView:
    """A stored request; `approvers` are mentioned (so notified) while it waits for them."""
    ask = MigrationAsk(request.node, request.source, request.target, request.role, request.force)
    destroys = request_texts.confirm_destroy(request.source) if request.destroys_source else ""
    forced = _int(request.extra.get("forced_deletions"))
    asked = waiting_for(request, approvers)
    return RequestView(
        fallback=request_texts.fallback(
            request.requester, request.node, request.source, request.target, asked
        ),
        header=request_texts.header(request.node, request.source, request.target),
        fields=_fields(request.requester, ask, request.id, loan_field(request.extra, ask.source)),
        versions=request.extra.get("versions") or request_texts.versions_unknown(),
        findings=_findings(_stored_findings(request)),
        plan=_plan(ask),
        closing=closing_of(
            request,
            status_line(request, asked),
            approve_confirm(destroys, forced),
            cancel_confirm(
                request_texts.confirm_cancel_title(request.node),
                request_texts.confirm_cancel(request.node, request.source),
                request_texts.confirm_cancel_yes(),
            ),
        ),
    )


def waiting_for(request: Request, approvers: Sequence[str]) -> Sequence[str]:
    """Whom the message mentions: the approvers while the request waits for them."""
    return approvers if request.state is State.PENDING else ()


def status_line(request: Request, approvers: Sequence[str] = ()) -> str:
    """The one line at the bottom of a migration's message."""
    state = request.state
    if state is State.PENDING:
        retry = bool(request.extra.get("retried_by"))
        return request_texts.waiting_status(request.expires_at, retry=retry, approvers=approvers)
    if state is State.APPROVED:
        return request_texts.queued_status()
    if state is State.RUNNING:
        return request.extra.get("status") or request_texts.queued_status()
    if state is State.SUCCEEDED:
        return request_texts.succeeded_status(request.outcome)
    if state is State.FAILED:
        return request_texts.failed_status(request.failed_step)
    if state is State.RETURNED:
        return request_texts.returned_status()
    if state is State.CANCELLED:
        if request.outcome:
            return request_texts.cancelled_status()
        return request_texts.cancelling_status()
    if state is State.REJECTED:
        return request_texts.rejected_status()
    return request_texts.expired_status()
