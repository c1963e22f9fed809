"""The Approve and Reject buttons.

Only approvers' clicks get here (bot/access.py filters the others out). Every click is
acknowledged first; then, in order: may they approve their own request, is the request still
pending (and not past its expiry — a late click expires it), do the rules still allow the move.
The pending → approved (or → rejected) switch is one atomic compare-and-set in Redis, so double
clicks, two approvers at once, or a click racing the expiry end in exactly one outcome and at
most one job; every loser is told what happened.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from bot.batch import KIND as BATCH
from bot.batch import Batches
from bot.context import BotContext
from bot.ignition import Ignitions
from bot.message import RequestMessages
from bot.texts import answers as answers_texts
from bot.texts import approval as approval_texts
from bot.texts import request as request_texts
from joinops.errors import ConfigError, NoWorkerAnswered, UsageError
from joinops.ignition import request as ir
from joinops.logs import request_context
from joinops.queue import enqueue_migration
from joinops.requests import outcome_texts
from joinops.requests.asks import MigrationAsk
from joinops.requests.audit import Action
from joinops.requests.events import Event, EventKind
from joinops.requests.ids import is_request_id
from joinops.requests.lifecycle import State
from joinops.requests.store import Request
from joinops.rules.refusal_now import refusal_now

log = logging.getLogger(__name__)

Respond = Callable[..., Any]


def expire_if_due(ctx: BotContext, msgs: RequestMessages, request: Request, now: float) -> bool:
    """A pending request past its expiry expires now (the scheduled job may be late)."""
    if request.state is not State.PENDING or now < request.expires_at:
        return False
    moved, _ = ctx.store.transition(
        request.id, State.EXPIRED, outcome=request_texts.EXPIRED, decided_at=now
    )
    if moved:
        ctx.audit.record(Action.EXPIRED, "joinops", request, "a click came after the expiry")
        ctx.events.emit(
            Event(request.id, EventKind.STATE, request_texts.EXPIRED, state="expired", at=now)
        )
        msgs.refresh(request.id)
    return True


class Approval:
    """`starters` maps a request kind to what starts it once approved; kinds added later
    (Ignition files, batches) register theirs here."""

    def __init__(self, ctx: BotContext) -> None:
        self.ctx = ctx
        self.messages = RequestMessages(ctx)
        self.batches = Batches(ctx, self.messages)
        self.starters: dict[str, Callable[[Request], None]] = {
            "migrate": self._start_migration,
            ir.KIND: Ignitions(ctx, self.messages).start,
            BATCH: self.batches.start,
        }

    # ---- listeners (bolt injects the arguments by name) ------------------------------------

    def on_approve(self, ack: Callable[..., None], body: dict[str, Any], respond: Respond) -> None:
        ack()
        self._click(body, respond, self.approve)

    def on_reject(self, ack: Callable[..., None], body: dict[str, Any], respond: Respond) -> None:
        ack()
        self._click(body, respond, self.reject)

    def _click(
        self,
        body: dict[str, Any],
        respond: Respond,
        decide: Callable[[str, Request], str | None],
    ) -> None:
        user = str(body["user"]["id"])
        request_id = str(body["actions"][0].get("value") or "")
        # a click can come before the record of the message it is on: get_clicked waits for it
        request = self.ctx.store.get_clicked(request_id) if is_request_id(request_id) else None
        if request is None:  # only approvers get here: bot/access.py stands in front
            answer: str | None = answers_texts.unknown_request(request_id)
        else:
            with request_context(request.id):
                answer = decide(user, request)
        if answer:
            _tell(respond, answer)

    # ---- decisions -------------------------------------------------------------------------

    def approve(self, user: str, request: Request) -> str | None:
        ctx = self.ctx
        if (
            user == request.requester
            and not ctx.settings.policy.allow_self_approval
            and request.state is State.PENDING
        ):
            ctx.audit.record(Action.DENIED, user, request, "approving their own request")
            return approval_texts.no_self_approval()
        now = ctx.clock()
        if request.state is not State.PENDING or expire_if_due(ctx, self.messages, request, now):
            return self._already(request.id)
        start = self.starters.get(request.kind)
        if start is None:
            log.error("request %s: no starter for kind %r", request.id, request.kind)
            return answers_texts.internal_error()
        # After the node agent started, the node has left the source: the rules about the source
        # no longer apply (a retry then only waits for the join again, or finishes the clean-up).
        recheck = request.kind == "migrate" and not request.agent_started
        try:
            refused = self._refusal_now(request) if recheck else None
        except NoWorkerAnswered as e:  # nothing decided: the request still waits
            log.warning("request %s: approval re-check: %s", request.id, e)
            return answers_texts.no_worker_answered(e.seconds)
        moved, _ = ctx.store.transition(request.id, State.APPROVED, decided_by=user, decided_at=now)
        if not moved:
            return self._already(request.id)
        approved = f"approved by {user}"
        ctx.audit.record(Action.APPROVED, user, request)
        ctx.events.emit(Event(request.id, EventKind.STATE, approved, state="approved", at=now))
        if refused is not None:
            self._fail_refused(request, refused)
            return approval_texts.refused_at_approval(request.id)
        start(request)
        self.messages.refresh(request.id)
        return None

    def _start_migration(self, request: Request) -> None:
        enqueue_migration(self.ctx.redis, self.ctx.settings, request.id)

    def reject(self, user: str, request: Request) -> str | None:
        ctx = self.ctx
        now = ctx.clock()
        if request.state is not State.PENDING or expire_if_due(ctx, self.messages, request, now):
            return self._already(request.id)
        moved, _ = ctx.store.transition(
            request.id, State.REJECTED, decided_by=user, decided_at=now, outcome="rejected"
        )
        if not moved:
            return self._already(request.id)
        text = f"rejected by {user}"
        if request.kind == BATCH:
            self.batches.close_children(request, State.REJECTED, text)
        ctx.audit.record(Action.REJECTED, user, request)
        ctx.events.emit(Event(request.id, EventKind.STATE, text, state="rejected", at=now))
        self.messages.refresh(request.id)
        return None

    # ---- helpers ---------------------------------------------------------------------------

    def _refusal_now(self, request: Request) -> str | None:
        """Why the move cannot start now (a rule, or a cluster not reached), or None."""
        ask = MigrationAsk(
            request.node, request.source, request.target, request.role, request.force
        )
        try:
            verdict = self.ctx.checks.move(ask)  # on a worker: the bot reads no cluster
        except (ConfigError, UsageError) as e:
            return str(e)
        return None if verdict.allowed else refusal_now(verdict)

    def _fail_refused(self, request: Request, reasons: str) -> None:
        outcome = outcome_texts.failed(
            "check",
            reasons,
            outcome_texts.where_before_agent(request, cordon_restored=False),
        )
        moved, _ = self.ctx.store.transition(
            request.id, State.FAILED, outcome=outcome, failed_step="check"
        )
        if moved:
            self.ctx.audit.record(Action.FAILED, "joinops", request, outcome)
            self.ctx.events.emit(
                Event(request.id, EventKind.STATE, outcome, state="failed", at=self.ctx.clock())
            )
        self.messages.refresh(request.id)

    def _already(self, request_id: str) -> str:
        current = self.ctx.store.get(request_id)
        if current is None:
            return answers_texts.unknown_request(request_id)
        return approval_texts.already_decided(
            str(current.state),
            current.decided_by,
            current.decided_at,
            current.id,
            current.failed_step,
        )


def _tell(respond: Respond, text: str) -> None:
    """An ephemeral answer to the clicker only; the message they clicked stays as it is."""
    try:
        respond(text=text, response_type="ephemeral", replace_original=False)
    except Exception as e:  # the answer is a courtesy; the decision already stands
        log.warning("could not answer a click: %s", e)
