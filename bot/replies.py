"""What the relay says in a request's thread for one event (a step's one reply, edited as the
step goes on; a change of state), and the status line of a step."""

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


STEP_EVENTS = frozenset(
    {
        EventKind.STEP_STARTED,
        EventKind.STEP_RETRYING,
        EventKind.STEP_SUCCEEDED,
        EventKind.STEP_FAILED,
    }
)


def step_reply(event: Event) -> str:
    """What a step's one reply says after this event of the step (one of `STEP_EVENTS`)."""
    number, total = step_place(event.step)
    kind, step, text = event.kind, event.step, event.text
    if kind is EventKind.STEP_SUCCEEDED:
        return done_reply(step, text, event.seconds)
    if kind is EventKind.STEP_FAILED:
        return request_texts.step_failed(number, total, step, text)
    if kind is EventKind.STEP_RETRYING:
        return request_texts.step_retrying(number, total, step, text)
    return request_texts.step_running(number, total, step, text)


def done_reply(step: str, text: str, seconds: float) -> str:
    """A step's reply once it succeeded (`text`: what it did)."""
    number, total = step_place(step)
    return request_texts.step_done(number, total, step, text, seconds)


def stopped_reply(step: str, state: str) -> str:
    """A step still shown running when its request ended (`state`)."""
    number, total = step_place(step)
    return request_texts.step_stopped(number, total, step, state)


def reply_for(event: Event, request: Request, ctx: BotContext) -> str | None:
    """The thread reply for a change of the request's state, or None when there is none.

    An approval has none: the root message says who approved, and when, in place of its
    buttons (bot/views/closing.py, `decision_line`), and the first step's reply follows soon.
    A retry has one, mentioning the approvers: only a new message notifies them."""
    if event.kind is not EventKind.STATE:
        return None
    state, requester, at = event.state, request.requester, event.at or ctx.clock()
    if state == "pending":
        retried_by = request.extra.get("retried_by", "")
        return request_texts.retry_reply(retried_by, at, ctx.settings.approvers)
    if state == "rejected":
        return request_texts.rejected_reply(request.decided_by, at, requester)
    if state == "succeeded":
        return request_texts.succeeded_reply(requester, event.text)
    if state == "failed":
        return request_texts.failed_reply(requester, event.text)
    if state == "returned":
        return request_texts.returned_reply(requester, event.text)
    if state == "cancelled":
        return request_texts.cancelled_reply(
            requester, event.text, request.extra.get("cancelled_by", "")
        )
    if state == "expired":
        return request_texts.expired_reply(requester, ctx.settings.timeouts.approval)
    return None
