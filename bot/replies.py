"""What the relay says in a request's thread for one event, and the status line of a step."""

from __future__ import annotations

from bot.context import BotContext
from bot.texts import request as request_texts
from joinops.requests.events import Event, EventKind
from joinops.requests.plan import STEP_IDS
from joinops.requests.store import Request


def step_place(step: str) -> tuple[int, int]:
    """(number, total) of a migration step; (0, total) for a step the plan does not list."""
    total = len(STEP_IDS)
    return (STEP_IDS.index(step) + 1 if step in STEP_IDS else 0), total


def running_line(event: Event) -> str:
    number, total = step_place(event.step)
    return request_texts.running_status(number, total, event.step, event.text)


def reply_for(event: Event, request: Request, ctx: BotContext) -> str | None:
    """The thread reply for one event, or None when it only changes the status line."""
    kind, step = event.kind, event.step
    if kind is EventKind.STEP_STARTED:
        number, total = step_place(step)
        return request_texts.step_started(number, total, step, event.text)
    if kind is EventKind.STEP_SUCCEEDED:
        return request_texts.step_succeeded(step, event.text, event.seconds)
    if kind is EventKind.STEP_RETRYING:
        return request_texts.step_retrying(step, event.text)
    if kind is EventKind.STEP_FAILED:
        return request_texts.step_failed(step, event.text)
    if kind is not EventKind.STATE:
        return None
    state, requester, at = event.state, request.requester, event.at or ctx.clock()
    if state == "approved":
        return request_texts.approved_reply(request.decided_by, at, requester)
    if state == "pending":
        retried_by = request.extra.get("retried_by", "")
        return request_texts.retry_reply(retried_by, at, ctx.settings.approvers)
    if state == "rejected":
        return request_texts.rejected_reply(request.decided_by, at, requester)
    if state == "succeeded":
        return request_texts.succeeded_reply(requester, event.text)
    if state == "failed":
        return request_texts.failed_reply(requester, event.text)
    if state == "cancelled":
        return request_texts.cancelled_reply(
            requester, event.text, request.extra.get("cancelled_by", "")
        )
    if state == "expired":
        return request_texts.expired_reply(requester, ctx.settings.timeouts.approval)
    return None
