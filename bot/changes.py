"""`/join cancel` and `/join retry` of one request (a batch answers them itself, `bot.batch`)."""

from __future__ import annotations

from bot import parsed
from bot.batch import KIND as BATCH
from bot.batch import Batches
from bot.context import BotContext
from bot.invocation import Invocation
from bot.message import RequestMessages
from bot.texts import answers as answers_texts
from bot.texts import batch as batch_texts
from bot.texts import ignition as ignition_texts
from joinops.ignition import request as ir
from joinops.queue import enqueue_batch_advance, schedule_expiry
from joinops.requests import cancel_texts
from joinops.requests.audit import Action
from joinops.requests.events import Event, EventKind
from joinops.requests.lifecycle import State
from joinops.requests.outcome_texts import cancelled as cancelled_outcome
from joinops.requests.store import Request
from joinops.requests.surface import Surface


class Changes:
    def __init__(self, ctx: BotContext, msgs: RequestMessages, batches: Batches) -> None:
        self.ctx = ctx
        self.messages = msgs
        self.batches = batches

    def _request_for(self, inv: Invocation, request_id: str, action: str) -> Request | None:
        """The request `inv.user` may `action`, or None once they were told why not."""
        request = self.ctx.store.get(request_id)
        if request is None:
            inv.tell(answers_texts.unknown_request(request_id))
            return None
        if not self.ctx.may_act_on(inv.user, request.requester):
            self.ctx.audit.record(Action.DENIED, inv.user, request, f"{action}: not the requester")
            inv.tell(answers_texts.not_allowed_to(action, request.id))
            return None
        return request

    def cancel(self, inv: Invocation, command: parsed.Cancel) -> None:
        ctx = self.ctx
        request = self._request_for(inv, command.request_id, "cancel")
        if request is None:
            return
        if request.kind == BATCH:
            inv.tell(self.batches.cancel(inv.user, request))
            return
        if request.kind == ir.KIND and request.state is State.RUNNING:
            inv.tell(ignition_texts.cannot_cancel(request.id))
            return
        moved, before = ctx.store.transition(
            request.id, State.CANCELLED, unless_flag="agent_started", **{"x:cancelled_by": inv.user}
        )
        if not moved:
            current = ctx.store.get(request.id) or request
            if current.state.is_active and current.agent_started:
                inv.tell(
                    cancel_texts.cannot_cancel_agent(
                        request.id, request.node, request.source, request.target, Surface.SLACK
                    )
                )
            else:
                inv.tell(cancel_texts.cannot_cancel_finished(request.id, str(current.state)))
            return
        ctx.audit.record(Action.CANCELLED, inv.user, request, f"was {before}")
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
            inv.tell(cancel_texts.cancelled_now(request.id))
        else:
            inv.tell(
                cancel_texts.cancelling(request.id, request.node, Surface.SLACK)
            )  # the worker rolls back, reports
        self.messages.refresh(request.id)

    def retry(self, inv: Invocation, command: parsed.Retry) -> None:
        ctx = self.ctx
        request = self._request_for(inv, command.request_id, "retry")
        if request is None:
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
