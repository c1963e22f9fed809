"""Cancel and retry of one request (a batch answers them itself, `bot.batch`): `/join cancel
ID` and the request message's Cancel button are one `cancel_by`; `/join retry ID`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from bot import parsed, payloads
from bot.batch import KIND as BATCH
from bot.batch import Batches
from bot.context import BotContext
from bot.invocation import Invocation, Respond
from bot.message import RequestMessages
from bot.render import blocks as render_blocks
from bot.texts import answers as answers_texts
from bot.texts import batch as batch_texts
from bot.texts import ignition as ignition_texts
from joinops.ignition import request as ir
from joinops.logs import request_context
from joinops.queue import enqueue_batch_advance
from joinops.requests import cancel_texts
from joinops.requests.audit import Action
from joinops.requests.events import Event, EventKind
from joinops.requests.expiries import schedule_expiry
from joinops.requests.lifecycle import State
from joinops.requests.outcome_texts import cancelled as cancelled_outcome
from joinops.requests.store import Request
from joinops.requests.surface import Surface

log = logging.getLogger(__name__)


class Changes:
    def __init__(self, ctx: BotContext, msgs: RequestMessages, batches: Batches) -> None:
        self.ctx = ctx
        self.messages = msgs
        self.batches = batches

    def _request_for(self, user: str, request_id: str, action: str) -> Request | str:
        """The request `user` may `action`, or the answer saying why not."""
        request = self.ctx.store.get_clicked(request_id)  # the Cancel button may outrun it
        if request is None:
            return answers_texts.unknown_request(request_id)
        if not self.ctx.may_act_on(user, request.requester):
            self.ctx.audit.record(Action.DENIED, user, request, f"{action}: not the requester")
            return answers_texts.not_allowed_to(action, request.id)
        return request

    # ---- cancel: the command and the button ------------------------------------------------

    def cancel(self, inv: Invocation, command: parsed.Cancel) -> None:
        """`/join cancel ID`."""
        self.cancel_by(inv.user, command.request_id, inv.tell)

    def on_cancel(self, ack: Callable[..., None], body: dict[str, Any], respond: Respond) -> None:
        """The Cancel button of a request message: `/join cancel ID` by whoever clicked, answered
        to them alone (bolt injects the arguments by name)."""
        ack()
        user = str(body["user"]["id"])
        request_id = str(payloads.first_action(body).get("value") or "")  # checked: an id

        def tell(answer: str) -> None:
            try:
                respond(
                    text=answer,
                    blocks=render_blocks.reply(answer),
                    response_type="ephemeral",
                    replace_original=False,
                )
            except Exception as e:  # the answer is a courtesy; the cancel already stands
                log.warning("could not answer a Cancel click from %s: %s", user, e)

        with request_context(request_id):
            self.cancel_by(user, request_id, tell)

    def cancel_by(self, user: str, request_id: str, tell: Callable[[str], None]) -> None:
        """`user` cancels `request_id` (the requester or an approver); `tell` answers them."""
        ctx = self.ctx
        request = self._request_for(user, request_id, "cancel")
        if isinstance(request, str):
            tell(request)
            return
        if request.kind == BATCH:
            tell(self.batches.cancel(user, request))
            return
        if request.kind == ir.KIND and request.state is State.RUNNING:
            tell(ignition_texts.cannot_cancel(request.id))
            return
        moved, before = ctx.store.transition(
            request.id, State.CANCELLED, unless_flag="agent_started", **{"x:cancelled_by": user}
        )
        if not moved:
            current = ctx.store.get(request.id) or request
            if current.state.is_active and current.agent_started:
                tell(
                    cancel_texts.cannot_cancel_agent(
                        request.id, request.node, request.source, request.target, Surface.SLACK
                    )
                )
            else:
                tell(cancel_texts.cannot_cancel_finished(request.id, str(current.state)))
            return
        ctx.audit.record(Action.CANCELLED, user, request, f"was {before}")
        if request.parent:  # a batch's node: the batch goes on without it
            enqueue_batch_advance(ctx.redis, request.parent)
        if before in (State.PENDING, State.APPROVED):
            # No worker runs it (a queued job finds it cancelled and stops): say so ourselves.
            outcome = (
                ignition_texts.cancelled_outcome()
                if request.kind == ir.KIND
                else cancelled_outcome(request)
            )
            ctx.store.update(request.id, outcome=outcome)
            ctx.events.emit(
                Event(request.id, EventKind.STATE, outcome, state="cancelled", at=ctx.clock())
            )
            tell(cancel_texts.cancelled_now(request.id))
        else:  # the worker rolls back, and reports
            tell(cancel_texts.cancelling(request.id, request.node, Surface.SLACK))
        self.messages.refresh(request.id)

    # ---- retry -----------------------------------------------------------------------------

    def retry(self, inv: Invocation, command: parsed.Retry) -> None:
        ctx = self.ctx
        request = self._request_for(inv.user, command.request_id, "retry")
        if isinstance(request, str):
            inv.tell(request)
            return
        if request.kind == BATCH:
            inv.tell(self.batches.retry_answer(request))
            return
        if request.parent:
            inv.tell(batch_texts.member_not_retried(request.id, request.parent))
            return
        if not request.message_ts:
            inv.tell(answers_texts.retry_without_message(request.id))
            return
        now = ctx.clock()
        expires_at = now + ctx.settings.timeouts.approval.total_seconds()
        moved, before = ctx.store.transition(
            request.id,
            State.PENDING,
            expires_at=expires_at,
            decided_by="",
            decided_at=0,
            outcome="",
            **{"x:retried_by": inv.user},
        )
        if not moved:
            inv.tell(answers_texts.retry_only_failed(request.id, str(before or request.state)))
            return
        ctx.audit.record(Action.RETRIED, inv.user, request)
        text = f"retry asked by {inv.user}"
        ctx.events.emit(Event(request.id, EventKind.STATE, text, state="pending", at=now))
        schedule_expiry(ctx.redis, request.id, expires_at)
        self.messages.refresh(request.id)
        inv.tell(answers_texts.retry_asked(request.id))
